#!/usr/bin/env bash
# python/ddpsim/bench/allreduce_bench.py refuses bad flags before starting any rank: one line
# on stderr naming the flag and what it expected, exit 2, no report written.
# Exits 77 (skipped) when PYTHON has no torch.
# Usage: allreduce_bench_bad_flags.sh PYTHON BENCH
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_test_setup.sh"
failed=0
expect() {  # FLAGS... -- EXPECTED_LINE
  local args=() expected
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  expected="$2"
  "$python" "$bench" --out "$scratch/report.json" "${args[@]}" 2> "$scratch/err"
  local code=$? err
  err="$(cat "$scratch/err")"
  if [ "$code" != 2 ] || [ "$err" != "$expected" ] || [ -e "$scratch/report.json" ]; then
    echo "FAIL: ${args[*]}: exit $code, stderr '$err', expected exit 2 and '$expected'" >&2
    failed=1
  else
    echo "ok: ${args[*]}: $err"
  fi
}
expect --world-size 1 -- "allreduce_bench.py: --world-size 1: expected at least 2"
expect --world-size 4 --nnodes 3 -- "allreduce_bench.py: --nnodes 3: expected a divisor of --world-size 4"
expect --world-size 4 --nnodes 0 -- "allreduce_bench.py: --nnodes 0: expected a divisor of --world-size 4"
expect --world-size 4 --nnodes 2 --node-rank 2 --master-port 29614 -- "allreduce_bench.py: --node-rank 2: expected 0..1"
expect --world-size 4 --nnodes 2 -- \
  "allreduce_bench.py: --master-port: expected a port every host agrees on (with --nnodes > 1)"
expect --concurrent 0 -- "allreduce_bench.py: --concurrent 0: expected a positive count (1: off)"
expect --device tpu -- "allreduce_bench.py: --device tpu: expected cpu or cuda"
for sizes in 16867368 1024,1024 1024,abc 1024,1026 0,1024 1024,-4; do
  expect --sizes "$sizes" -- "allreduce_bench.py: --sizes $sizes: expected at least 2 distinct byte counts, comma-separated, each a positive multiple of 4"
done
if "$python" -c "import torch, sys; sys.exit(torch.cuda.is_available())"; then  # no GPU here
  expect --device cuda -- \
    "allreduce_bench.py: --device cuda: expected a visible CUDA GPU, got none (or a CPU build of torch)"
fi
exit $failed
