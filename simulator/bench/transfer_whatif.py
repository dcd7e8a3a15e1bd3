#!/usr/bin/env python3
"""transfer_whatif.py: does a what-if predict each bucket's all-reduce transfer, not only the iteration?

  simulator/bench/transfer_whatif.py RESULTS/NAME [RESULTS/NAME ...] [--json OUT.json]

For ddp-experiment results folders (summary.csv, traces/, predictions/): every prediction row
(kind prediction, status ok) pairs a measured run of the changed configuration (trace_dir) with
the trace the replay predicted for it from the baseline (predicted_dir). Both are summarised
with `ddp-trace summary --json`, and per bucket the network's time, `median_transfer_s` (on the
rank that started the all-reduce last, trace/collective.hpp), is compared where the two traces
have a bucket of the same index and bytes. A bucket-cap what-if thus checks the α-β line at
message sizes the baseline never sent. Reconstruction rows are tallied apart: their sizes are
the calibration's own. Per experiment and kind it prints the buckets compared, the median and
p90 of |error| and the median signed error, in %. Standard library only. Bad input: one line on
stderr, exit 2.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class InputError(Exception):
    pass


def bucket_errors(measured, predicted):
    """Signed % errors of predicted vs measured median_transfer_s, per bucket present in both
    summaries with the same index and bytes and a measured transfer > 0."""
    by_key = {(b["bucket"], b["bytes"]): b for b in measured.get("buckets", [])}
    errors = []
    for bucket in predicted.get("buckets", []):
        found = by_key.get((bucket["bucket"], bucket["bytes"]))
        if found and found.get("median_transfer_s", 0) > 0:
            errors.append(100 * (bucket["median_transfer_s"] / found["median_transfer_s"] - 1))
    return errors


def quantile(values, q):
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def stats(errors):
    if not errors:
        return {"buckets": 0}
    magnitudes = [abs(e) for e in errors]
    return {"buckets": len(errors), "median_abs_pct": statistics.median(magnitudes),
            "p90_abs_pct": quantile(magnitudes, 0.9), "median_pct": statistics.median(errors)}


def summary(bin_dir, trace):
    done = subprocess.run([os.path.join(bin_dir, "ddp-trace"), "summary", "--json", trace], capture_output=True, text=True)
    if done.returncode != 0:
        raise InputError(f"{trace}: ddp-trace summary failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def rows_of(folder):
    path = os.path.join(folder, "summary.csv")
    try:
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise InputError(f"{path}: expected a ddp-experiment summary.csv, got {error.strerror}") from None
    needed = {"kind", "status", "trace_dir", "predicted_dir"}
    if rows and not needed <= rows[0].keys():
        raise InputError(f"{path}: expected columns {', '.join(sorted(needed))}, got {', '.join(rows[0].keys())}")
    return rows


def measure(bin_dir, folders):
    table = {}
    for folder in folders:
        name = os.path.basename(os.path.normpath(folder))
        cache = {}
        for row in rows_of(folder):
            if row["status"] != "ok" or row["kind"] not in ("prediction", "reconstruction") or not row["predicted_dir"]:
                continue
            pair = []
            for column in ("trace_dir", "predicted_dir"):
                path = os.path.join(folder, row[column])
                if path not in cache:
                    cache[path] = summary(bin_dir, path)
                pair.append(cache[path])
            table.setdefault((name, row["kind"]), []).extend(bucket_errors(*pair))
    return {key: stats(errors) for key, errors in table.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", metavar="RESULTS/NAME")
    parser.add_argument("--json", metavar="OUT.json")
    parser.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "release", "bin"))
    args = parser.parse_args()
    try:
        table = measure(args.bin_dir, args.folders)
    except InputError as error:
        print(f"transfer_whatif.py: {error}", file=sys.stderr)
        return 2
    print(f"{'experiment':28} {'kind':15} {'buckets':>7} {'median |err| %':>15} {'p90 %':>7} {'median err %':>13}")
    for (name, kind), row in sorted(table.items()):
        if row["buckets"]:
            print(f"{name:28} {kind:15} {row['buckets']:7d} {row['median_abs_pct']:15.1f} {row['p90_abs_pct']:7.1f} "
                  f"{row['median_pct']:+13.1f}")
    if args.json:
        rows = [{"experiment": n, "kind": k, **row} for (n, k), row in sorted(table.items())]
        with open(args.json, "w") as handle:
            json.dump({"benchmark": "transfer_whatif", "rows": rows}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
