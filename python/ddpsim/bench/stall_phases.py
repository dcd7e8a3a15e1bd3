"""stall_phases.py: where iterations after long stalls gain, per phase and rank.

  python -m ddpsim.bench.stall_phases TRACE_DIR [TRACE_DIR ...] [--rank 1] [--whole] [--json OUT.json]

For traces of runs with random stalls on one rank (ddp-train --delay-dist, e.g. the
whatif-delay spec's), the iterations are split by the stalled rank's stall length into thirds;
per trace and per rank it prints the median of each phase in the shortest third and in the
longest: forward, autograd (backward_begin to the last gradient ready), backward
(backward_begin to backward_end, with the all-reduce waits), all-reduce after the last gradient,
and the optimizer step; and how much of the autograd ran beside this rank's own all-reduces
(begin to end) and beside another rank's compute (forward, autograd, step; iterations i-1 to
i+1). A model that replays the baseline's phases predicts the same for both
thirds; where they differ is what it misses. Iterations 0 and 1 (bucket rebuild) are skipped.
Forward, autograd and the optimizer step exclude the sleeps of ddp-train --slowdown recorded in them (delay events
of kind slowdown): their compute alone. --whole: the medians over all iterations instead (for
runs without stalls, e.g. a slowed rank's against the baseline's), reported as "short".
Bad input: one line on stderr, exit 2. Standard library only.
"""
import argparse
import csv
import json
import os
import statistics
import sys
from collections import defaultdict

from ddpsim.input_error import InputError

PHASES = ["forward_ms", "autograd_ms", "backward_ms", "allreduce_after_grads_ms", "optimizer_ms",
          "autograd_with_transfers_ms", "autograd_with_peers_ms"]


def read_events(path):
    """{iteration: {event: [t_ns or dur_ns rows]}} of one rank's events CSV."""
    iterations = defaultdict(lambda: defaultdict(list))
    try:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                iterations[int(row["iteration"])][row["event"]].append(row)
    except OSError as error:
        raise InputError(path, "a readable rank events CSV", error.strerror) from None
    except (KeyError, ValueError) as error:
        raise InputError(path, "ddpsim's events CSV (rank,iteration,event,t_ns,...)", error) from None
    return iterations


def union_ms(intervals):
    """Length of the union of (begin, end) intervals."""
    total, reach = 0.0, float("-inf")
    for begin, end in sorted(intervals):
        if end > reach:
            total += end - max(begin, reach)
            reach = end
    return total


def intersections(first, second):
    return [(max(a, c), min(b, d)) for a, b in first for c, d in second if min(b, d) > max(a, c)]


def compute_spans(events):
    """One iteration's compute as (begin, end) ms spans per phase, --slowdown's sleeps cut out:
    {"forward", "autograd" (backward_begin to the last gradient), "optimizer"}. ValueError
    where an event is missing."""
    def t(name, pick=min):
        return pick(int(row["t_ns"]) for row in events[name]) / 1e6
    sleeps = sorted((int(row["t_ns"]) / 1e6, (int(row["t_ns"]) + int(row["dur_ns"])) / 1e6)
                    for row in events["delay"] if row["kind"] == "slowdown")
    bounds = {"forward": (t("forward_begin"), t("forward_end")),
              "autograd": (t("backward_begin"), t("grad_ready", max)),
              "optimizer": (t("optimizer_begin"), t("optimizer_end"))}
    spans = {}
    for name, (begin, end) in bounds.items():
        spans[name] = []
        for sleep_begin, sleep_end in sleeps:
            if begin <= sleep_begin < end:
                spans[name].append((begin, sleep_begin))
                begin = sleep_end
        if end > begin:
            spans[name].append((begin, end))
    return spans


def trace_ranks(trace_dir):
    """The ranks of a run's trace folder (its rank-R.events.csv files), sorted; InputError for a
    folder that cannot be read or holds none."""
    try:
        names = os.listdir(trace_dir)
    except OSError as error:
        raise InputError(trace_dir, "a run's trace folder", error.strerror) from None
    ranks = sorted(int(n[len("rank-"):-len(".events.csv")]) for n in names
                   if n.startswith("rank-") and n.endswith(".events.csv"))
    if not ranks:
        raise InputError(trace_dir, "rank-R.events.csv files", "none")
    return ranks


def iteration_compute(trace_dir, rank=0):
    """(median compute ms, median --slowdown sleeps) per iteration from 2 on of one rank: forward,
    autograd and the optimizer step with the sleeps cut out (compute_spans). InputError for
    fewer than 5 complete iterations."""
    events = read_events(os.path.join(trace_dir, f"rank-{rank}.events.csv"))
    computes, sleeps = [], []
    for iteration in sorted(events):
        if iteration < 2:
            continue
        try:
            spans = compute_spans(events[iteration])
        except ValueError:
            continue  # incomplete
        computes.append(sum(union_ms(phase) for phase in spans.values()))
        sleeps.append(sum(1 for row in events[iteration]["delay"] if row["kind"] == "slowdown"))
    if len(computes) < 5:
        raise InputError(trace_dir, "at least 5 complete iterations after the first 2", len(computes))
    return statistics.median(computes), statistics.median(sleeps)


def phases(events, spans):
    """The phases of one iteration of one rank in ms (its compute_spans given). ValueError
    where an event is missing."""
    def t(name, pick=min):
        return pick(int(row["t_ns"]) for row in events[name]) / 1e6
    return {
        "forward_ms": union_ms(spans["forward"]),
        "autograd_ms": union_ms(spans["autograd"]),
        "backward_ms": t("backward_end") - t("backward_begin"),
        "allreduce_after_grads_ms": t("allreduce_end", max) - t("grad_ready", max),
        "optimizer_ms": union_ms(spans["optimizer"]),
    }


def stall_ms(events):
    return sum(int(row["dur_ns"]) for row in events["delay"]
               if row["dur_ns"] and row["kind"] in ("delay", "distribution")) / 1e6


def analyse(trace_dir, stalled_rank, whole=False):
    ranks = trace_ranks(trace_dir)
    if stalled_rank not in ranks:
        raise InputError(trace_dir, f"rank-{stalled_rank}.events.csv (--rank)", f"ranks {ranks}")
    events = {rank: read_events(os.path.join(trace_dir, f"rank-{rank}.events.csv")) for rank in ranks}
    spans = {}  # (rank, iteration): its compute_spans, or None where an event is missing
    for rank in ranks:
        for iteration, iteration_events in events[rank].items():
            try:
                spans[rank, iteration] = compute_spans(iteration_events)
            except ValueError:
                spans[rank, iteration] = None
    rows = []
    for iteration in sorted(events[stalled_rank]):
        if iteration < 2:
            continue
        try:
            per_rank = {rank: phases(events[rank][iteration], spans[rank, iteration]) for rank in ranks}
        except (KeyError, TypeError, ValueError):  # an incomplete iteration on some rank
            continue
        for rank in ranks:
            autograd = spans[rank, iteration]["autograd"]
            mine = events[rank][iteration]
            transfers = [(int(b["t_ns"]) / 1e6, int(e["t_ns"]) / 1e6)
                         for b, e in zip(mine["allreduce_begin"], mine["allreduce_end"])]
            peers = [span for other in ranks if other != rank for near in (iteration - 1, iteration, iteration + 1)
                     if spans.get((other, near)) for phase in spans[other, near].values() for span in phase]
            per_rank[rank]["autograd_with_transfers_ms"] = union_ms(intersections(autograd, transfers))
            per_rank[rank]["autograd_with_peers_ms"] = union_ms(intersections(autograd, peers))
        rows.append((stall_ms(events[stalled_rank][iteration]), per_rank))
    if len(rows) < 6:
        raise InputError(trace_dir, "at least 6 complete iterations after the first 2", len(rows))
    rows.sort(key=lambda row: row[0])
    third = len(rows) if whole else len(rows) // 3
    groups = {"short": rows[:third]} if whole else {"short": rows[:third], "long": rows[-third:]}
    result = {"trace": trace_dir, "stalled_rank": stalled_rank, "iterations_per_third": third}
    for name, group in groups.items():
        result[name] = {"stall_ms": statistics.median(row[0] for row in group),
                        "ranks": {str(rank): {phase: statistics.median(row[1][rank][phase] for row in group)
                                              for phase in PHASES} for rank in ranks}}
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("traces", nargs="+", help="trace directories of runs with stalls")
    parser.add_argument("--rank", type=int, default=1, help="the stalled rank (default 1)")
    parser.add_argument("--whole", action="store_true", help="medians over all iterations, no thirds")
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args(argv)
    try:
        results = [analyse(trace, args.rank, args.whole) for trace in args.traces]
    except InputError as error:
        print(f"stall_phases.py: {error}", file=sys.stderr)
        return 2
    for result in results:
        groups = [name for name in ("short", "long") if name in result]
        if args.whole:
            print(f"{result['trace']}: {result['iterations_per_third']} iterations")
        else:
            print(f"{result['trace']}: stall {result['short']['stall_ms']:.1f} ms (shortest third) vs "
                  f"{result['long']['stall_ms']:.1f} ms (longest), {result['iterations_per_third']} iterations each")
        for rank in result["short"]["ranks"]:
            cells = "  ".join(phase[:-3].replace("autograd_with_", "autograd beside ") + " " +
                              "/".join(f"{result[g]['ranks'][rank][phase]:.1f}" for g in groups) for phase in PHASES)
            print(f"  rank {rank} (ms{'' if args.whole else ', short/long'}): {cells}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
