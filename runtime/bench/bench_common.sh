# Shared by the runtime benchmarks: where the binaries and the project's torch are, and an
# interleaved A/B loop whose repetitions ddpsim-compare (python/ddpsim/compare.py) compares.
# Sourced, not run.

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

# The Python with the ddpsim package (scripts/setup.sh installs it into .venv): .venv's, else
# the torch Python's (e.g. a CUDA venv given `scripts/install_python_package.sh VENV`).
ddpsim_python() {
  local root="$1" python
  for python in "$root/.venv/bin/python" "$(torch_python "$root")"; do
    if [[ -x "$python" ]] && "$python" -c "import ddpsim" 2>/dev/null; then
      echo "$python"
      return 0
    fi
  done
  echo "no Python with the ddpsim package: run scripts/setup.sh" >&2
  return 2
}

# repetitions NAME FILE...: one side's repetitions for ddpsim-compare on stdout,
# {"name": NAME, "repetitions": [FILE's JSON, ...]}. Each FILE is already JSON (step times), so
# they are joined, never parsed here.
repetitions() {
  local name="$1" separator="" file
  shift
  printf '{"name": "%s", "repetitions": [\n' "$name"
  for file in "$@"; do printf '%s' "$separator"; cat "$file"; separator=","; done
  printf ']}\n'
}

# interleave ROUNDS OUT NAME_A NAME_B: calls `run_a FILE` and `run_b FILE` ROUNDS times each,
# alternating which goes first (a drift in machine speed then favours neither), each writing one
# repetition's step-times JSON to FILE (OUT/a-I.json, OUT/b-I.json); collects each side into
# OUT/a.json and OUT/b.json and compares them pair by pair (ddpsim-compare: the ratio's
# median, IQR and range, exact Wilcoxon and sign tests) into OUT/compare.json.
interleave() {
  local rounds="$1" out="$2" name_a="$3" name_b="$4" i
  mkdir -p "$out"
  for ((i = 1; i <= rounds; i++)); do
    if ((i % 2)); then run_a "$out/a-$i.json"; run_b "$out/b-$i.json"
    else run_b "$out/b-$i.json"; run_a "$out/a-$i.json"; fi
  done
  local files_a=() files_b=()
  for ((i = 1; i <= rounds; i++)); do files_a+=("$out/a-$i.json"); files_b+=("$out/b-$i.json"); done
  repetitions "$name_a" "${files_a[@]}" >"$out/a.json"
  repetitions "$name_b" "${files_b[@]}" >"$out/b.json"
  local python
  python="$(ddpsim_python "$root")" || return 2
  "$python" -m ddpsim.compare "$out/a.json" "$out/b.json" --json "$out/compare.json"
}
