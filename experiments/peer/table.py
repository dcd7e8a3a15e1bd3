#!/usr/bin/python3
"""Prints the peer-validation table (markdown) from the runs experiments/peer/run.sh made.

Per configuration (model, bucket cap), over its repeated runs, medians of:
  measured   the profiled iterations' median time in the imported trace (slowest rank)
  predicted  ddp-sim replay's median iteration time for that same trace, with the network
             model of a separate Gloo all-reduce benchmark (bench) or calibrated from the
             trace itself (self)
  unprofiled the wall-clock median of the iterations run afterwards without the profiler
             (slowest rank): what the profiler's own overhead costs
"""

import glob
import json
import os
import re
import statistics
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: table.py OUT_DIR")
    out = sys.argv[1]
    configs = {}
    for run in sorted(glob.glob(os.path.join(out, "*-cap*-rep*"))):
        match = re.fullmatch(r"(.+)-cap([0-9.]+)-rep\d+", os.path.basename(run))
        if not match:
            continue
        key = (match.group(1), float(match.group(2)))
        sidecars = [json.load(open(p)) for p in
                    sorted(glob.glob(os.path.join(run, "profiler", "*.ddpsim.json")))]
        if not sidecars:
            continue
        entry = configs.setdefault(key, {"buckets": len(sidecars[0]["buckets"]),
                                         "measured": [], "bench": [], "self": [],
                                         "unprofiled": []})
        unprofiled = [s["unprofiled_median_iteration_s"] for s in sidecars
                      if s.get("unprofiled_median_iteration_s") is not None]
        if unprofiled:
            entry["unprofiled"].append(max(unprofiled))
        summary = os.path.join(run, "summary.json")
        if os.path.exists(summary):
            entry["measured"].append(json.load(open(summary))["median_iteration_s"])
        for kind in ("bench", "self"):
            replay = os.path.join(run, f"replay-{kind}.json")
            if os.path.exists(replay):
                entry[kind].append(json.load(open(replay))["predicted"]["median_iteration_s"])

    def ms(values):
        return f"{1e3 * statistics.median(values):.1f}" if values else "n/a"

    def error(predicted, measured):
        if not predicted or not measured:
            return "n/a"
        return f"{100 * (statistics.median(predicted) / statistics.median(measured) - 1):+.1f}%"

    print("| model | bucket_cap_mb | buckets | runs | measured (ms) | predicted, bench (ms) "
          "| error | predicted, self (ms) | error | unprofiled (ms) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (model, cap), entry in sorted(configs.items()):
        measured = entry["measured"]
        print(f"| {model} | {cap:g} | {entry['buckets']} | {len(measured)} | {ms(measured)} "
              f"| {ms(entry['bench'])} | {error(entry['bench'], measured)} "
              f"| {ms(entry['self'])} ({len(entry['self'])}) | {error(entry['self'], measured)} "
              f"| {ms(entry['unprofiled'])} |")

if __name__ == "__main__":
    main()
