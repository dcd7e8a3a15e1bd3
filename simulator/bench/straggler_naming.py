#!/usr/bin/env python3
"""straggler_naming.py: does `ddp-sim advise` name the rank that was slowed, and nobody else?

  simulator/bench/straggler_naming.py RESULTS/NAME [RESULTS/NAME ...] [--json OUT.json]

For ddp-experiment results folders of specs that slow or stall ranks (whatif-slowdown,
whatif-delay and their testbed twins): every trace in NAME/traces/ is advised alone
(`ddp-sim advise TRACE --bucket-caps 25`, the stragglers answer is what is checked) and the
ranks it names are compared with the ranks its metadata says were skewed (skew.slowdown R=F with
F > 1, skew.delay / skew.delay_dist R=...; none for an unskewed run). Per experiment and
configuration it prints how many runs were named right under two rules, both with the same
bootstrap conditions (advise.hpp):

  excess   a straggler's cost exceeds the typical rank's by kMinStragglerShare (5 %) of the
           iteration: the rule since 2026-11-26 (the JSON's `straggler`)
  cost     the cost alone is >= 5 % of the iteration: the rule before, recomputed from the
           JSON's `fraction`

An unskewed run on a noisy machine gives every rank a cost (in each iteration one rank is the
slower); the typical rank's cost is the size of that noise. Standard library only. Bad input:
one line on stderr, exit 2.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_folder import InputError, arguments  # noqa: E402

MIN_SHARE = 0.05  # advise.hpp's kMinStragglerShare


def expected_ranks(skew):
    """The ranks a trace's skew metadata slowed or stalled, sorted; 'all' counts as every rank (None)."""
    ranks = set()
    for key in ("slowdown", "delay", "delay_dist"):
        for entry in filter(None, str(skew.get(key, "")).split(",")):
            rank, _, value = entry.partition("=")
            if rank == "all":
                return None
            if key == "slowdown" and float(value) <= 1:
                continue
            ranks.add(int(rank))
    return sorted(ranks)


def named(ranks, rule):
    """The ranks advise's stragglers JSON names under `rule` ('excess' or 'cost')."""
    out = []
    for cost in ranks:
        if rule == "excess":
            if cost["straggler"]:
                out.append(cost["rank"])
            continue
        bootstrap = (cost["interval_s"][0] or 0) > 0 and (cost["excess_interval_s"][0] or 0) > 0
        if bootstrap and cost["fraction"] >= MIN_SHARE:
            out.append(cost["rank"])
    return out


def configuration(trace_name):
    return re.sub(r"-rep\d+$", "", trace_name)


def tally(runs):
    """runs: (experiment, trace name, expected ranks, advise's stragglers 'ranks' list) ->
    {(experiment, configuration): {"runs", "expected", "right_excess", "right_cost"}}."""
    table = {}
    for experiment, trace, expected, ranks in runs:
        row = table.setdefault((experiment, configuration(trace)),
                               {"runs": 0, "expected": expected, "right_excess": 0, "right_cost": 0})
        row["runs"] += 1
        for rule in ("excess", "cost"):
            row["right_" + rule] += named(ranks, rule) == expected
    return table


def read_json(path, what):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError) as error:
        raise InputError(f"{path}: expected {what}, got {error}") from None


def advise_all(bin_dir, folders):
    runs = []
    with tempfile.TemporaryDirectory(prefix="straggler-naming-") as tmp:
        for folder in folders:
            traces = os.path.join(folder, "traces")
            if not os.path.isdir(traces):
                raise InputError(f"{folder}: expected a ddp-experiment results folder with traces/, got none")
            for name in sorted(os.listdir(traces)):
                trace = os.path.join(traces, name)
                meta = read_json(os.path.join(trace, "rank-0.meta.json"), "a trace's rank-0 metadata (JSON)")
                expected = expected_ranks(meta.get("skew", {}))
                if expected is None:
                    continue  # every rank skewed alike: nobody is the straggler by design
                out = os.path.join(tmp, "advice.json")
                done = subprocess.run([os.path.join(bin_dir, "ddp-sim"), "advise", trace, "--bucket-caps", "25",
                                       "--json", out], capture_output=True, text=True)
                if done.returncode != 0:
                    raise InputError(f"{trace}: ddp-sim advise failed: {done.stderr.strip()}")
                runs.append((os.path.basename(os.path.normpath(folder)), name, expected,
                             read_json(out, "advise's JSON")["stragglers"]["ranks"]))
    return runs


def main(argv):
    try:
        args = arguments(__doc__, argv, json_help="also write the table here", bin_dir=True)
        table = tally(advise_all(args.bin_dir, args.folders))
    except InputError as error:
        print(f"straggler_naming.py: {error}", file=sys.stderr)
        return 2
    print(f"{'experiment':28} {'configuration':18} {'skewed':>7} {'runs':>5} {'excess':>7} {'cost':>5}")
    for (experiment, config), row in sorted(table.items()):
        skewed = ",".join(map(str, row["expected"])) or "none"
        print(f"{experiment:28} {config:18} {skewed:>7} {row['runs']:5d} {row['right_excess']:7d} {row['right_cost']:5d}")
    if args.json:
        rows = [{"experiment": e, "configuration": c, **row} for (e, c), row in sorted(table.items())]
        with open(args.json, "w") as handle:
            json.dump({"benchmark": "straggler_naming", "min_share": MIN_SHARE, "rows": rows}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
