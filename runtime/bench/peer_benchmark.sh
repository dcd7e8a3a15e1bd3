#!/usr/bin/env bash
# Is ddp-train as fast as PyTorch's own DDP? C++ ddp-train vs runtime/peer/python_ddp.py
# (Debian's python3-torch 1.13, torch.nn.parallel.DistributedDataParallel, Gloo), 2 ranks each,
# same MLP, batch, threads and iterations, interleaved A B A B ...
#
# Both report the median step time (forward + backward with DDP's all-reduces + optimizer step,
# batch creation excluded, iteration 0 excluded). ddp-train runs with --no-trace so that both
# use PyTorch's default all-reduce. Prints every pair and the ratio of the medians, C++/Python.
#
# Usage: runtime/bench/peer_benchmark.sh [ROUNDS] [-- extra flags for both programs]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/runtime/bench/bench_common.sh"
build="$(find_build_dir "$root")"
rounds="${1:-5}"
shift || true
[[ "${1:-}" == "--" ]] && shift
# No --quiet: the closing line, which carries the median step, is part of the progress output.
workload=(--model mlp --width 1024 --depth 4 --batch-size 32 --iterations 40 --threads 1 "$@")

run_cpp() {
  "$build/bin/ddp-launch" --nproc-per-node 2 --master-port 0 -- \
    "$build/bin/ddp-train" "${workload[@]}" --no-trace | median_step_ms
}
run_python() {
  "$build/bin/ddp-launch" --nproc-per-node 2 --master-port 0 -- \
    /usr/bin/python3 "$root/runtime/peer/python_ddp.py" "${workload[@]}" | median_step_ms
}

cpp=() python=()
echo "round  cpp_ms  python_ms"
for ((i = 1; i <= rounds; i++)); do
  if ((i % 2)); then c="$(run_cpp)"; p="$(run_python)"; else p="$(run_python)"; c="$(run_cpp)"; fi
  cpp+=("$c") python+=("$p")
  printf "%5d  %6s  %9s\n" "$i" "$c" "$p"
done
read -r mc mp ratio <<<"$(median_ratio "${cpp[*]}" "${python[*]}")"
echo "median step: ddp-train ${mc} ms, python DDP ${mp} ms, ratio C++/Python ${ratio}"
