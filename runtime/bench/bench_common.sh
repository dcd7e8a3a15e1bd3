# Shared by the runtime benchmarks: where the binaries are, and reading ddp-train's closing line.
# Sourced, not run.

# The build directory holding bin/ddp-train and bin/ddp-launch: $DDPSIM_BUILD_DIR, else the
# first of build/release and build/runtime that has them.
find_build_dir() {
  local root="$1"
  for dir in "${DDPSIM_BUILD_DIR:-}" "$root/build/release" "$root/build/runtime"; do
    if [[ -n "$dir" && -x "$dir/bin/ddp-train" && -x "$dir/bin/ddp-launch" ]]; then
      echo "$dir"
      return 0
    fi
  done
  echo "no ddp-train/ddp-launch found: build them (scripts/build.sh) or set DDPSIM_BUILD_DIR" >&2
  return 2
}

# Reads "median step <ms> ms" from rank 0's closing line on stdin.
median_step_ms() {
  sed -n 's/.*\[rank 0\] done:.*median step \([0-9.]*\) ms.*/\1/p' | tail -n 1
}

# Median and ratio of two lists of numbers: prints "median_a median_b a/b".
median_ratio() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"{ma:.3f} {mb:.3f} {ma / mb:.4f}")
PY
}
