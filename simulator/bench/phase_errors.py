#!/usr/bin/env python3
"""phase_errors.py: where a what-if's prediction misses, phase by phase.

  simulator/bench/phase_errors.py RESULTS/NAME [RESULTS/NAME ...] [--json OUT.json]

For ddp-experiment results folders (experiments/whatif-*.toml): each prediction row of
summary.csv (kind prediction, status ok) pairs the measured run of the changed configuration
(trace_dir) with the replay's predicted trace of it (predicted_dir, the replay's run 0). Per
trace and rank, the median over iterations >= 2 of each phase in ms, as the clock saw it (a
slowed rank's sleeps included: the replay stretches its compute, it does not record sleeps):

  iteration          iteration_begin to iteration_end
  forward            forward_begin to forward_end
  autograd           backward_begin to the last gradient or bucket ready
  beside_transfers   the part of autograd with one of this rank's all-reduces in flight
  after_grads        the last gradient or bucket ready to backward_end (the all-reduces left
                     and the reducer's finalisation)
  optimizer          optimizer_begin to optimizer_end

Per experiment, point and rank it prints the median over pairs of predicted - measured for
each phase (quartiles in the JSON) and the median error_pct, then each point's measured phases
(median over its runs, baselines included): an iteration error that is the sum
of two larger phase errors of opposite sign is a model that compensates, not one that is right.
Per experiment and rank it also fits, over the measured traces of every row without a slowdown
or a delay (baselines and points: the bucket caps' folders), autograd = work + slope x
beside_transfers: how much longer autograd takes per ms an all-reduce of its own rank runs
beside it (0: compute does not feel the transfers; 1: it stops while they run). Fitted only
across at least 2 distinct points: within one configuration the transfers' share of autograd
barely moves, and the slope would fit run-to-run noise.

With several folders of one experiment (sittings of one spec), a last block pools their pairs
("all N folders"); its slope is the median of the folders' own (quartiles in the JSON), as the
machine's speed differs between sittings and one line through all of them would fit that.

Diagnosis only: it reads the measured runs a prediction cannot know. Standard library only.
Bad input: one line on stderr, exit 2.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_folder import arguments, read_summary, write_json  # noqa: E402
from stall_phases import InputError, intersections, read_events, trace_ranks, union_ms  # noqa: E402

PHASES = ["iteration", "forward", "autograd", "beside_transfers", "after_grads", "optimizer"]


def iteration_phases(events):
    """One rank's phases of one iteration in ms; ValueError or KeyError where an event is missing."""
    def t(name, pick=min):
        return pick(int(row["t_ns"]) for row in events[name]) / 1e6
    autograd_end = max(int(row["t_ns"]) for name in ("grad_ready", "bucket_ready") for row in events[name]) / 1e6
    autograd = [(t("backward_begin"), autograd_end)]
    transfers = [(int(b["t_ns"]) / 1e6, int(e["t_ns"]) / 1e6)
                 for b, e in zip(sorted(events["allreduce_begin"], key=lambda r: int(r["bucket"])),
                                 sorted(events["allreduce_end"], key=lambda r: int(r["bucket"])))]
    return {
        "iteration": t("iteration_end") - t("iteration_begin"),
        "forward": t("forward_end") - t("forward_begin"),
        "autograd": autograd_end - t("backward_begin"),
        "beside_transfers": union_ms(intersections(autograd, transfers)),
        "after_grads": t("backward_end") - autograd_end,
        "optimizer": t("optimizer_end") - t("optimizer_begin"),
    }


def trace_phases(trace_dir):
    """{rank: {phase: median ms over iterations >= 2}} of one trace folder; InputError where
    a rank has fewer than 5 complete iterations."""
    result = {}
    for rank in trace_ranks(trace_dir):
        name = f"rank-{rank}.events.csv"
        rows = []
        for iteration, events in sorted(read_events(os.path.join(trace_dir, name)).items()):
            if iteration < 2:
                continue
            try:
                rows.append(iteration_phases(events))
            except (KeyError, ValueError):
                continue  # incomplete
        if len(rows) < 5:
            raise InputError(f"{trace_dir}/{name}: expected at least 5 complete iterations after the first 2, "
                             f"got {len(rows)}")
        result[rank] = {phase: statistics.median(row[phase] for row in rows) for phase in PHASES}
    return result


def quartiles(values):
    ordered = sorted(values)
    n = len(ordered)
    return {"median": statistics.median(ordered), "q1": ordered[n // 4], "q3": ordered[(3 * n) // 4], "pairs": n}


def slope(points):
    """Least-squares slope and intercept of y on x over (x, y) points; None if x does not vary."""
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    if len(points) < 2:
        return None
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    if sxx <= 0:
        return None
    b = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sxx
    return {"slope": b, "work_ms": mean_y - b * mean_x, "traces": len(points)}


def analyse(folder):
    rows = read_summary(folder, ["experiment", "point", "kind", "status", "error_pct", "trace_dir", "predicted_dir",
                                 "slowdown"])
    cache = {}

    def phases_of(relative):
        path = os.path.join(folder, relative)
        if path not in cache:
            cache[path] = trace_phases(path)
        return cache[path]

    differences = defaultdict(lambda: defaultdict(list))  # [(point, rank)][phase]
    errors = defaultdict(list)  # [point]
    fit_points = defaultdict(dict)  # [rank][trace_dir]: (beside_transfers, autograd) measured
    fit_configurations = set()  # the points those traces ran
    measured_runs = defaultdict(lambda: defaultdict(list))  # [(point, rank)][phase], each run once
    seen = set()
    experiment = None
    for row in rows:
        if row["status"] != "ok":
            continue
        experiment = experiment or row["experiment"]
        if row["trace_dir"] not in seen:
            seen.add(row["trace_dir"])
            for rank, phases in phases_of(row["trace_dir"]).items():
                for phase in PHASES:
                    measured_runs[row["point"], rank][phase].append(phases[phase])
        if not (row["slowdown"] or row.get("delay") or row.get("delay_dist")):
            fit_configurations.add(row["point"])
            for rank, measured in phases_of(row["trace_dir"]).items():
                fit_points[rank][row["trace_dir"]] = (measured["beside_transfers"], measured["autograd"])
        if row["kind"] != "prediction":
            continue
        measured = phases_of(row["trace_dir"])
        predicted = phases_of(row["predicted_dir"])
        for rank in sorted(set(measured) & set(predicted)):
            for phase in PHASES:
                differences[row["point"], rank][phase].append(predicted[rank][phase] - measured[rank][phase])
        errors[row["point"]].append(float(row["error_pct"]))
    if not errors:
        raise InputError(f"{folder}/summary.csv: expected prediction rows with status ok, got none")
    raw = {"differences": differences, "errors": errors, "fit_points": fit_points,
           "fit_configurations": fit_configurations, "measured": measured_runs}
    return summarise(folder, experiment, raw), raw


def summarise(folder, experiment, raw):
    """The medians, quartiles and fits of one folder's (or pooled folders') raw pairs."""
    points = {}
    for (point, rank), per_phase in sorted(raw["differences"].items()):
        entry = points.setdefault(point, {"error_pct": quartiles(raw["errors"][point]), "ranks": {}})
        entry["ranks"][str(rank)] = {phase: quartiles(values) for phase, values in per_phase.items()}
    measured = {}
    for (point, rank), per_phase in sorted(raw["measured"].items()):
        measured.setdefault(point, {})[str(rank)] = {phase: quartiles(values) for phase, values in per_phase.items()}
    fits = {}
    for rank, by_trace in sorted(raw["fit_points"].items()):
        fit = slope(list(by_trace.values())) if len(raw["fit_configurations"]) >= 2 else None
        if fit:
            fit["configurations"] = len(raw["fit_configurations"])
        fits[str(rank)] = fit
    return {"folder": folder, "experiment": experiment, "points": points, "measured": measured,
            "autograd_vs_transfers": fits}


def extend_nested(target, source):
    """target[key][phase] += source[key][phase] for every key and phase of source."""
    for key, per_phase in source.items():
        for phase, values in per_phase.items():
            target[key][phase].extend(values)


def pooled(analysed):
    """Per experiment given in more than one folder: its folders' pairs and traces together."""
    by_experiment = defaultdict(list)
    for result, raw in analysed:
        by_experiment[result["experiment"]].append((result, raw))
    results = []
    for experiment, members in by_experiment.items():
        if len(members) < 2:
            continue
        together = {"differences": defaultdict(lambda: defaultdict(list)), "errors": defaultdict(list),
                    "fit_points": defaultdict(dict), "fit_configurations": set(),
                    "measured": defaultdict(lambda: defaultdict(list))}
        for _, raw in members:
            extend_nested(together["differences"], raw["differences"])
            extend_nested(together["measured"], raw["measured"])
            for point, values in raw["errors"].items():
                together["errors"][point].extend(values)
        result = summarise(f"all {len(members)} folders", experiment, together)
        for rank in sorted({rank for _, raw in members for rank in raw["fit_points"]}):
            # Each folder's own fit, as summarise() made it for that folder's block.
            fits = [member["autograd_vs_transfers"].get(str(rank)) for member, _ in members]
            fits = [fit for fit in fits if fit]
            if not fits:
                result["autograd_vs_transfers"][str(rank)] = None
                continue
            spread = quartiles([fit["slope"] for fit in fits])
            result["autograd_vs_transfers"][str(rank)] = {
                "slope": spread["median"], "slope_q1": spread["q1"], "slope_q3": spread["q3"],
                "work_ms": statistics.median(fit["work_ms"] for fit in fits), "folders": len(fits),
                "traces": sum(fit["traces"] for fit in fits),
                "configurations": max(fit["configurations"] for fit in fits)}
        results.append(result)
    return results


def main(argv):
    try:
        args = arguments(__doc__, argv, json_help="also write every point's phases, quartiles and fits here")
        analysed = [analyse(folder) for folder in args.folders]
    except InputError as error:
        print(f"phase_errors.py: {error}", file=sys.stderr)
        return 2
    results = [result for result, _ in analysed] + pooled(analysed)
    for result in results:
        print(f"{result['folder']} ({result['experiment']}): predicted - measured, median over pairs, ms")
        print("  point          rank  error%  " + "  ".join(f"{phase:>16s}" for phase in PHASES))
        for point, entry in result["points"].items():
            for rank, per_phase in entry["ranks"].items():
                print(f"  {point:14s} {rank:>4s} {entry['error_pct']['median']:+7.2f}  " +
                      "  ".join(f"{per_phase[phase]['median']:+16.2f}" for phase in PHASES))
        print("  measured, median over runs, ms")
        for point, ranks in result["measured"].items():
            for rank, per_phase in ranks.items():
                print(f"  {point:14s} {rank:>4s} {per_phase['iteration']['pairs']:>2d} runs  " +
                      "  ".join(f"{per_phase[phase]['median']:16.2f}" for phase in PHASES))
        for rank, fit in result["autograd_vs_transfers"].items():
            if fit and "folders" in fit:
                print(f"  rank {rank}: autograd = {fit['work_ms']:.1f} ms + {fit['slope']:.3f} x beside_transfers "
                      f"(median of {fit['folders']} folders' fits, quartiles {fit['slope_q1']:.3f}-{fit['slope_q3']:.3f})")
            elif fit:
                print(f"  rank {rank}: autograd = {fit['work_ms']:.1f} ms + {fit['slope']:.3f} x beside_transfers "
                      f"({fit['traces']} measured traces of {fit['configurations']} configurations)")
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
