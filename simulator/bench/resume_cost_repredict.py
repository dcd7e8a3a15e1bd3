#!/usr/bin/env python3
"""resume_cost_repredict.py: would a resume cost measured in the sitting predict its slowdowns better?

  simulator/bench/resume_cost_repredict.py RESULTS/NAME --resume-json SLEEP_RESUME.json
      [--fraction 0.5] [--work DIR] [--json OUT.json] [--bin-dir build/release/bin]

For a ddp-experiment results folder of a slowdown spec (experiments/whatif-*slowdown.toml,
whose replay_args charge a constant --sleep-resume-cost): the folder is copied to WORK/NAME and
predicted again (`ddp-experiment run --repredict`, measuring nothing) with the constant replaced
by FRACTION x the lone-rank resume cost that simulator/bench/sleep_resume_cost.py measured
(--resume-json: its resume_cost_ms_median; the specs' constants are half a quiet day's, so
FRACTION defaults to 0.5). Each prediction is paired with its twin on the same measured run
(pooled_baselines.compare), so the machine's drift cancels out of the comparison. Prints the
pairs, the median and p90 |error| with the constant and with the measured cost, the median
signed errors, how many came closer and a sign test's p. Standard library only. Bad input: one
line on stderr, exit 2.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pooled_baselines import compare, predictions, print_table, repredict, spec_text_of  # noqa: E402
from results_folder import InputError, arguments, write_json  # noqa: E402

CONSTANT = re.compile(r'("--sleep-resume-cost",\s*")([0-9.eE+-]+)(")')


def resume_cost_s(path, fraction):
    """FRACTION x the JSON's median lone-rank resume cost, in seconds; InputError naming the file."""
    try:
        with open(path) as handle:
            median_ms = float(json.load(handle)["resume_cost_ms_median"])
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(f"--resume-json {path}: expected sleep_resume_cost.py's JSON with resume_cost_ms_median") from None
    if not median_ms >= 0:
        raise InputError(f"--resume-json {path}: expected a resume cost >= 0 ms, got {median_ms}")
    return fraction * median_ms / 1e3


def with_cost(text, cost_s, where):
    """Spec `text` with its one --sleep-resume-cost set to cost_s; InputError naming `where` when it
    has none or several."""
    if len(CONSTANT.findall(text)) != 1:
        raise InputError(f"{where}: expected a spec with one \"--sleep-resume-cost\" in its replay_args, "
                         f"got {len(CONSTANT.findall(text))}")
    return CONSTANT.sub(lambda m: f"{m.group(1)}{cost_s:.6g}{m.group(3)}", text)


def measured_spec(folder, cost_s):
    """The folder's spec with its --sleep-resume-cost replaced by cost_s; InputError when it has none."""
    return with_cost(spec_text_of(folder), cost_s, os.path.join(folder, "provenance.json"))


def main(argv):
    try:
        args = arguments(__doc__, argv, bin_dir=True, options=(
            ("--resume-json", {"required": True, "metavar": "SLEEP_RESUME.json",
                               "help": "simulator/bench/sleep_resume_cost.py's output, measured in the sitting"}),
            ("--fraction", {"type": float, "default": 0.5, "help": "of the lone rank's cost charged (default 0.5)"}),
            ("--work", {"default": "resume-cost-repredict", "metavar": "DIR",
                        "help": "where the re-predicted copies go (default resume-cost-repredict)"})))
        if not 0 < args.fraction <= 1:
            raise InputError(f"--fraction: expected a fraction in (0, 1], got {args.fraction}")
        cost_s = resume_cost_s(args.resume_json, args.fraction)
        specs = {}
        for folder in args.folders:  # every input checked before minutes of re-prediction
            predictions(folder)
            specs[folder] = measured_spec(folder, cost_s)
        table = {}
        for folder in args.folders:
            table.update(compare(predictions(folder), predictions(repredict(args.bin_dir, folder, args.work, specs[folder]))))
    except InputError as error:
        print(f"resume_cost_repredict.py: {error}", file=sys.stderr)
        return 2
    print(f"--sleep-resume-cost {cost_s:.6g} s ({args.fraction:g} x the lone rank's, {args.resume_json})")
    print_table(table, "constant", "measured")
    if args.json:
        rows = [{"experiment": name, **{k.replace("single_", "constant_").replace("pooled_", "measured_"): v
                                        for k, v in row.items()}} for name, row in sorted(table.items())]
        write_json(args.json, {"benchmark": "resume_cost_repredict", "sleep_resume_cost_s": cost_s,
                               "fraction": args.fraction, "resume_json": args.resume_json, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
