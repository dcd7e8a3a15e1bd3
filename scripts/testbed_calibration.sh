#!/usr/bin/env bash
# Ground truth for `ddp-sim calibrate`: real 2-host DDP jobs through the testbed (scripts/testbed.sh)
# at link rates we chose, then the network calibrated back from each trace and compared with the
# rate the link was told. Needs root (exit 2 otherwise).
#
#   scripts/testbed_calibration.sh [--rates 100,400] [--caps 1,25] [--iterations 12]
#                                  [--out results/testbed-calibration] [--bin build/release/bin]
#
# Workload: MLP width 1024, depth 4 (4 MiB of gradients per hidden layer, ~17 MB in all), batch 16,
# 1 thread per rank; --bucket-cap-mb CAP with --first-bucket-cap-mb CAP (cap 1: one bucket per
# layer, several all-reduces per iteration; cap 25: one bucket per iteration).
#
# Convention (simulator/src/network/calibrate.cpp, allreduce_formula.cpp): a ring all-reduce of S bytes on
# W ranks takes 2(W-1)*alpha + 2(W-1)/W * S / beta, beta in bytes/s. For W=2 each rank sends S
# bytes and receives S bytes over its own full-duplex link, so beta is directly comparable with
# the link rate in bytes/s: told_Bps = rate_bits / 8. error_pct = 100 * (beta - told) / told.
# Expect about -5 %: TCP/IP headers and ACKs (1448 payload bytes per 1514-byte frame).
#
# Writes OUT/calibration.csv and OUT/calibration.json (and the traces under OUT/traces) and
# prints the CSV.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
rates="100,400"
caps="1,25"
iterations=12
out="$root/results/testbed-calibration"
bin="$root/build/release/bin"
while [ $# -gt 0 ]; do
  case "$1" in
    --rates) rates="$2"; shift 2 ;;
    --caps) caps="$2"; shift 2 ;;
    --iterations) iterations="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    *) echo "testbed_calibration: unknown option '$1'" >&2; exit 64 ;;
  esac
done
for tool in ddp-launch ddp-train ddp-sim ddp-trace; do
  [ -x "$bin/$tool" ] || { echo "testbed_calibration: $bin/$tool missing" >&2; exit 2; }
done
"$here/testbed.sh" --check >/dev/null || exit 2
IFS=, read -r -a rate_list <<< "$rates"
IFS=, read -r -a cap_list <<< "$caps"
mkdir -p "$out/traces"
csv="$out/calibration.csv"
echo "rate_mbit,cap_mb,told_bytes_per_s,beta_bytes_per_s,beta_over_told,error_pct,alpha_s,samples,sizes,median_iteration_s,span_beta_bytes_per_s,span_error_pct,method" > "$csv"

for rate in "${rate_list[@]}"; do
  for cap in "${cap_list[@]}"; do
    trace="$out/traces/rate${rate}-cap${cap}"
    rm -rf "$trace"
    echo "== ${rate} mbit, bucket cap ${cap} MiB" >&2
    "$here/testbed.sh" run --quiet --name "ddpsim-cal$$" --hosts 2 --rate "${rate}mbit" --timeout 300 -- \
      "$bin/ddp-launch" --nnodes {hosts} --node-rank {host} --nproc-per-node 1 --master-addr {master} \
      --master-port 29611 -- "$bin/ddp-train" --model mlp --width 1024 --depth 4 --batch-size 16 \
      --iterations "$iterations" --bucket-cap-mb "$cap" --first-bucket-cap-mb "$cap" --threads 1 --seed 1 \
      --quiet --trace-dir "$trace" > "$trace.log" 2>&1 || { cat "$trace.log" >&2; exit 1; }
    "$bin/ddp-trace" validate "$trace" >&2
    "$bin/ddp-trace" summary --json "$trace" > "$trace.summary.json"
    "$bin/ddp-sim" calibrate "$trace" --json "$trace.calibration.json" >&2
    python3 - "$rate" "$cap" "$trace.calibration.json" "$trace.summary.json" "$trace" >> "$csv" <<'PY'
import csv, glob, json, statistics, sys
rate, cap = float(sys.argv[1]), sys.argv[2]
# A cross-check that does not depend on how buckets overlap: per iteration, all gradient bytes
# over the span from the latest rank's first allreduce_begin to the last allreduce_end anywhere.
first, last, nbytes = {}, {}, {}
for f in glob.glob(sys.argv[5] + "/rank-*.events.csv"):
    mine = {}
    for e in csv.DictReader(open(f)):
        i, t = int(e["iteration"]), int(e["t_ns"])
        if e["event"] == "allreduce_begin":
            mine[i] = min(mine.get(i, t), t)
            if f.endswith("rank-0.events.csv"): nbytes[i] = nbytes.get(i, 0) + int(e["bytes"])
        elif e["event"] == "allreduce_end":
            last[i] = max(last.get(i, t), t)
    for i, t in mine.items(): first[i] = max(first.get(i, t), t)
its = sorted(i for i in nbytes if i in last and i in first and i > 0)  # iteration 0 warms up
span_beta = statistics.median(nbytes[i] / ((last[i] - first[i]) * 1e-9) for i in its)
c = json.load(open(sys.argv[3])); s = json.load(open(sys.argv[4]))
told = rate * 1e6 / 8
beta = c["beta_bytes_per_s"]
it = s.get("median_iteration_s", s.get("iteration_time_s", {}).get("median", "")) if isinstance(s, dict) else ""
method = str(c.get("method", "")).replace(",", ";")
print(f'{rate:g},{cap},{told:.0f},{beta:.0f},{beta/told:.4f},{100*(beta-told)/told:+.1f},'
      f'{c.get("alpha_s", float("nan")):.6g},{c.get("samples", "")},{len(c.get("points", []))},{it},{span_beta:.0f},{100*(span_beta-told)/told:+.1f},{method}')
PY
  done
done
python3 - "$csv" > "$out/calibration.json" <<'PY'
import csv, json, sys
print(json.dumps(list(csv.DictReader(open(sys.argv[1]))), indent=2))
PY
cat "$csv"
