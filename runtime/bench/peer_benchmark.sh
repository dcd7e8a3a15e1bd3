#!/usr/bin/env bash
# Is ddp-train as fast as PyTorch's own DDP? C++ ddp-train vs runtime/peer/python_ddp.py
# (torch.nn.parallel.DistributedDataParallel of the project's torch 2.13, Gloo), 2 ranks each,
# same MLP, batch, threads and iterations, interleaved A B B A ...
#
# Both write rank 0's step times (forward + backward with DDP's all-reduces + optimizer step,
# batch creation excluded, iteration 0 excluded). ddp-train runs with --no-trace so that both use
# PyTorch's default all-reduce. ddpsim-compare prints each repetition and the ratio
# C++/Python of each pair (median, IQR, range, exact Wilcoxon and sign tests) and writes
# OUT/compare.json.
#
# Usage: runtime/bench/peer_benchmark.sh [ROUNDS] [OUT] [-- extra flags for both programs]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/runtime/bench/bench_common.sh"
build="$(find_build_dir "$root")"
python="$(torch_python "$root")"
rounds="${1:-5}"
out="${2:-$root/results/bench/peer}"
shift 2 || shift $#
[[ "${1:-}" == "--" ]] && shift
workload=(--model mlp --width 1024 --depth 4 --batch-size 32 --iterations 40 --threads 1 --quiet "$@")

run_a() {
  "$build/bin/ddp-launch" --nproc-per-node 2 --master-port 0 -- \
    "$build/bin/ddp-train" "${workload[@]}" --no-trace --step-times "$1.{rank}" >/dev/null
  mv "$1.0" "$1" && rm -f "$1".[0-9]*
}
run_b() {
  "$build/bin/ddp-launch" --nproc-per-node 2 --master-port 0 -- \
    "$python" "$root/runtime/peer/python_ddp.py" "${workload[@]}" --step-times "$1.{rank}" >/dev/null
  mv "$1.0" "$1" && rm -f "$1".[0-9]*
}
interleave "$rounds" "$out" ddp-train python-ddp
