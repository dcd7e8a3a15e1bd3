#!/usr/bin/env bash
# AMP (bf16 or fp16 autocast + loss scaling) vs fp32 DDP, and each trace replayed.
#
# 2 ranks of the Fashion-MNIST convnet, interleaved A B B A ... (ROUNDS each); each run writes
# rank 0's step times (iteration 0 excluded) and its trace. ddpsim-compare prints each
# repetition's median step and the ratio AMP/fp32 of each pair: median, IQR, range, exact
# Wilcoxon and sign tests (OUT/compare.json). Then `ddp-sim replay --json` reconstructs the last
# trace of each (measured vs replayed median iteration, OUT/{a,b}-ROUNDS.replay.json: a
# reconstruction, not a prediction).
#
# Usage: runtime/bench/amp_vs_fp32.sh [ROUNDS] [OUT] [-- extra ddp-train flags]
# Default: --model convnet --batch-size 32 --iterations 31 --threads 1 (30 timed steps); later
# flags win. AMP=fp16 (default bf16) and DDPSIM_NPROC=1 (default 2) for one GPU, e.g.
#   DDPSIM_BUILD_DIR=build/gpu DDPSIM_NPROC=1 AMP=fp16 runtime/bench/amp_vs_fp32.sh 5 OUT -- \
#     --backend nccl --model mlp --width 2048 --depth 8 --batch-size 256
# (a build without the simulator skips the replays).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/runtime/bench/bench_common.sh"
build="$(find_build_dir "$root")"
rounds="${1:-3}"
out="${2:-$root/results/bench/amp-vs-fp32}"
shift 2 || shift $#
[[ "${1:-}" == "--" ]] && shift
workload=(--model convnet --batch-size 32 --iterations 31 --threads 1 --quiet "$@")

run() {  # run FILE [ddp-train flags]: one repetition, rank 0's step times to FILE, trace beside
  local file="$1"
  shift
  rm -rf "${file%.json}.trace"
  "$build/bin/ddp-launch" --nproc-per-node "${DDPSIM_NPROC:-2}" --master-port 0 -- \
    "$build/bin/ddp-train" "${workload[@]}" "$@" --step-times "$file.{rank}" \
    --trace-dir "${file%.json}.trace" >/dev/null
  mv "$file.0" "$file" && rm -f "$file".[0-9]*
}
amp="${AMP:-bf16}"
run_a() { run "$1" --amp "$amp"; }
run_b() { run "$1"; }
interleave "$rounds" "$out" "amp-$amp" fp32

[[ -x "$build/bin/ddp-sim" ]] || exit 0
for side in a b; do
  run="$out/$side-$rounds"
  rm -rf "$run.replayed"
  "$build/bin/ddp-sim" replay "$run.trace" --out "$run.replayed" --json "$run.replay.json" >/dev/null
  python3 - "$run.replay.json" "$side-$rounds" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
measured, replayed = (report[k]["median_iteration_s"] * 1e3 for k in ("measured", "predicted"))
print(f"{sys.argv[2]} median iteration: measured {measured:.2f} ms, replayed {replayed:.2f} ms "
      f"({(replayed - measured) / measured:+.1%}, reconstruction)")
PY
done
