#!/usr/bin/env bash
# ddp-machine-profile across 2 testbed hosts at 200 Mbit/s (ddp-launch --nnodes 2, one rank a
# host, port 29615), launched as a training job is. Rank 0's profile must hold both ranks, a
# ladder whose 1 MiB all-reduce is paced by the shaped link (a ring all-reduce of B bytes on 2
# ranks sends B bytes each way: at least B / 25 MB/s, and not 3 times more), and a
# profile ddp-sim accepts (--machine on a 2-rank trace).
# On the testbed the hosts share one kernel and one host name, as a trace recorded there does
# (docs/testbed.md): the profile says 1 host with 2 ranks, which is what the trace says too.
# Exits 77 (skipped) without root or namespaces.
# Usage: machine_profile_testbed.sh TESTBED BIN_DIR TRACE
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: $0 TESTBED BIN_DIR TRACE" >&2; exit 64; }
testbed="$1" bin="$2" trace="$3"
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! reason="$("$testbed" --check 2>&1)"; then echo "SKIP: $reason" >&2; exit 77; fi

scratch="$(mktemp -d "${TMPDIR:-/tmp}/ddpsim-netns-XXXXXX")"
prefix="ddpsim-mp$$"
trap 'rm -rf "$scratch"' EXIT

"$testbed" run --name "$prefix" --hosts 2 --rate 200mbit --timeout 150 -- \
  "$bin/ddp-launch" --nnodes {hosts} --node-rank {host} --nproc-per-node 1 --master-addr {master} \
  --master-port 29615 -- "$bin/ddp-machine-profile" --sizes 4K,64K,1M --repeats 4 --warmup 1 \
  --out "$scratch/machine.json" > "$scratch/run.log" 2>&1
code=$?
cat "$scratch/run.log"
[ "$code" = 0 ] || fail "ddp-machine-profile on 2 hosts exited $code"
left="$("$testbed" leftovers "$prefix")"
[ -z "$left" ] || fail "left behind: $left"
[ -s "$scratch/machine.json" ] || fail "rank 0 wrote no profile"
grep -q '"world_size": 2' "$scratch/machine.json" || fail "expected world_size 2 in the profile"
one_mib_s="$(awk '/"bytes": 1048576/ {found = 1} found && /"median_s"/ {gsub(/[",]/, "", $2); print $2; exit}' \
  "$scratch/machine.json")"
[ -n "$one_mib_s" ] || fail "no 1 MiB rung in the ladder"
awk -v t="$one_mib_s" 'BEGIN { floor = 1048576 / 25e6; exit !(t >= 0.9 * floor && t <= 3 * floor) }' ||
  fail "1 MiB all-reduce took $one_mib_s s, expected about $(awk 'BEGIN{print 1048576/25e6}') s on a 200 Mbit/s link"
"$bin/ddp-sim" replay "$trace" --machine "$scratch/machine.json" --iterations 2 > "$scratch/replay.log" 2>&1 ||
  { cat "$scratch/replay.log"; fail "ddp-sim replay --machine refused the testbed's profile"; }
echo "PASS: a profile of 2 testbed hosts, 1 MiB in $one_mib_s s, accepted by ddp-sim"
