#!/usr/bin/env bash
# Wall time of `ddp-sim replay` for one iteration of a 25-bucket model at growing world
# sizes, per all-reduce model, with peak RSS. Interleaves models within each world size
# (noisy machine). Goals: ring-agg W=1024 <= 0.5 s, W=8192 <= 10 s, ~linear in W.
# Usage: simulator/bench/replay_scaling.sh [BUILD_DIR] [WORLD_SIZES...]
set -euo pipefail
build="${1:-build/sim}"
shift || true
worlds=("${@:-1024 4096 8192}")
read -r -a worlds <<<"${worlds[*]}"
trace_dir="$(mktemp -d)"
trap 'rm -rf "$trace_dir"' EXIT
/usr/bin/python3 "$(dirname "$0")/make_synthetic_trace.py" "$trace_dir/trace" --buckets 25
printf "%-6s %-9s %10s %12s %14s %10s\n" W model wall_s messages iteration_s rss_mb
for world in "${worlds[@]}"; do
  models=(ring-agg analytic tree)
  ((world <= 256)) && models+=(ring)
  for model in "${models[@]}"; do
    json="$trace_dir/$model-$world.json"
    start=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$trace_dir/rss" "$build/bin/ddp-sim" replay "$trace_dir/trace" --world-size "$world" --iterations 1 \
      --allreduce "$model" --bandwidth 1.25e9 --latency 20e-6 --json "$json" >/dev/null
    end=$(date +%s.%N)
    /usr/bin/python3 - "$json" "$world" "$model" "$start" "$end" "$(cat "$trace_dir/rss")" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
wall = float(sys.argv[5]) - float(sys.argv[4])
print(f"{sys.argv[2]:<6} {sys.argv[3]:<9} {wall:10.2f} {report['simulation']['messages']:12d} "
      f"{report['predicted']['median_iteration_s']:14.6f} {int(sys.argv[6]) / 1024:10.0f}")
PY
  done
done
