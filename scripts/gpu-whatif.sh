#!/usr/bin/env bash
# What-ifs measured on a GPU, in one command (a machine with a CUDA GPU and a CUDA PyTorch; CI has
# no GPU and never runs it). Builds ddp-train, ddp-launch, ddp-trace and ddp-experiment against
# the torch of $DDPSIM_TORCH_PYTHON (default: python3), without SimGrid, then:
#   1. the Gloo all-reduce of CUDA tensors alone and 16 at once (experiments/peer/
#      allreduce_bench.py --device cuda --concurrent 16): OUT_DIR/allreduce-cuda.json, the
#      network model of whatif-gpu-bucket-many.toml;
#   2. each spec (default: the three experiments/whatif-gpu-*.toml: 2 ranks over Gloo with CUDA
#      tensors sharing GPU 0). Without ddp-sim there the predictions fail and the measurements
#      and traces stay; OUT_DIR/results.tar.gz holds them;
#   3. ddp-train --device cuda against Python DDP on the same job, untraced, interleaved pairs
#      (GPU_WHATIF_REPS, default 5; ddpsim-compare): OUT_DIR/cpp-vs-python.tar.gz.
# Predict where ddp-sim is built:
#   tar -xzf OUT_DIR/results.tar.gz -C DIR
#   ddp-experiment run experiments/whatif-gpu-bucket.toml --out DIR/results --repredict
#   .venv/bin/ddpsim-plot errors DIR/results/whatif-gpu-*/summary.csv
# Usage: scripts/gpu-whatif.sh [OUT_DIR [SPEC...]]   (DDPSIM_DEPS_PREFIX: see gpu-check.sh;
#        GPU_WHATIF_STEPS: the steps to run, default "1 2 3")
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$(realpath -m "${1:-gpu-whatif}")
shift || true
specs=("$@")
(( ${#specs[@]} )) || specs=(experiments/whatif-gpu-bucket.toml experiments/whatif-gpu-bucket-many.toml
                             experiments/whatif-gpu-delay.toml)
reps=${GPU_WHATIF_REPS:-5}
steps=" ${GPU_WHATIF_STEPS:-1 2 3} "
step() { [[ $steps == *" $1 "* ]]; }
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
py=$(command -v "${DDPSIM_TORCH_PYTHON:-python3}")
source scripts/gpu_common.sh
gpu_env "$out"
gpu_build ddp-train ddp-launch ddp-trace ddp-experiment

if step 1; then
  echo "== 1. Gloo all-reduce of CUDA tensors, alone and 16 at once"
  "$py" python/ddpsim/bench/allreduce_bench.py --device cuda --concurrent 16 --rounds 10 \
    --out "$out/allreduce-cuda.json"
fi

if step 2; then
  status=0
  for spec in "${specs[@]}"; do
    echo "== 2. $spec"
    # Exit status 1 is expected: every prediction fails without ddp-sim. What counts is that
    # every point was measured (summary.csv's measured column).
    "$bin/ddp-experiment" run "$spec" --out "$out/results" --bin-dir "$bin" || status=$?
  done
  # Traces, measurements and provenance; the failed predictions' logs stay out.
  tar -C "$out" -czf "$out/results.tar.gz" --exclude=predictions --exclude=calibration results
  echo "ddp-experiment's last status: $status (1: predictions failed without ddp-sim, expected)"
fi

step 3 || exit 0
echo "== 3. ddp-train --device cuda against Python DDP, Gloo, 2 ranks on GPU 0, $reps pairs"
root=$PWD
source runtime/bench/bench_common.sh
job=(--model mlp --width 2048 --depth 4 --batch-size 256 --iterations 30)
# Each rank writes its own file; rank 0's stands for the job.
run_a() {
  "$bin/ddp-launch" --nproc-per-node 2 -- "$bin/ddp-train" --device cuda "${job[@]}" --no-trace \
    --quiet --step-times "${1%.json}-{rank}.json" && cp "${1%.json}-0.json" "$1"
}
run_b() {
  "$bin/ddp-launch" --nproc-per-node 2 -- "$py" runtime/peer/python_ddp.py --backend gloo \
    --device cuda "${job[@]:2}" --quiet --step-times "${1%.json}-{rank}.json" &&
    cp "${1%.json}-0.json" "$1"
}
interleave "$reps" "$out/cpp-vs-python" ddp-train python-ddp
tar -C "$out" -czf "$out/cpp-vs-python.tar.gz" cpp-vs-python
ls -la "$out"
