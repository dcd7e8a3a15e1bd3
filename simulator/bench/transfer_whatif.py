#!/usr/bin/env python3
"""transfer_whatif.py: does a what-if predict the communication, not only the iteration time?

  simulator/bench/transfer_whatif.py RESULTS/NAME [RESULTS/NAME ...] [--json OUT.json]

For ddp-experiment results folders (summary.csv, traces/, predictions/): every prediction row
(kind prediction, status ok) pairs a measured run of the changed configuration (trace_dir) with
the trace the replay predicted for it from the baseline (predicted_dir). Both are summarised
with `ddp-trace summary --json` and compared on three figures:

  comm/iter   total_allreduce_s_per_iter: each rank's time in all-reduces per iteration,
              waiting and queueing included (median over iterations of the mean over ranks)
  overlap     overlap_fraction: the share of that time hidden behind backward (difference in
              percentage points)
  transfer    per bucket of the same index and bytes in both, median_transfer_s: the network's
              time (trace/collective.hpp). With Gloo's two collectives in flight the split
              between neighbouring buckets is arbitrary, so this one scatters

A bucket-cap what-if checks the model at message sizes and queueing the baseline never had.
Reconstruction rows are tallied apart. Per experiment and kind it prints the pairs, the median
|error| and median signed error of comm/iter (%), the median |difference| of overlap (points)
and the median |error| of the bucket transfers (%). Standard library only. Bad input: one line
on stderr, exit 2.
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_folder import InputError, arguments, read_summary  # noqa: E402


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


def pair_errors(measured, predicted):
    """(comm/iter signed % error or None, overlap difference in points, bucket transfer % errors)."""
    comm = None
    if measured["total_allreduce_s_per_iter"] > 0:
        comm = 100 * (predicted["total_allreduce_s_per_iter"] / measured["total_allreduce_s_per_iter"] - 1)
    overlap = 100 * (predicted["overlap_fraction"] - measured["overlap_fraction"])
    return comm, overlap, bucket_errors(measured, predicted)


def median_abs(values):
    return statistics.median(abs(v) for v in values) if values else float("nan")


def stats(pairs):
    """pairs: pair_errors tuples -> the figures the table prints."""
    comm = [p[0] for p in pairs if p[0] is not None]
    transfers = [e for p in pairs for e in p[2]]
    return {"pairs": len(pairs), "comm_median_abs_pct": median_abs(comm),
            "comm_median_pct": statistics.median(comm) if comm else float("nan"),
            "overlap_median_abs_points": median_abs([p[1] for p in pairs]),
            "transfer_buckets": len(transfers), "transfer_median_abs_pct": median_abs(transfers)}


def summary(bin_dir, trace):
    done = subprocess.run([os.path.join(bin_dir, "ddp-trace"), "summary", "--json", trace], capture_output=True, text=True)
    if done.returncode != 0:
        raise InputError(f"{trace}: ddp-trace summary failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def measure(bin_dir, folders):
    table = {}
    for folder in folders:
        name = os.path.basename(os.path.normpath(folder))
        cache = {}
        for row in read_summary(folder, {"kind", "status", "trace_dir", "predicted_dir"}):
            if row["status"] != "ok" or row["kind"] not in ("prediction", "reconstruction") or not row["predicted_dir"]:
                continue
            pair = []
            for column in ("trace_dir", "predicted_dir"):
                path = os.path.join(folder, row[column])
                if path not in cache:
                    cache[path] = summary(bin_dir, path)
                pair.append(cache[path])
            table.setdefault((name, row["kind"]), []).append(pair_errors(*pair))
    return {key: stats(pairs) for key, pairs in table.items()}


def main(argv):
    try:
        args = arguments(__doc__, argv, json_help="also write the table here", bin_dir=True)
        table = measure(args.bin_dir, args.folders)
    except InputError as error:
        print(f"transfer_whatif.py: {error}", file=sys.stderr)
        return 2
    print(f"{'experiment':28} {'kind':15} {'pairs':>5} {'comm/iter |err| %':>18} {'signed %':>9} "
          f"{'overlap |diff| pts':>19} {'transfer |err| %':>17}")
    for (name, kind), row in sorted(table.items()):
        print(f"{name:28} {kind:15} {row['pairs']:5d} {row['comm_median_abs_pct']:18.1f} {row['comm_median_pct']:+9.1f} "
              f"{row['overlap_median_abs_points']:19.1f} {row['transfer_median_abs_pct']:17.1f}")
    if args.json:
        rows = [{"experiment": n, "kind": k, **row} for (n, k), row in sorted(table.items())]
        with open(args.json, "w") as handle:
            json.dump({"benchmark": "transfer_whatif", "rows": rows}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
