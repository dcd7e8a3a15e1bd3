#!/usr/bin/env bash
# ddp-machine-profile on a real GPU, in one command (run it on a machine with a CUDA GPU and a
# CUDA PyTorch; CI has none). Builds ddp-machine-profile, ddp-launch and ddp-trace against the
# torch of $DDPSIM_TORCH_PYTHON (default: python3), then:
#   1. 2 ranks over Gloo with CUDA tensors sharing GPU 0 (as ddp-train --device cuda);
#   2. with 2 GPUs or more, one rank per GPU over NCCL (NCCL refuses two ranks on one GPU);
#   3. a refusal in one line: --backend nccl with --device cpu.
# Each profile is checked against traces/MACHINE.md's rules by scripts/gpu_machine_profile_check.py
# (python's json, no torch needed), which a ctest also runs on a CPU profile.
# Writes OUT_DIR (default gpu-machine-profile/): log.txt, env.txt, gloo-cuda.json, nccl.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$(realpath -m "${1:-gpu-machine-profile}")
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
py=$(command -v "${DDPSIM_TORCH_PYTHON:-python3}")
source scripts/gpu_common.sh
gpu_env "$out"
gpu_build ddp-machine-profile ddp-launch

check() {  # FILE BACKEND DEVICE: the profile holds what MACHINE.md says (also a ctest on the CPU)
  python3 scripts/gpu_machine_profile_check.py "$@"
}

echo "== 1. Gloo, CUDA tensors, 2 ranks on GPU 0"
$bin/ddp-launch --nproc-per-node 2 -- $bin/ddp-machine-profile --backend gloo --device cuda \
  --out "$out/gloo-cuda.json"
check "$out/gloo-cuda.json" gloo cuda

gpus=$("$py" -c 'import torch; print(torch.cuda.device_count())')
if (( gpus >= 2 )); then
  echo "== 2. NCCL, one rank per GPU ($gpus GPUs)"
  $bin/ddp-launch --nproc-per-node "$gpus" -- $bin/ddp-machine-profile --backend nccl --out "$out/nccl.json"
  check "$out/nccl.json" nccl cuda
else
  echo "== 2. NCCL: skipped, $gpus GPU (NCCL needs a GPU per rank, and a profile 2 ranks)"
fi

echo "== 3. one-line refusals"
status=0
RANK=0 WORLD_SIZE=2 $bin/ddp-machine-profile --backend nccl --device cpu --out "$out/x.json" 2>"$out/refusal.txt" || status=$?
[[ $status == 2 && $(wc -l <"$out/refusal.txt") == 1 ]] || { echo "expected one line and status 2, got $status:"; cat "$out/refusal.txt"; exit 1; }
cat "$out/refusal.txt"
echo "gpu-machine-profile: all checks passed; profiles in $out"
