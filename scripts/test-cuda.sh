#!/usr/bin/env bash
# CI's CUDA leg: builds the runtime (ddp-train, ddp-machine-profile) against the CUDA 13 LibTorch
# of torch 2.14.1 with its NCCL, so `--backend nccl` is compiled and linked (an API drift in the
# NCCL path fails here), then runs the runtime tests, which need no GPU: Gloo jobs on the CUDA
# build, and the one-line refusal of --backend nccl where no device is visible. Needs the CUDA
# toolkit (nvcc, cudart headers) at CUDA_HOME (default /usr/local/cuda); makes .venv-cuda
# (~5.5 GB) on first use.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$cuda_home/bin/nvcc" ]; then
  echo "test-cuda.sh: expected the CUDA toolkit at $cuda_home (nvcc), got none; set CUDA_HOME" >&2
  exit 2
fi
bash scripts/make_venv.sh "$PWD/.venv-cuda" scripts/requirements-torch-cuda.txt --no-compile
# No debug information (-O2 without -g1): this leg compiles, links and runs Gloo jobs, and line
# tables add noticeably to a runtime file's compile time without helping those runs.
cmake -S . -B build/cuda -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
  -DDDPSIM_TORCH_PYTHON="$PWD/.venv-cuda/bin/python" -DCUDA_TOOLKIT_ROOT_DIR="$cuda_home" \
  -DDDPSIM_BUILD_SIMULATOR=OFF >/dev/null
cmake --build build/cuda -j "$(nproc)" --target ddp-train ddp-launch ddp_train_tests \
  runtime_option_tests straggler_tests ddp_features_tests ddp-machine-profile machine_profile_tests
ctest --test-dir build/cuda -L runtime -j "$(nproc)" --output-on-failure "$@"
