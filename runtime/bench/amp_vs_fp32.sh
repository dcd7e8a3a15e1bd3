#!/usr/bin/env bash
# AMP (bf16 autocast + loss scaling) vs fp32 DDP on this machine's CPU, and each trace replayed.
#
# 2 ranks of the Fashion-MNIST convnet, interleaved A B B A ... (ROUNDS each); each run writes
# rank 0's step times (iteration 0 excluded) and its trace. compare.py prints each repetition's
# median step, the ratio of the medians bf16/fp32 with its spread over the pairs, and a
# Mann-Whitney test; then `ddp-sim replay` reconstructs the last trace of each (measured vs
# replayed median iteration: a reconstruction, not a prediction).
#
# Usage: runtime/bench/amp_vs_fp32.sh [ROUNDS] [OUT] [-- extra ddp-train flags]
# Default: --model convnet --batch-size 32 --iterations 31 --threads 1 (30 timed steps).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/runtime/bench/bench_common.sh"
build="$(find_build_dir "$root")"
rounds="${1:-3}"
out="${2:-$root/results/bench/amp-vs-fp32}"
shift 2 || shift $#
[[ "${1:-}" == "--" ]] && shift
workload=(--model convnet --batch-size 32 --iterations 31 --threads 1 --quiet "$@")

run() {  # run FILE [ddp-train flags]: one repetition, rank 0's step times to FILE, trace beside
  local file="$1"
  shift
  rm -rf "${file%.json}.trace"
  "$build/bin/ddp-launch" --nproc-per-node 2 --master-port 0 -- \
    "$build/bin/ddp-train" "${workload[@]}" "$@" --step-times "$file.{rank}" \
    --trace-dir "${file%.json}.trace" >/dev/null
  mv "$file.0" "$file" && rm -f "$file".[0-9]*
}
run_a() { run "$1" --amp bf16; }
run_b() { run "$1"; }
interleave "$rounds" "$out" amp-bf16 fp32

for side in a b; do
  trace="$out/$side-$rounds.trace"
  echo "== $side-$rounds: measured, then replayed (reconstruction)"
  "$build/bin/ddp-trace" summary "$trace" | grep -i "iteration" | head -3
  "$build/bin/ddp-sim" replay "$trace" --out "$out/$side-$rounds.replayed" | tail -4
done
