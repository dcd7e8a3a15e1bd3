#!/usr/bin/env bash
# The smallest real cluster job: `testbed.sh run` makes 2 hosts (network namespaces on a private
# bridge, 200 Mbit/s links), each host runs ddp-launch --nnodes 2 --node-rank $TESTBED_HOST with
# Gloo bound to $TESTBED_IFNAME; both ranks' traces must validate and `testbed.sh leftovers`
# must list nothing of this test afterwards. Exits 77 (skipped) without root or namespaces.
# Usage: testbed_test.sh TESTBED DDP_LAUNCH DDP_TRAIN DDP_TRACE
set -uo pipefail
[ $# -eq 4 ] || { echo "usage: $0 TESTBED DDP_LAUNCH DDP_TRAIN DDP_TRACE" >&2; exit 64; }
testbed="$1" launch="$2" train="$3" trace_tool="$4"
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! reason="$("$testbed" --check 2>&1)"; then echo "SKIP: $reason" >&2; exit 77; fi

scratch="$(mktemp -d "${TMPDIR:-/tmp}/ddpsim-netns-XXXXXX")"
prefix="ddpsim-tt$$"
trap 'rm -rf "$scratch"' EXIT
trace="$scratch/trace"

# The host command reads the testbed's environment itself (no {placeholders}).
host_cmd='GLOO_SOCKET_IFNAME="$TESTBED_IFNAME" exec "$0" --nnodes "$TESTBED_HOSTS" --node-rank "$TESTBED_HOST" \
  --nproc-per-node 1 --master-addr "$TESTBED_MASTER_ADDR" --master-port 29611 -- "$@"'
start=$SECONDS
"$testbed" run --name "$prefix" --hosts 2 --rate 200mbit --timeout 100 -- \
  bash -c "$host_cmd" "$launch" "$train" --model mlp --width 512 --depth 4 --iterations 10 --batch-size 16 \
  --threads 1 --quiet --trace-dir "$trace" > "$scratch/run.log" 2>&1
code=$?
cat "$scratch/run.log"
[ "$code" = 0 ] || fail "2-host job exited $code"
echo "2-host job took $((SECONDS - start)) s"

left="$("$testbed" leftovers "$prefix")"
[ -z "$left" ] || fail "left behind: $left"

ls "$trace"
"$trace_tool" validate "$trace" || fail "ddp-trace validate $trace"
"$trace_tool" summary --json "$trace" > "$scratch/summary.json" || fail "ddp-trace summary"
python3 - "$scratch/summary.json" <<'PY' || fail "expected a trace of 2 ranks with 10 complete iterations"
import json, sys
d = json.load(open(sys.argv[1]))
print(f"world_size {d['world_size']}, complete iterations {d['num_complete_iterations']}")
sys.exit(0 if d["world_size"] == 2 and d["num_complete_iterations"] == 10 else 1)
PY
echo "PASS: 2 hosts x 1 rank through the testbed; both ranks' traces validate; nothing left behind"
