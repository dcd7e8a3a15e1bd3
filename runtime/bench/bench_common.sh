# Shared by the runtime benchmarks: where the binaries and the project's torch are, and an
# interleaved A/B loop whose repetitions runtime/bench/compare.py compares. Sourced, not run.

# The build directory holding bin/ddp-train and bin/ddp-launch: $DDPSIM_BUILD_DIR, else
# build/release.
find_build_dir() {
  local root="$1"
  for dir in "${DDPSIM_BUILD_DIR:-}" "$root/build/release"; do
    if [[ -n "$dir" && -x "$dir/bin/ddp-train" && -x "$dir/bin/ddp-launch" ]]; then
      echo "$dir"
      return 0
    fi
  done
  echo "no ddp-train/ddp-launch found: build them (scripts/build.sh) or set DDPSIM_BUILD_DIR" >&2
  return 2
}

# The Python with the project's torch (what the runtime's LibTorch came from).
torch_python() {
  local root="$1"
  echo "${DDPSIM_TORCH_PYTHON:-$root/.venv/bin/python}"
}

# interleave ROUNDS OUT NAME_A NAME_B: calls `run_a FILE` and `run_b FILE` ROUNDS times each,
# alternating which goes first (a drift in machine speed then favours neither), each writing one
# repetition's step-times JSON to FILE; then compares them into OUT/compare.json.
interleave() {
  local rounds="$1" out="$2" name_a="$3" name_b="$4" i
  mkdir -p "$out"
  for ((i = 1; i <= rounds; i++)); do
    if ((i % 2)); then run_a "$out/a-$i.json"; run_b "$out/b-$i.json"
    else run_b "$out/b-$i.json"; run_a "$out/a-$i.json"; fi
  done
  local files_a=() files_b=()
  for ((i = 1; i <= rounds; i++)); do files_a+=("$out/a-$i.json"); files_b+=("$out/b-$i.json"); done
  python3 "$root/runtime/bench/compare.py" --names "$name_a,$name_b" --json "$out/compare.json" \
    "${files_a[@]}" -- "${files_b[@]}"
}
