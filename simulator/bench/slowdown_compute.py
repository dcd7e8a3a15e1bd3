#!/usr/bin/env python3
"""slowdown_compute.py: did the ranks of a slowdown what-if compute as its baseline said?

  simulator/bench/slowdown_compute.py RESULTS/NAME [RESULTS/NAME ...] [--json OUT.json]

For ddp-experiment results folders of a slowdown spec (experiments/whatif-*slowdown.toml):
`ddp-sim replay BASELINE --slowdown R=F` assumes that rank R computes what the baseline trace
says, sleeps (F - 1) times as long (how `ddp-train --slowdown` emulates a straggler), and pays
the spec's --sleep-resume-cost after each sleep; its peers compute as the trace says, paced by
the co-run profile. Per prediction pair, this compares each rank's compute per iteration in the
measured run with the baseline run's (forward + autograd + optimizer step, the sleeps cut out,
median over iterations >= 2; stall_phases.iteration_compute). Per experiment and point it prints:

  pairs          prediction rows (kind prediction, status ok) of that point
  median err     of their error_pct
  rank R x       median of the measured / baseline compute ratio of every rank
  extra/sleep    the slowed ranks' (measured - baseline compute) / sleeps per iteration, in ms:
                 what the spec's --sleep-resume-cost stands for, measured in these runs
  r              (the experiment's row) Pearson's r between each pair's error and the slowed
                 rank's log compute ratio: near -1 when the slowed rank's extra compute is what
                 the predictions miss

Diagnosis only: it reads the measured runs a prediction cannot know. Standard library only.
Bad input: one line on stderr, exit 2.
"""
import functools
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_folder import arguments, read_summary, write_json  # noqa: E402
from run_drift import pearson  # noqa: E402
from stall_phases import InputError, iteration_compute, trace_ranks  # noqa: E402


def slowed_ranks(text, where):
    """{rank: factor > 1} of a summary's slowdown column ("1=2", "0=1.5,1=3")."""
    ranks = {}
    for item in filter(None, text.split(",")):
        rank, _, factor = item.partition("=")
        try:
            ranks[int(rank)] = float(factor)
        except ValueError:
            raise InputError(f"{where}: expected a slowdown column like 1=2, got {text!r}") from None
    return {rank: factor for rank, factor in ranks.items() if factor > 1}


def experiment_pairs(folder):
    """Every prediction pair of one results folder with each rank's compute ratio."""
    summary = os.path.join(folder, "summary.csv")
    rows = read_summary(folder, {"kind", "status", "error_pct", "trace_dir", "replayed_trace", "point",
                                 "slowdown"})
    compute = functools.lru_cache(maxsize=None)(iteration_compute)  # a baseline serves every point

    pairs = []
    for row in rows:
        if row["kind"] != "prediction" or row["status"] != "ok" or row["error_pct"] == "":
            continue
        slowed = slowed_ranks(row["slowdown"], summary)
        measured = os.path.join(folder, row["trace_dir"])
        baseline = os.path.join(folder, row["replayed_trace"])
        ranks = trace_ranks(measured)
        if trace_ranks(baseline) != ranks:
            raise InputError(f"{baseline}: expected the ranks of {measured}, got others")
        ratio, extra = {}, []
        for rank in ranks:
            (after, sleeps), (before, _) = compute(measured, rank), compute(baseline, rank)
            ratio[rank] = after / before
            if rank in slowed and sleeps > 0:
                extra.append((after - before) / sleeps)
        pairs.append({"point": row["point"], "error_pct": float(row["error_pct"]), "slowed": sorted(slowed),
                      "compute_ratio": {str(rank): value for rank, value in ratio.items()},
                      "extra_ms_per_sleep": statistics.median(extra) if extra else None})
    if not pairs:
        raise InputError(f"{summary}: expected prediction rows with status ok, got none")
    return pairs


def summarise(name, pairs):
    """Rows per point, then the experiment's: pairs, median error, per-rank ratios, extra/sleep, r."""
    ranks = sorted({rank for pair in pairs for rank in pair["compute_ratio"]}, key=int)
    groups = {}
    for pair in pairs:
        groups.setdefault(pair["point"], []).append(pair)
    rows = []
    for point, group in list(groups.items()) + [("all", pairs)]:
        extra = [p["extra_ms_per_sleep"] for p in group if p["extra_ms_per_sleep"] is not None]
        r = None
        if point == "all":
            with_slowed = [p for p in group if p["slowed"]]
            r = pearson([p["error_pct"] for p in with_slowed],
                        [math.log(p["compute_ratio"][str(p["slowed"][0])]) for p in with_slowed])
        rows.append({"experiment": name, "point": point, "pairs": len(group),
                     "median_error_pct": statistics.median(p["error_pct"] for p in group),
                     "compute_ratio": {rank: statistics.median(p["compute_ratio"][rank] for p in group)
                                       for rank in ranks},
                     "extra_ms_per_sleep": statistics.median(extra) if extra else None,
                     "r": r if r == r else None})  # None, not NaN, in JSON
    return rows


def main(argv):
    try:
        args = arguments(__doc__, argv, json_help="also write every pair and the table here")
        results = []
        for folder in args.folders:
            name = os.path.basename(os.path.normpath(folder))
            pairs = experiment_pairs(folder)
            results.append({"experiment": name, "rows": summarise(name, pairs), "pairs": pairs})
    except InputError as error:
        print(f"slowdown_compute.py: {error}", file=sys.stderr)
        return 2
    for result in results:
        ranks = list(result["rows"][0]["compute_ratio"])
        print(f"{'experiment':<26} {'point':<14} {'pairs':>5} {'median err %':>13} "
              + " ".join(f"{'rank ' + rank + ' x':>9}" for rank in ranks) + f" {'extra/sleep ms':>15} {'r':>6}")
        for row in result["rows"]:
            extra = "-" if row["extra_ms_per_sleep"] is None else f"{row['extra_ms_per_sleep']:.3f}"
            r = "" if row["point"] != "all" else "-" if row["r"] is None else f"{row['r']:+.2f}"
            print(f"{row['experiment']:<26} {row['point']:<14} {row['pairs']:>5} {row['median_error_pct']:>+13.1f} "
                  + " ".join(f"{row['compute_ratio'][rank]:>9.3f}" for rank in ranks) + f" {extra:>15} {r:>6}")
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
