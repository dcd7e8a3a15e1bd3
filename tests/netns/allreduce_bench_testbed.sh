#!/usr/bin/env bash
# python/ddpsim/bench/allreduce_bench.py across testbed hosts (--nnodes): 2 hosts x 2 ranks at
# 200 Mbit/s, busy and idle, one round. Host 0 must report on all 4 ranks: world size 4, a
# bandwidth below 1.1 x the link's 25 MB/s (a fitted slope) and above a tenth of it, and both busy fractions in (0, 1].
# Exits 77 (skipped) without root, namespaces or a PYTHON with torch (the build's DDPSIM_TORCH_PYTHON).
# Usage: allreduce_bench_testbed.sh TESTBED PYTHON BENCH
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: $0 TESTBED PYTHON BENCH" >&2; exit 64; }
testbed="$1" python="$2" bench="$3"
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! reason="$("$testbed" --check 2>&1)"; then echo "SKIP: $reason" >&2; exit 77; fi
"$python" -c "import torch.distributed" 2>/dev/null || { echo "SKIP: $python has no torch.distributed" >&2; exit 77; }

scratch="$(mktemp -d "${TMPDIR:-/tmp}/ddpsim-netns-XXXXXX")"
prefix="ddpsim-ab$$"
trap 'rm -rf "$scratch"' EXIT

host_cmd='GLOO_SOCKET_IFNAME="$TESTBED_IFNAME" exec "$0" "$1" --world-size 4 --nnodes "$TESTBED_HOSTS" \
  --node-rank "$TESTBED_HOST" --master-addr "$TESTBED_MASTER_ADDR" --master-port 29613 --rounds 1 --busy --out "$2"'
"$testbed" run --name "$prefix" --hosts 2 --rate 200mbit --timeout 150 -- \
  bash -c "$host_cmd" "$python" "$bench" "$scratch/bench.json" > "$scratch/run.log" 2>&1
code=$?
cat "$scratch/run.log"
[ "$code" = 0 ] || fail "the bench on 2 hosts exited $code"
left="$("$testbed" leftovers "$prefix")"
[ -z "$left" ] || fail "left behind: $left"
"$python" - "$scratch/bench.json" <<'PY' || fail "expected host 0's report on 4 ranks with a rate under the link's"
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({k: d[k] for k in ("world_size", "ranks_reported", "beta_bytes_per_s", "overlap_bandwidth_fraction",
                                     "compute_fraction_during_allreduce")}))
assert d["world_size"] == 4 and d["ranks_reported"] == 4, (d["world_size"], d["ranks_reported"])
# 200 Mbit/s = 25 MB/s. The rate is a line's slope fitted to one round of sizes, so it may
# come out a little above the link's, hence the 10 % margin; one measured on a single host's
# loopback would be GB/s.
assert 2.5e6 < d["beta_bytes_per_s"] < 1.1 * 25e6, d["beta_bytes_per_s"]
assert 0 < d["overlap_bandwidth_fraction"] <= 1
assert 0 < d["compute_fraction_during_allreduce"] <= 1
PY
echo "PASS: 2 hosts x 2 ranks reported by host 0"
