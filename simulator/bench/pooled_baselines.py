#!/usr/bin/env python3
"""pooled_baselines.py: predict from every repetition of the baseline, or from one?

  simulator/bench/pooled_baselines.py RESULTS/NAME [RESULTS/NAME ...] [--work DIR] [--json OUT.json]

For ddp-experiment results folders whose spec predicts from a baseline ([predict] baseline):
each is copied to WORK/NAME, its spec (provenance.json's spec_text) gets `[predict]
pool_baselines = true` (WORK/specs/NAME.toml), and `ddp-experiment run --repredict` predicts
every run again with each repetition's baseline replayed together with the baseline's other
repetitions (`ddp-sim replay --repeats ... --pool`), measuring nothing. Then each prediction
row (kind prediction, status ok) of the original is paired with its pooled twin, the same
measured run (point, rep, variant), so the machine's drift cancels out of the comparison.

Per experiment it prints the pairs, the median and p90 |error| of the iteration time, single
baseline and pooled, the median signed errors, how many pooled predictions came closer, a
two-sided sign test's p and, for stall what-ifs (rows with ks_distance), the median
Kolmogorov-Smirnov distance of each. Standard library only. Bad input: one line on stderr, exit 2.
"""
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_folder import ROOT, InputError, arguments, read_summary, write_json  # noqa: E402

KEY = ("point", "rep", "variant")


def spec_text_of(folder):
    """The spec the folder was measured with (provenance.json's spec_text); InputError naming
    the file when there is none."""
    path = os.path.join(folder, "provenance.json")
    try:
        with open(path) as handle:
            return json.load(handle)["spec_text"]
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(f"{path}: expected ddp-experiment's provenance with spec_text, got none") from None


def pooled_spec(folder):
    """The folder's spec text with pool_baselines = true in [predict]; InputError when it has no
    baseline to pool or already pools."""
    path = os.path.join(folder, "provenance.json")
    text = spec_text_of(folder)
    if "\n[predict]\n" not in "\n" + text or "baseline" not in text:
        raise InputError(f"{path}: expected a spec with [predict] baseline, got none")
    if "pool_baselines" in text:
        raise InputError(f"{path}: expected a spec that predicts from one baseline, got pool_baselines already")
    return ("\n" + text).replace("\n[predict]\n", "\n[predict]\npool_baselines = true\n", 1)[1:]


def repredict(bin_dir, folder, work, spec_text=None):
    """Copies `folder` into `work`, re-predicts it with `spec_text` (default: its own spec,
    pooled); the copy's path."""
    name = os.path.basename(os.path.normpath(folder))
    copy = os.path.join(work, name)
    if os.path.exists(copy):
        raise InputError(f"--work {work}: expected no {name} there yet (it would be overwritten), got one")
    if spec_text is None:
        spec_text = pooled_spec(folder)
    os.makedirs(os.path.join(work, "specs"), exist_ok=True)
    spec = os.path.join(work, "specs", name + ".toml")
    with open(spec, "w") as handle:
        handle.write(spec_text)
    shutil.copytree(folder, copy)
    log = os.path.join(work, name + ".repredict.log")
    with open(log, "w") as handle:
        done = subprocess.run([os.path.join(bin_dir, "ddp-experiment"), "run", spec, "--out", work, "--repredict"],
                              stdout=handle, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise InputError(f"{folder}: ddp-experiment --repredict exited {done.returncode} (see {log})")
    return copy


def predictions(folder):
    rows = read_summary(folder, {*KEY, "kind", "status", "error_pct", "experiment"})
    return {tuple(row[k] for k in KEY): row for row in rows
            if row["kind"] == "prediction" and row["status"] == "ok" and row["error_pct"]}


def sign_test_p(closer, pairs):
    """Two-sided binomial sign test of `closer` successes in `pairs` at p = 1/2."""
    if pairs == 0:
        return float("nan")
    tail = sum(math.comb(pairs, k) for k in range(0, min(closer, pairs - closer) + 1)) / 2 ** pairs
    return min(1.0, 2 * tail)


def p90(values):
    """Linearly interpolated, as ddpsim-plot errors' p90."""
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=10, method="inclusive")[8]


def compare(single, pooled):
    """Per experiment: the paired figures of the rows both folders predicted."""
    table, ks = {}, {}
    for key, row in single.items():
        twin = pooled.get(key)
        if twin is not None:
            table.setdefault(row["experiment"], []).append((float(row["error_pct"]), float(twin["error_pct"])))
            if row.get("ks_distance") and twin.get("ks_distance"):  # stall what-ifs: the distribution too
                ks.setdefault(row["experiment"], []).append((float(row["ks_distance"]), float(twin["ks_distance"])))
    out = {}
    for name, pairs in table.items():
        a = [abs(s) for s, _ in pairs]
        b = [abs(p) for _, p in pairs]
        closer = sum(1 for s, p in pairs if abs(p) < abs(s))
        ties = sum(1 for s, p in pairs if abs(p) == abs(s))
        out[name] = {"pairs": len(pairs), "single_median_abs_pct": statistics.median(a), "single_p90_abs_pct": p90(a),
                     "pooled_median_abs_pct": statistics.median(b), "pooled_p90_abs_pct": p90(b),
                     "single_median_pct": statistics.median(s for s, _ in pairs),
                     "pooled_median_pct": statistics.median(p for _, p in pairs),
                     "pooled_closer": closer, "sign_test_p": sign_test_p(closer, len(pairs) - ties)}
        if name in ks:
            out[name]["single_median_ks"] = statistics.median(k for k, _ in ks[name])
            out[name]["pooled_median_ks"] = statistics.median(k for _, k in ks[name])
    return out


def print_table(table, before="single", after="pooled"):
    """compare()'s table, one line per experiment; `before` and `after` name its two sides."""
    wide = {before: len(before) + 9, after: len(after) + 9}
    ks = f"KS {before}/{after}"
    print(f"{'experiment':26} {'pairs':>5} {before + ' |err| %':>{wide[before]}} {'p90':>6} "
          f"{after + ' |err| %':>{wide[after]}} {'p90':>6} {'signed %':>15} {'closer':>7} {'sign p':>8} {ks:>17}")
    for name, row in sorted(table.items()):
        print(f"{name:26} {row['pairs']:5d} {row['single_median_abs_pct']:{wide[before]}.1f} {row['single_p90_abs_pct']:6.1f} "
              f"{row['pooled_median_abs_pct']:{wide[after]}.1f} {row['pooled_p90_abs_pct']:6.1f} "
              f"{row['single_median_pct']:+7.1f}/{row['pooled_median_pct']:+6.1f} "
              f"{row['pooled_closer']:3d}/{row['pairs']:<3d} {row['sign_test_p']:8.2g} "
              + (f"{row['single_median_ks']:8.3f}/{row['pooled_median_ks']:.3f}" if "single_median_ks" in row else f"{'-':>17}"))


def main(argv):
    try:
        args = arguments(__doc__, argv, bin_dir=True, options=[(
            "--work", {"default": "pooled-baselines", "metavar": "DIR",
                       "help": "where the pooled copies go (default pooled-baselines)"})])
        work = args.work
        for folder in args.folders:  # every input checked before minutes of re-prediction
            predictions(folder)
            pooled_spec(folder)
        table = {}
        for folder in args.folders:
            table.update(compare(predictions(folder), predictions(repredict(args.bin_dir, folder, work))))
    except InputError as error:
        print(f"pooled_baselines.py: {error}", file=sys.stderr)
        return 2
    print_table(table)
    if args.json:
        rows = [{"experiment": name, **row} for name, row in sorted(table.items())]
        write_json(args.json, {"benchmark": "pooled_baselines", "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
