#!/usr/bin/env bash
# What does tracing cost? ddp-train traced vs --no-trace, 2 ranks, interleaved A B B A ...
#
# Each run writes rank 0's step times (forward + backward with all-reduces + optimizer step, plus
# the tracer's per-iteration flush; iteration 0 excluded). ddpsim-compare prints each
# repetition and the ratio traced/untraced of each pair (goal: <= 1.01): median, IQR, range,
# exact Wilcoxon and sign tests; it writes OUT/compare.json. Wall time on 2 shared cores cannot
# resolve 1 %: runtime/bench/trace_overhead_callgrind.sh counts instructions instead.
#
# Usage: runtime/bench/trace_overhead.sh [ROUNDS] [OUT] [-- extra ddp-train flags]
# Default workload: mlp --width 1024 --depth 4 (16.8 MB of gradients), batch 32, 40 iterations.
# DDPSIM_NPROC ranks (default 2; 1 on a single GPU: `DDPSIM_NPROC=1 ... -- --backend nccl`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/runtime/bench/bench_common.sh"
build="$(find_build_dir "$root")"
rounds="${1:-5}"
out="${2:-$root/results/bench/trace-overhead}"
shift 2 || shift $#
[[ "${1:-}" == "--" ]] && shift
workload=(--model mlp --width 1024 --depth 4 --batch-size 32 --iterations 40 --threads 1 --quiet "$@")
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

run() {  # run FILE [ddp-train flags]: one repetition, rank 0's step times to FILE
  local file="$1"
  shift
  rm -rf "$scratch/trace"
  "$build/bin/ddp-launch" --nproc-per-node "${DDPSIM_NPROC:-2}" --master-port 0 -- \
    "$build/bin/ddp-train" "${workload[@]}" "$@" --step-times "$file.{rank}" >/dev/null
  mv "$file.0" "$file" && rm -f "$file".[0-9]*
}
run_a() { run "$1" --trace-dir "$scratch/trace"; }
run_b() { run "$1" --no-trace; }
interleave "$rounds" "$out" traced untraced
