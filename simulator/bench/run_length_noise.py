#!/usr/bin/env python3
"""run_length_noise.py: how much of a run's median iteration time is the machine's, by run length.

  simulator/bench/run_length_noise.py --out OUT.json [--lengths 30,100] [--rounds 10]
      [--world-size 2] [--bin-dir build/release/bin] -- DDP_TRAIN_ARGS...

Every what-if pair compares a prediction with one measured run's median iteration, so the
spread of that median over repeated runs of one configuration is the floor of every pair's
error. Per round, one run of each length in turn (A B A B ...: CPU speed drifts here). Per
length, the spread of the runs' medians about their median: sd of the logs, median and p90 of
|log deviation| (as percentages). If the speed moves within a run, longer runs average more of
it and spread less; if it moves only between runs, length does not help. The JSON has every run.
Bad input: one line on stderr, exit 2; a failed run: its log's path, exit 1.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_jobs import add_job_arguments, launch, setup_error, trace_root  # noqa: E402


def run_median(bin_dir, trace_dir, world_size, iterations, train_args):
    launch(bin_dir, trace_dir, ["--iterations", str(iterations), "--quiet", *train_args], world_size)
    summary = subprocess.run([os.path.join(bin_dir, "ddp-trace"), "summary", "--json", trace_dir],
                             check=True, capture_output=True, text=True).stdout
    return json.loads(summary)["median_iteration_s"]


def spread(medians):
    """sd of log, median and p90 of |log deviation| from the median (taken of the logs), in percent."""
    logs = [math.log(m) for m in medians]
    log_centre = statistics.median(logs)
    deviations = sorted(abs(x - log_centre) for x in logs)
    return {"runs": len(medians), "median_s": math.exp(log_centre),
            "sd_log_pct": 100 * statistics.stdev(logs) if len(logs) > 1 else 0.0,
            "median_abs_dev_pct": 100 * statistics.median(deviations),
            "p90_abs_dev_pct": 100 * deviations[int(0.9 * (len(deviations) - 1))]}


def parse_lengths(text):
    try:
        lengths = [int(part) for part in text.split(",")]
    except ValueError:
        lengths = []
    if len(lengths) < 1 or any(n < 4 for n in lengths) or len(set(lengths)) != len(lengths):
        raise ValueError(f"--lengths: expected distinct iteration counts >= 4 separated by commas, got '{text}'")
    return lengths


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="30,100", help="iterations per run, one per kind of run (default 30,100)")
    parser.add_argument("--rounds", type=int, default=10, help="runs of each length (default 10)")
    parser.add_argument("--world-size", type=int, default=2, help="ranks per run (default 2)")
    add_job_arguments(parser, "ddp-launch, ddp-train and ddp-trace")
    args = parser.parse_args(argv)
    try:
        lengths = parse_lengths(args.lengths)
    except ValueError as error:
        print(f"run_length_noise.py: {error}", file=sys.stderr)
        return 2
    if args.rounds < 2 or args.world_size < 1:
        print(f"run_length_noise.py: --rounds: expected >= 2 and --world-size >= 1, got {args.rounds} and {args.world_size}",
              file=sys.stderr)
        return 2
    if "--iterations" in args.train_args:
        print("run_length_noise.py: --iterations: expected only in --lengths, not among ddp-train's flags", file=sys.stderr)
        return 2
    refusal = setup_error("run_length_noise.py", args.bin_dir, ("ddp-launch", "ddp-train", "ddp-trace"), args.out)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    root = trace_root(args.keep, "run-length-")
    runs = []
    try:
        for rnd in range(args.rounds):
            for iterations in lengths:
                trace_dir = os.path.join(root, f"it{iterations}-round{rnd}")
                median = run_median(args.bin_dir, trace_dir, args.world_size, iterations, args.train_args)
                runs.append({"round": rnd, "iterations": iterations, "median_iteration_s": median})
                print(f"round {rnd}: {iterations} iterations, median {1e3 * median:.2f} ms", flush=True)
    except (RuntimeError, subprocess.CalledProcessError) as error:
        print(f"run_length_noise.py: {error}", file=sys.stderr)
        return 1
    by_length = {str(n): spread([r["median_iteration_s"] for r in runs if r["iterations"] == n]) for n in lengths}
    for n, s in by_length.items():
        print(f"{n:>5} iterations: sd(log) {s['sd_log_pct']:.2f} %, median |dev| {s['median_abs_dev_pct']:.2f} %, "
              f"p90 {s['p90_abs_dev_pct']:.2f} % over {s['runs']} runs")
    with open(args.out, "w") as handle:
        json.dump({"world_size": args.world_size, "train_args": args.train_args, "lengths": lengths,
                   "by_length": by_length, "runs": runs}, handle, indent=1)
        handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
