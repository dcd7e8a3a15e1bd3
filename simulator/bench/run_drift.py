#!/usr/bin/env python3
"""run_drift.py: how much of a sitting's what-if errors is the machine changing speed between runs.

  simulator/bench/run_drift.py RESULTS/NAME [RESULTS/NAME ...] [--json OUT.json]

For ddp-experiment results folders (summary.csv and traces/): every prediction replays one
repetition's baseline trace and is compared with another run, so a machine that runs faster or
slower between the two moves the error though the model is right. Rank 0's forward pass is the
speed gauge: it does no communication and, in a cap or world-size sweep, the same work at every
point (beside a slowed or stalled peer it also runs faster on shared cores, which the model
predicts, so there the gauge mixes both). Per experiment it prints:

  pairs          the prediction rows (kind prediction, status ok)
  r              Pearson's r between each prediction's error (error_pct) and the speed change
                 100 (f_baseline / f_measured - 1), f the run's median forward time over
                 iterations >= 1: positive when the measured run ran faster than its baseline
  median |err|   of those predictions
  spread         sd of log(f / the median f of its point) over every run, in % (the machine's
                 run-to-run speed noise; 0 on a machine that holds still)
  lag-1          autocorrelation of that series in the order the runs started: near 0 when each
                 run draws its speed anew, near 1 when the speed comes in phases many runs long

A high r with a spread of several % says a sitting's misses are the machine's. Standard library
only. Bad input: one line on stderr, exit 2.
"""
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_folder import arguments, read_summary, write_json  # noqa: E402
from stall_phases import InputError, read_events  # noqa: E402  (the events CSV reader and its errors)


def forward_ms(trace_dir):
    """(median forward ms over iterations >= 1, first event's t_ns) of rank 0."""
    path = os.path.join(trace_dir, "rank-0.events.csv")
    events = read_events(path)
    try:
        first = min(int(row["t_ns"]) for iteration in events.values() for rows in iteration.values() for row in rows)
        lengths = [(int(e["forward_end"][0]["t_ns"]) - int(e["forward_begin"][0]["t_ns"])) / 1e6
                   for i, e in events.items() if i >= 1 and e["forward_begin"] and e["forward_end"]]
    except ValueError as error:
        raise InputError(f"{path}: expected ddpsim's events CSV (rank,iteration,event,t_ns,...), got {error}") from None
    if not lengths:
        raise InputError(f"{path}: expected forward passes in iterations >= 1, got none")
    return statistics.median(lengths), first


def pearson(xs, ys):
    """Pearson's r; NaN for fewer than 3 points or a constant series."""
    try:
        return statistics.correlation(xs, ys) if len(xs) >= 3 else float("nan")
    except statistics.StatisticsError:
        return float("nan")


def experiment_drift(folder):
    """{experiment, pairs, r, median_abs_error_pct, spread_pct, lag1, runs} of one results folder."""
    rows = read_summary(folder, {"kind", "status", "error_pct", "trace_dir", "replayed_trace"})
    traces = os.path.join(folder, "traces")
    runs = {}  # name -> (forward ms, start t_ns)
    for name in sorted(os.listdir(traces)) if os.path.isdir(traces) else []:
        if re.search(r"-rep\d+$", name):
            runs[name] = forward_ms(os.path.join(traces, name))
    if not runs:
        raise InputError(f"{traces}: expected run traces (POINT-repR folders), got none")
    errors, changes = [], []
    for row in rows:
        if row["kind"] != "prediction" or row["status"] != "ok" or row["error_pct"] == "":
            continue
        measured, baseline = os.path.basename(row["trace_dir"]), os.path.basename(row["replayed_trace"])
        if measured not in runs or baseline not in runs:
            raise InputError(f"{os.path.join(folder, 'summary.csv')}: expected traces of {measured} and "
                             f"{baseline} in {traces}")
        errors.append(float(row["error_pct"]))
        changes.append(100 * (runs[baseline][0] / runs[measured][0] - 1))
    by_point = {}
    for name, (forward, _) in runs.items():
        by_point.setdefault(re.sub(r"-rep\d+$", "", name), []).append(forward)
    ordered = sorted(runs.items(), key=lambda item: item[1][1])
    speed = [math.log(forward / statistics.median(by_point[re.sub(r"-rep\d+$", "", name)]))
             for name, (forward, _) in ordered]
    return {"experiment": os.path.basename(os.path.normpath(folder)), "pairs": len(errors),
            "r": pearson(errors, changes),
            "median_abs_error_pct": statistics.median(abs(e) for e in errors) if errors else float("nan"),
            "spread_pct": 100 * statistics.pstdev(speed) if len(speed) > 1 else float("nan"),
            "lag1": pearson(speed[:-1], speed[1:]), "runs": len(runs),
            "error_pct": errors, "speed_change_pct": changes}


def main(argv):
    try:
        args = arguments(__doc__, argv, json_help="also write every pair's error and speed change here")
        results = [experiment_drift(folder) for folder in args.folders]
    except InputError as error:
        print(f"run_drift.py: {error}", file=sys.stderr)
        return 2
    print(f"{'experiment':<26} {'pairs':>5} {'r':>6} {'median |err| %':>15} {'runs':>5} {'spread %':>9} {'lag-1':>6}")
    for d in results:
        print(f"{d['experiment']:<26} {d['pairs']:>5} {d['r']:>+6.2f} {d['median_abs_error_pct']:>15.1f} "
              f"{d['runs']:>5} {d['spread_pct']:>9.1f} {d['lag1']:>+6.2f}")
    if args.json:
        clean = [{key: None if isinstance(value, float) and math.isnan(value) else value
                  for key, value in d.items()} for d in results]
        write_json(args.json, clean)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
