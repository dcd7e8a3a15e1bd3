#!/usr/bin/env bash
# The runtime on a real GPU, in one command (run it on a machine with a CUDA GPU and a CUDA
# PyTorch; CI has no GPU and never runs it). Builds ddp-train, ddp-launch and ddp-trace against
# the torch of $DDPSIM_TORCH_PYTHON (default: python3), then on GPU 0:
#   1. ddp-train --backend nccl, 1 rank (NCCL refuses two ranks on one GPU), traced, validated;
#   2. the same MLP in Python DDP over NCCL (runtime/peer/python_ddp.py), interleaved with 1.
#      for the C++ / Python step-time ratio (ddpsim-compare), then once under
#      torch.profiler (a Kineto GPU trace);
#   3. Python DDP, 2 ranks over Gloo with CUDA tensors sharing GPU 0, profiled (2-rank GPU trace);
#   4. mixed precision, checked (scripts/gpu_amp_check.py: fp16 runs only on CUDA): fp16 and bf16
#      train to within 0.05 of fp32's loss, the loss scale follows the skipped steps, an injected
#      inf skips its step, evaluation agrees;
#   5. AMP's speed: fp16 and bf16 against fp32, interleaved (runtime/bench/amp_vs_fp32.sh).
# Writes OUT_DIR (default gpu-check/): log.txt, env.txt and one .tar.gz per job.
# Headers it needs beyond LibTorch (CLI11, nlohmann-json, toml++, zlib, gloo) come from the
# system or from Debian packages unpacked under $DDPSIM_DEPS_PREFIX (docs/pytorch-2.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$(realpath -m "${1:-gpu-check}")
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
py=$(command -v "${DDPSIM_TORCH_PYTHON:-python3}")
reps=${GPU_CHECK_REPS:-5}
mlp=(--model mlp --width 2048 --depth 8 --batch-size 256 --iterations 60)
source scripts/gpu_common.sh
gpu_env "$out"
gpu_build ddp-train ddp-launch ddp-trace

echo "== 1. ddp-train --backend nccl, 1 rank, traced"
rm -rf "$out/cpp-nccl" && mkdir -p "$out/cpp-nccl"  # --step-times wants its folder to exist
$bin/ddp-launch --nproc-per-node 1 -- $bin/ddp-train --backend nccl "${mlp[@]}" \
  --trace-dir "$out/cpp-nccl/trace" --step-times "$out/cpp-nccl/steps-traced.json"
$bin/ddp-trace validate "$out/cpp-nccl/trace"
$bin/ddp-trace summary "$out/cpp-nccl/trace"

echo "== 2. C++ vs Python DDP over NCCL, 1 rank, $reps interleaved repetitions (untraced)"
# runtime/bench/bench_common.sh's interleave: A B B A ..., then ddpsim-compare on the pairs
# (the ratio's median, IQR, range, exact Wilcoxon and sign tests) into cpp-nccl/vs-python/.
root=$PWD
source runtime/bench/bench_common.sh
run_a() {
  $bin/ddp-launch --nproc-per-node 1 -- $bin/ddp-train --backend nccl "${mlp[@]}" --no-trace \
    --quiet --step-times "$1"
}
run_b() {
  $bin/ddp-launch --nproc-per-node 1 -- "$py" runtime/peer/python_ddp.py --backend nccl \
    "${mlp[@]:2}" --quiet --step-times "$1"
}
interleave "$reps" "$out/cpp-nccl/vs-python" ddp-train python-ddp
echo "== 2b. Python DDP over NCCL under torch.profiler"
$bin/ddp-launch --nproc-per-node 1 -- "$py" runtime/peer/python_ddp.py --backend nccl \
  "${mlp[@]:2}" --iterations 12 --quiet --profile "$out/py-nccl"

echo "== 3. Python DDP, 2 ranks over Gloo, CUDA tensors on one GPU, profiled"
$bin/ddp-launch --nproc-per-node 2 -- "$py" runtime/peer/python_ddp.py --backend gloo \
  --device cuda "${mlp[@]:2}" --iterations 12 --quiet --profile "$out/py-gloo-cuda"

echo "== 4. mixed precision on the GPU, checked"
amp_status=0
python3 scripts/gpu_amp_check.py --out "$out/amp" --bin-dir "$bin" || amp_status=$?

echo "== 5. AMP against fp32 over NCCL, 1 rank, $reps interleaved repetitions"
for amp in fp16 bf16; do
  DDPSIM_BUILD_DIR="$root/build/gpu" DDPSIM_NPROC=1 AMP=$amp runtime/bench/amp_vs_fp32.sh "$reps" \
    "$out/amp-speed/$amp" -- --backend nccl "${mlp[@]}" --iterations 61
done

for job in cpp-nccl py-nccl py-gloo-cuda amp amp-speed; do
  tar -C "$out" -czf "$out/$job.tar.gz" "$job"
done
ls -la "$out"
if (( amp_status != 0 )); then echo "gpu_amp_check.py failed ($amp_status): $out/amp/amp-check.json"; exit 1; fi
