#!/usr/bin/env bash
# Prediction error of `ddp-sim replay` on real Gloo runs: 2 and 3 ranks x bucket caps 1 and
# 25 MiB, REPS interleaved repetitions (the machine's speed drifts, so configurations
# alternate). Each run is calibrated from itself and replayed with --compute per-iteration
# and median. Prints one row per run and mode, then the median |error| per mode.
# Usage: simulator/bench/validate_real.sh [BUILD_DIR] [REPS]   (BUILD_DIR needs ddp-train,
#        ddp-launch and ddp-sim; extra ddp-train flags via TRAIN_ARGS)
set -euo pipefail
build="${1:-build/sim2}"
reps="${2:-3}"
train_args="${TRAIN_ARGS:---model mlp --width 512 --depth 4 --iterations 20 --batch-size 32 --threads 1}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rows="$work/rows.csv"
echo "rep,ranks,cap_mb,mode,measured_s,predicted_s,error" >"$rows"
for rep in $(seq 1 "$reps"); do
  for ranks in 2 3; do
    for cap in 1 25; do
      trace="$work/r$rep-w$ranks-c$cap"
      # shellcheck disable=SC2086
      "$build/bin/ddp-launch" --nproc-per-node "$ranks" --master-port 0 -- "$build/bin/ddp-train" \
        $train_args --bucket-cap-mb "$cap" --seed "$rep" --quiet --trace-dir "$trace" >/dev/null
      for mode in per-iteration median; do
        "$build/bin/ddp-sim" replay "$trace" --compute "$mode" --json "$trace-$mode.json" >/dev/null
        /usr/bin/python3 - "$trace-$mode.json" "$rep" "$ranks" "$cap" "$mode" >>"$rows" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m, p = r["measured"]["median_iteration_s"], r["predicted"]["median_iteration_s"]
print(f"{sys.argv[2]},{sys.argv[3]},{sys.argv[4]},{sys.argv[5]},{m:.6f},{p:.6f},{(p - m) / m:+.4f}")
PY
      done
      tail -n 2 "$rows"
    done
  done
done
/usr/bin/python3 - "$rows" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for mode in ("per-iteration", "median"):
    errors = [float(r["error"]) for r in rows if r["mode"] == mode]
    print(f"{mode:14s} runs {len(errors):2d}  median error {statistics.median(errors):+.1%}  "
          f"median |error| {statistics.median(abs(e) for e in errors):.1%}  max |error| {max(abs(e) for e in errors):.1%}")
PY
