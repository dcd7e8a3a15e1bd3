# Sourced by scripts/gpu-check.sh and scripts/gpu-whatif.sh: what both do on a GPU machine
# before their own steps. gpu_env OUT: nvidia-smi, torch and the core count into OUT/env.txt.
# gpu_build TARGET...: build/gpu against the torch of $py (any version: the lent machines have
# 2.11), without SimGrid or the tests; headers the machine lacks (CLI11, nlohmann-json, toml++,
# zlib, Gloo's) from Debian packages unpacked under $DDPSIM_DEPS_PREFIX (docs/pytorch-2.md).
# Sets bin=build/gpu/bin.

gpu_env() {
  {
    nvidia-smi || true
    "$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
    "nccl", ".".join(map(str, torch.cuda.nccl.version())), torch.cuda.get_device_name(0))' || true
    nproc
  } > "$1/env.txt" 2>&1
  cat "$1/env.txt"
}

gpu_build() {
  local deps=${DDPSIM_DEPS_PREFIX:-} cmake_extra=()
  if [[ -n $deps ]]; then
    export CPATH="$deps/usr/include${CPATH:+:$CPATH}"
    cmake_extra+=(-DCMAKE_PREFIX_PATH="$deps/usr")
  fi
  cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DDDPSIM_TORCH_PYTHON="$py" \
    -DDDPSIM_TORCH_ANY_VERSION=ON -DDDPSIM_BUILD_SIMULATOR=OFF -DDDPSIM_BUILD_TESTS=OFF \
    "${cmake_extra[@]}"
  time cmake --build build/gpu --target "$@" -j "$(nproc)"
  bin=build/gpu/bin
}
