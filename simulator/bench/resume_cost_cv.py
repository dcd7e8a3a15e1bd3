#!/usr/bin/env python3
"""resume_cost_cv.py: which --sleep-resume-cost predicts a slowdown spec's held-out sittings best?

  simulator/bench/resume_cost_cv.py --spec experiments/whatif-testbed-slowdown.toml \\
      SITTING1/whatif-testbed-slowdown SITTING2/whatif-testbed-slowdown ... \\
      [--high 0.0004] [--work DIR] [--json OUT.json] [--bin-dir build/release/bin]

For ddp-experiment results folders of one slowdown spec, each from another sitting: every folder
is predicted again (`ddp-experiment run --repredict`, measuring nothing) with --spec, its
--sleep-resume-cost set to 0 and to HIGH. A pair's error is linear in the cost (the slowed rank's
compute grows by the cost per sleep; checked within 0.1 pp at 0.38 ms on two sittings, 2026-11-27),
so two replays give it at any cost. Leave one sitting out: the cost that makes the other sittings'
pooled median signed error zero (0 .. 1.5 HIGH, 0.01 ms steps) predicts the held-out one, against
--spec's own cost. Prints, per held-out sitting, the fitted cost, median |error| and signed median
with the spec's cost and the fitted one, and how many pairs came closer; then the sittings that
came closer, the pairs (with a sign test's p), the pooled median and p90 |error|, and the cost fitted
on every sitting. Standard library only. Bad input: one line on stderr, exit 2.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pooled_baselines import p90, predictions, repredict, sign_test_p  # noqa: E402
from resume_cost_repredict import CONSTANT, with_cost  # noqa: E402
from results_folder import InputError, arguments, write_json  # noqa: E402

STEP_S = 1e-5


def spec_cost_s(text):
    return float(CONSTANT.search(text).group(2))


def at_cost(low, high, high_s, cost_s):
    """Each pair's error at cost_s, from its errors at 0 (`low`) and at high_s (`high`)."""
    return {key: low[key] + (high[key] - low[key]) * cost_s / high_s for key in low if key in high}


def fitted_cost(sittings, high_s):
    """The cost on the grid whose pooled median signed error over `sittings` ([(low, high)]) is
    nearest zero (the smallest such)."""
    grid = [i * STEP_S for i in range(int(round(1.5 * high_s / STEP_S)) + 1)]
    def bias(cost_s):
        return statistics.median(e for low, high in sittings for e in at_cost(low, high, high_s, cost_s).values())
    return min(grid, key=lambda cost_s: abs(bias(cost_s)))


def cross_validate(errors, high_s, spec_s):
    """errors: {sitting: (low, high)}, each {pair: error %}. Leave one sitting out; per sitting and
    over all."""
    rows, spec_all, fit_all, closer_all = [], [], [], 0
    for name, (low, high) in errors.items():
        others = [pair for other, pair in errors.items() if other != name]
        cost_s = fitted_cost(others, high_s)
        spec = at_cost(low, high, high_s, spec_s)
        fit = at_cost(low, high, high_s, cost_s)
        closer = sum(abs(fit[k]) < abs(spec[k]) for k in spec)
        closer_all += closer
        spec_all += spec.values()
        fit_all += fit.values()
        rows.append({"sitting": name, "fitted_cost_s": cost_s, "pairs": len(spec), "closer": closer,
                     "spec_median_abs_pct": statistics.median(map(abs, spec.values())),
                     "fitted_median_abs_pct": statistics.median(map(abs, fit.values())),
                     "spec_median_pct": statistics.median(spec.values()),
                     "fitted_median_pct": statistics.median(fit.values())})
    total = {"sittings": len(rows),
             "sittings_closer": sum(r["fitted_median_abs_pct"] < r["spec_median_abs_pct"] for r in rows),
             "pairs": len(spec_all), "closer": closer_all, "sign_test_p": sign_test_p(closer_all, len(spec_all)),
             "spec_median_abs_pct": statistics.median(map(abs, spec_all)),
             "fitted_median_abs_pct": statistics.median(map(abs, fit_all)),
             "spec_p90_abs_pct": p90([abs(e) for e in spec_all]), "fitted_p90_abs_pct": p90([abs(e) for e in fit_all]),
             "spec_median_pct": statistics.median(spec_all), "fitted_median_pct": statistics.median(fit_all),
             "cost_fitted_on_all_s": fitted_cost(list(errors.values()), high_s)}
    return rows, total


def main(argv):
    try:
        args = arguments(__doc__, argv, bin_dir=True, options=(
            ("--spec", {"required": True, "metavar": "SPEC.toml", "help": "the slowdown spec to predict with"}),
            ("--high", {"type": float, "default": 0.0004, "metavar": "S",
                        "help": "the second cost replayed, in s (default 0.0004)"}),
            ("--work", {"default": "resume-cost-cv", "metavar": "DIR",
                        "help": "where the re-predicted copies go (default resume-cost-cv)"})))
        if not args.high > 0:
            raise InputError(f"--high: expected a cost > 0 s, got {args.high}")
        if len(args.folders) < 3:
            raise InputError(f"RESULTS/NAME: expected three sittings or more to leave one out, got {len(args.folders)}")
        try:
            with open(args.spec) as handle:
                text = handle.read()
        except OSError as error:
            raise InputError(f"--spec {args.spec}: expected a spec file, got {error.strerror}") from None
        specs = {cost_s: with_cost(text, cost_s, f"--spec {args.spec}") for cost_s in (0.0, args.high)}
        for folder in args.folders:  # every input checked before minutes of re-prediction
            predictions(folder)
        errors = {}
        for index, folder in enumerate(args.folders):
            replays = []
            for cost_s, spec in specs.items():
                copy = repredict(args.bin_dir, folder, os.path.join(args.work, f"sitting{index}-cost{cost_s:g}"), spec)
                replays.append({key: float(row["error_pct"]) for key, row in predictions(copy).items()})
            errors[folder] = tuple(replays)
    except InputError as error:
        print(f"resume_cost_cv.py: {error}", file=sys.stderr)
        return 2
    spec_s = spec_cost_s(text)
    rows, total = cross_validate(errors, args.high, spec_s)
    print(f"leave one sitting out; the spec's --sleep-resume-cost {spec_s * 1e3:.3f} ms against the others' fit")
    print(f"{'held-out sitting':40} {'fit ms':>6} {'|err| % spec -> fit':>20} {'signed % spec -> fit':>21} {'closer':>7}")
    for r in rows:
        print(f"{r['sitting'][-40:]:40} {r['fitted_cost_s'] * 1e3:6.2f} {r['spec_median_abs_pct']:9.1f} -> "
              f"{r['fitted_median_abs_pct']:<7.1f} {r['spec_median_pct']:+9.1f} -> {r['fitted_median_pct']:<+8.1f} "
              f"{r['closer']:3d}/{r['pairs']}")
    print(f"held-out sittings closer: {total['sittings_closer']} of {total['sittings']}; pairs closer "
          f"{total['closer']} of {total['pairs']} (sign test p {total['sign_test_p']:.2g}); median |err| "
          f"{total['spec_median_abs_pct']:.2f} -> {total['fitted_median_abs_pct']:.2f} %, p90 "
          f"{total['spec_p90_abs_pct']:.1f} -> {total['fitted_p90_abs_pct']:.1f} %, signed "
          f"{total['spec_median_pct']:+.1f} -> {total['fitted_median_pct']:+.1f} %")
    print(f"fitted on every sitting: {total['cost_fitted_on_all_s'] * 1e3:.2f} ms")
    write_json(args.json, {"benchmark": "resume_cost_cv", "spec": args.spec, "spec_cost_s": spec_s, "high_s": args.high,
                           "sittings": rows, "total": total})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
