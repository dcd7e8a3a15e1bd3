#!/usr/bin/env python3
"""speed_floor.py: a sitting's what-if errors against the best any model could do on its runs.

  simulator/bench/speed_floor.py RESULTS/NAME [RESULTS/NAME ...] [--json OUT.json]

For ddp-experiment results folders (experiments/whatif-*.toml, kept traces and predictions).
Two questions a noisy machine raises about a what-if error: how much of it is the machine's
speed during the measured run, and how small could any model make it from runs like these.

  model      each prediction row (kind prediction, status ok): |error_pct|
  at speed   the same prediction had its compute gone at the measured run's speed: its
             iteration P x (1 + (g - 1) x c) against the measured M, g = the ranks' mean
             forward in the measured run / in the predicted trace (forward does no
             communication and, beside what the model already predicts, the same work at
             every point: the machine's speed gauge, as in run_drift.py, here of both ranks to
             halve its own noise), c = the ranks' mean forward + autograd + optimizer step as a
             share of their predicted iteration (phase_errors.py's phases, medians over
             iterations >= 2). It reads the measured run, which no prediction can know:
             diagnosis only, never a prediction.
  floor      each measured run of a point (its kind reconstruction row) predicted by the median
             of its point's other runs in the folder: what a model that knew the changed
             configuration exactly would score from a pooled baseline of that many runs
             (the specs pool the baseline's repetitions, [predict] pool_baselines); and the
             same at the run's speed, with g and c from the other runs' medians.

Per folder and, for an experiment given in several folders (sittings of one spec), for all of
them together: pairs or runs, median and 90th percentile of the |error| %. A model whose
errors match the floor's is as right as runs of this length on this machine can show.
Standard library only. Bad input: one line on stderr, exit 2.
"""
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from phase_errors import trace_phases  # noqa: E402
from pooled_baselines import p90  # noqa: E402
from results_folder import arguments, read_summary, write_json  # noqa: E402
from stall_phases import InputError  # noqa: E402

COLUMNS = ["experiment", "point", "kind", "status", "error_pct", "measured_iter_s", "predicted_iter_s", "trace_dir",
           "predicted_dir"]


def at_speed_pct(predicted_s, measured_s, gauge, compute_share):
    """The error % of predicted_s with its compute share stretched by the speed gauge."""
    return 100 * (predicted_s * (1 + (gauge - 1) * compute_share) / measured_s - 1)


def gauges(phases):
    """(forward ms, compute share of the iteration) of one trace, each the mean over its ranks."""
    forward = statistics.fmean(rank["forward"] for rank in phases.values())
    share = statistics.fmean((rank["forward"] + rank["autograd"] + rank["optimizer"]) / rank["iteration"]
                             for rank in phases.values())
    return forward, share


def analyse(folder):
    """{experiment, model: [(error, at speed)], floor: [(error, at speed)]} of one folder."""
    rows = read_summary(folder, COLUMNS)
    cache = {}

    def phases_of(relative):
        path = os.path.join(folder, relative)
        if path not in cache:
            cache[path] = gauges(trace_phases(path))
        return cache[path]

    experiment, model, runs = None, [], defaultdict(list)
    for row in rows:
        if row["status"] != "ok" or not row["measured_iter_s"]:
            continue
        experiment = experiment or row["experiment"]
        measured_forward, measured_share = phases_of(row["trace_dir"])
        measured_s = float(row["measured_iter_s"])
        if row["kind"] == "reconstruction":
            runs[row["point"]].append((measured_s, measured_forward, measured_share))
        elif row["kind"] == "prediction" and row["error_pct"] and row["predicted_dir"]:
            predicted_forward, predicted_share = phases_of(row["predicted_dir"])
            model.append((float(row["error_pct"]),
                          at_speed_pct(float(row["predicted_iter_s"]), measured_s,
                                       measured_forward / predicted_forward, predicted_share)))
    if not model:
        raise InputError(f"{os.path.join(folder, 'summary.csv')}: expected prediction rows with status ok, got none")
    floor = []
    for point_runs in runs.values():
        for index, (measured_s, forward, _) in enumerate(point_runs):
            others = point_runs[:index] + point_runs[index + 1:]
            if not others:
                continue
            predicted_s = statistics.median(run[0] for run in others)
            gauge = forward / statistics.median(run[1] for run in others)
            share = statistics.median(run[2] for run in others)
            floor.append((100 * (predicted_s / measured_s - 1), at_speed_pct(predicted_s, measured_s, gauge, share)))
    return {"folder": folder, "experiment": experiment, "model": model, "floor": floor}


def summary(pairs):
    """Median and p90 of |error| and of |error at speed| over (error, at speed) pairs."""
    if not pairs:
        return None
    plain = [abs(error) for error, _ in pairs]
    at_speed = [abs(error) for _, error in pairs]
    return {"n": len(pairs), "median": statistics.median(plain), "p90": p90(plain),
            "at_speed_median": statistics.median(at_speed), "at_speed_p90": p90(at_speed)}


def blocks(analysed):
    """One block per folder, then per experiment in several folders one with all their pairs."""
    result = [{"folder": a["folder"], "experiment": a["experiment"], "model": summary(a["model"]),
               "floor": summary(a["floor"])} for a in analysed]
    by_experiment = defaultdict(list)
    for a in analysed:
        by_experiment[a["experiment"]].append(a)
    for experiment, members in by_experiment.items():
        if len(members) > 1:
            result.append({"folder": f"all {len(members)} folders", "experiment": experiment,
                           "model": summary([pair for a in members for pair in a["model"]]),
                           "floor": summary([pair for a in members for pair in a["floor"]])})
    return result


def main(argv):
    try:
        args = arguments(__doc__, argv, json_help="also write every block's numbers here")
        results = blocks([analyse(folder) for folder in args.folders])
    except InputError as error:
        print(f"speed_floor.py: {error}", file=sys.stderr)
        return 2
    print("|error| %, median / p90: the model's predictions, the floor's (each run from its point's other runs);"
          " 'at speed': with the measured run's speed known (diagnosis only)")
    print(f"{'experiment':<18} {'folder':<28} {'pairs':>5} {'model':>11} {'at speed':>11} "
          f"{'runs':>5} {'floor':>11} {'at speed':>11}")

    def cell(block, key):
        return f"{block[key]:4.1f}" if block else "   -"

    for r in results:
        m, f = r["model"], r["floor"]
        print(f"{r['experiment']:<18} {r['folder']:<28} "
              f"{m['n']:>5} {cell(m, 'median')} / {cell(m, 'p90')} {cell(m, 'at_speed_median')} / {cell(m, 'at_speed_p90')} "
              f"{f['n'] if f else 0:>5} {cell(f, 'median')} / {cell(f, 'p90')} "
              f"{cell(f, 'at_speed_median')} / {cell(f, 'at_speed_p90')}")
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
