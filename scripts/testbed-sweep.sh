#!/usr/bin/env bash
# Comm-bound bucket sweep on the testbed (scripts/testbed.sh): real 2-host DDP jobs through a
# shaped link at each bucket cap, against ddp-sim's predictions for every cap made from ONE
# baseline trace (`ddp-sim replay BASE --bucket-cap-mb X`). Repetitions are interleaved (every
# cap once per round, the order rotating); medians over repetitions. Needs root.
#
#   scripts/testbed-sweep.sh [--rate 200mbit] [--hosts 2] [--caps 0.25,0.5,1,2,4,25] [--reps 3]
#                            [--baseline-cap 25] [--out results/testbed-sweep] [--bin build/release/bin]
#                            [-- extra ddp-train args]
#
# The default workload (MLP width 256, depth 16: 16 layers of 256 KiB gradients, 4.2 MB in all;
# batch 256, 1 thread per rank) spends about as long in backward as the 4.2 MB take at
# 200 Mbit/s, so how much of the all-reduce hides behind backward - the bucket cap - decides
# the iteration time. The first bucket's cap follows the cap (--first-bucket-cap-mb X), so the
# largest cap is one bucket: no overlap at all.
#
# Writes OUT/runs.csv (one row per measured run) and OUT/summary.csv (one row per cap):
#   cap_mb, reps, measured_median_s, measured_samples_per_s, predicted_s (replay of the
#   baseline, --compute per-iteration, network calibrated from it), error_pct, predicted_told_s (the same replay with
#   the bandwidth the testbed was told, --bandwidth RATE/8 --latency 0), error_told_pct
# and prints summary.csv.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
rate=200mbit
hosts=2
caps="0.25,0.5,1,2,4,25"
reps=3
baseline_cap=25
out="$root/results/testbed-sweep"
bin="$root/build/release/bin"
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) rate="$2"; shift 2 ;;
    --hosts) hosts="$2"; shift 2 ;;
    --caps) caps="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --baseline-cap) baseline_cap="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "testbed-sweep: unknown option '$1'" >&2; exit 64 ;;
  esac
done
extra=("$@")
workload=(--model mlp --width 256 --depth 16 --batch-size 256 --iterations 12 --threads 1 --seed 1)
for tool in ddp-launch ddp-train ddp-sim ddp-trace; do
  [ -x "$bin/$tool" ] || { echo "testbed-sweep: $bin/$tool missing (cmake --build --preset release)" >&2; exit 2; }
done
"$here/testbed.sh" --check --rate "$rate" >/dev/null || exit 2
IFS=, read -r -a cap_list <<< "$caps"
[[ ",$caps," == *",$baseline_cap,"* ]] || cap_list+=("$baseline_cap")
mkdir -p "$out/traces"
runs="$out/runs.csv"
echo "cap_mb,rep,trace,median_iteration_s,samples_per_s,num_buckets" > "$runs"

measure() {  # cap, rep
  local trace="$out/traces/cap$1-rep$2"
  rm -rf "$trace"
  "$here/testbed.sh" --quiet --hosts "$hosts" --rate "$rate" --timeout 300 -- \
    "$bin/ddp-launch" --nnodes "{hosts}" --node-rank "{host}" --master-addr "{master}" --master-port 29500 -- \
    "$bin/ddp-train" "${workload[@]}" --bucket-cap-mb "$1" --first-bucket-cap-mb "$1" "${extra[@]}" \
    --quiet --trace-dir "$trace" > "$trace.log" 2>&1 || { echo "testbed-sweep: cap $1 rep $2 failed; see $trace.log" >&2; exit 1; }
  "$bin/ddp-trace" summary --json "$trace" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(",".join(str(x) for x in [sys.argv[1], sys.argv[2], sys.argv[3], d["median_iteration_s"], d["samples_per_s"], d["num_buckets"]]))
' "$1" "$2" "$trace" >> "$runs"
  echo "testbed-sweep: rep $2 cap $1 MiB: $(tail -1 "$runs" | cut -d, -f4) s/iteration" >&2
}

n=${#cap_list[@]}
for ((rep = 1; rep <= reps; rep++)); do
  for ((k = 0; k < n; k++)); do
    measure "${cap_list[$(((k + rep - 1) % n))]}" "$rep"
  done
done

# Predictions: every cap from the baseline's first repetition alone.
base="$out/traces/cap$baseline_cap-rep1"
rate_bytes="$(python3 -c "import re,sys; m=re.fullmatch(r'(\d+)(bit|kbit|mbit|gbit)', sys.argv[1]); print(int(m[1]) * {'bit':1,'kbit':1e3,'mbit':1e6,'gbit':1e9}[m[2]] / 8)" "$rate")"
"$bin/ddp-sim" calibrate "$base" --json "$out/baseline-calibration.json" > "$out/baseline-calibration.txt"
predictions="$out/predictions.csv"
echo "cap_mb,predicted_s,predicted_told_s" > "$predictions"
for cap in "${cap_list[@]}"; do
  "$bin/ddp-sim" replay "$base" --compute per-iteration --bucket-cap-mb "$cap" --first-bucket-cap-mb "$cap" --json "$out/pred-$cap.json" > /dev/null
  "$bin/ddp-sim" replay "$base" --compute per-iteration --bucket-cap-mb "$cap" --first-bucket-cap-mb "$cap" \
    --bandwidth "$rate_bytes" --latency 0 --json "$out/pred-told-$cap.json" > /dev/null
  python3 -c '
import json, sys
p = json.load(open(sys.argv[2]))["predicted"]["median_iteration_s"]
t = json.load(open(sys.argv[3]))["predicted"]["median_iteration_s"]
print(f"{sys.argv[1]},{p},{t}")' "$cap" "$out/pred-$cap.json" "$out/pred-told-$cap.json" >> "$predictions"
done

python3 - "$runs" "$predictions" "$out/summary.csv" "$out/baseline-calibration.json" "$rate_bytes" <<'EOF'
import csv, json, statistics, sys
runs = list(csv.DictReader(open(sys.argv[1])))
preds = {r["cap_mb"]: r for r in csv.DictReader(open(sys.argv[2]))}
calibration = json.load(open(sys.argv[4]))
rate_bytes = float(sys.argv[5])
rows = []
for cap in sorted(preds, key=float):
    mine = [r for r in runs if r["cap_mb"] == cap]
    measured = statistics.median(float(r["median_iteration_s"]) for r in mine)
    throughput = statistics.median(float(r["samples_per_s"]) for r in mine)
    predicted = float(preds[cap]["predicted_s"])
    told = float(preds[cap]["predicted_told_s"])
    rows.append({"cap_mb": cap, "reps": len(mine), "num_buckets": mine[0]["num_buckets"],
                 "measured_median_s": f"{measured:.4f}", "measured_samples_per_s": f"{throughput:.1f}",
                 "predicted_s": f"{predicted:.4f}", "error_pct": f"{100 * (predicted - measured) / measured:+.1f}",
                 "predicted_told_s": f"{told:.4f}", "error_told_pct": f"{100 * (told - measured) / measured:+.1f}"})
with open(sys.argv[3], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
times = [float(r["measured_median_s"]) for r in rows]
beta = calibration["beta_bytes_per_s"]
print(f"# baseline calibration: beta {beta / 1e6:.2f} MB/s = {100 * beta / rate_bytes:.1f} % of the {rate_bytes / 1e6:.2f} MB/s the link was told")
print(f"# measured iteration time varies {100 * (max(times) - min(times)) / min(times):.0f} % across caps")
print(open(sys.argv[3]).read(), end="")
EOF
