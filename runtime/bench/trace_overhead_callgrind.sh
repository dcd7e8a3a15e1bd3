#!/usr/bin/env bash
# Tracing overhead in instructions, which (unlike wall time on 2 shared cores) repeat exactly:
# one ddp-train rank (world size 1: DDP's Reducer, hooks and comm hook all run; the all-reduce is
# local) under valgrind's callgrind, traced and untraced, same workload and seed. Prints both
# instruction counts and traced/untraced, and writes OUT/callgrind.json.
#
# Usage: runtime/bench/trace_overhead_callgrind.sh [OUT] [-- extra ddp-train flags]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/runtime/bench/bench_common.sh"
build="$(find_build_dir "$root")"
out="${1:-$root/results/bench/trace-overhead}"
shift || true
[[ "${1:-}" == "--" ]] && shift
command -v valgrind >/dev/null || { echo "trace_overhead_callgrind.sh: expected valgrind on PATH, got none" >&2; exit 2; }
workload=(--model mlp --width 1024 --depth 4 --batch-size 32 --iterations 20 --threads 1 --quiet "$@")
mkdir -p "$out"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

instructions() {  # instructions FLAGS...: total Ir of one single-rank run
  valgrind --tool=callgrind --callgrind-out-file="$scratch/cg.out" \
    "$build/bin/ddp-train" "${workload[@]}" "$@" >/dev/null 2>"$scratch/valgrind.log"
  sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$scratch/cg.out"
}
traced="$(instructions --trace-dir "$scratch/trace")"
untraced="$(instructions --no-trace)"
python3 - "$traced" "$untraced" "$out/callgrind.json" "${workload[*]}" <<'PY'
import json, sys
traced, untraced, path, workload = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
result = {"traced_instructions": traced, "untraced_instructions": untraced,
          "ratio": traced / untraced, "workload": workload, "ranks": 1}
json.dump(result, open(path, "w"), indent=1)
print(f"instructions: traced {traced:,}, untraced {untraced:,}, ratio {traced / untraced:.5f}")
PY
