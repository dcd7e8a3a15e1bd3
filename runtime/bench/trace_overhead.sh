#!/usr/bin/env bash
# What does tracing cost? ddp-train traced vs --no-trace, 2 ranks, interleaved A B A B ...
#
# Each run reports its median step time (forward + backward with all-reduces + optimizer step,
# plus the tracer's per-iteration flush; iteration 0 excluded). The script prints every pair and
# the ratio of the medians over all rounds: traced / untraced (goal: <= 1.01).
#
# Usage: runtime/bench/trace_overhead.sh [ROUNDS] [-- extra ddp-train flags]
# Default workload: mlp --width 1024 --depth 4 (16.8 MB of gradients), batch 32, 40 iterations.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/runtime/bench/bench_common.sh"
build="$(find_build_dir "$root")"
rounds="${1:-5}"
shift || true
[[ "${1:-}" == "--" ]] && shift
workload=(--model mlp --width 1024 --depth 4 --batch-size 32 --iterations 40 --threads 1 "$@")
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

run() {  # run traced|untraced -> median step ms
  local extra=(--no-trace)
  [[ "$1" == traced ]] && extra=(--trace-dir "$scratch/trace")
  rm -rf "$scratch/trace"
  "$build/bin/ddp-launch" --nproc-per-node 2 --master-port 0 -- \
    "$build/bin/ddp-train" "${workload[@]}" "${extra[@]}" | median_step_ms
}

traced=() untraced=()
echo "round  traced_ms  untraced_ms"
for ((i = 1; i <= rounds; i++)); do
  # Alternate which goes first so a drift in machine speed does not favour either.
  if ((i % 2)); then t="$(run traced)"; u="$(run untraced)"; else u="$(run untraced)"; t="$(run traced)"; fi
  traced+=("$t") untraced+=("$u")
  printf "%5d  %9s  %11s\n" "$i" "$t" "$u"
done
read -r mt mu ratio <<<"$(median_ratio "${traced[*]}" "${untraced[*]}")"
echo "median step: traced ${mt} ms, untraced ${mu} ms, ratio traced/untraced ${ratio}"
