#!/usr/bin/env bash
# python/ddpsim/bench/allreduce_bench.py --concurrent K on 2 CPU ranks: the report holds, beside the
# lone all-reduces' points, one time per all-reduce with K in flight for every size, the line
# through them and the gain of K at once per size; with --sizes, exactly those sizes. Exits 77 (skipped) when PYTHON has no torch.
# Usage: allreduce_bench_concurrent.sh PYTHON BENCH
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_test_setup.sh"
"$python" "$bench" --out "$scratch/report.json" --concurrent 3 --rounds 1 || exit 1
"$python" - "$scratch/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert report["device"] == "cpu", report["device"]
assert report["concurrent"] == 3, report.get("concurrent")
sizes = [p["bytes"] for p in report["points"]]
together = report["concurrent_points"]
assert [p["bytes"] for p in together] == sizes, together
assert all(p["median_s_per_allreduce"] > 0 for p in together), together
assert "concurrent_intercept_s" in report and report["concurrent_slope_s_per_byte"] != 0, report
# The gain: one alone's time over the time per all-reduce with K in flight, per size; its median.
gains = report["concurrent_gains"]
assert len(gains) == len(sizes), gains
for point, lone, gain in zip(together, report["points"], gains):
    assert abs(gain - lone["median_s"] / point["median_s_per_allreduce"]) < 1e-12, (gain, point, lone)
assert report["concurrent_gain"] == sorted(gains)[len(gains) // 2] or len(gains) % 2 == 0, report["concurrent_gain"]
assert min(gains) <= report["concurrent_gain"] <= max(gains), report["concurrent_gain"]
print("ok:", len(together), "sizes with 3 in flight")
PY
[ $? = 0 ] || exit 1
# --sizes: the sizes timed are those given (sorted, repeats once), lone and 2 in flight.
"$python" "$bench" --out "$scratch/sizes.json" --concurrent 2 --rounds 1 --sizes 40000,4096,40000 || exit 1
"$python" - "$scratch/sizes.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert [p["bytes"] for p in report["points"]] == [4096, 40000], report["points"]
assert [p["bytes"] for p in report["concurrent_points"]] == [4096, 40000], report["concurrent_points"]
print("ok: --sizes 40000,4096,40000 timed 4096 and 40000 bytes")
PY
