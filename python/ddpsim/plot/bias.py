"""Is a model off beyond the machine's noise? Per experiment and variant: the median over
repetitions of each repetition's median signed error, and an exact interval for it.

On a machine whose speed drifts between runs, a what-if's |error| follows the repeat floor
(errors.floor_rows) up: a noisy sitting misses an accuracy target however right the model is, and
the next sitting does not reproduce the last one's |error|. The sign of the error does not drift
that way. A right model's prediction carries the baseline run's speed, the measured value the
changed run's, two draws of the same drift, so its error is as often above zero as below; a model
that is wrong by a few per cent shifts every repetition the same way.

One repetition's predictions share its baseline trace and are not independent, so each
repetition gives one number: the median of its pairs' signed errors. Repetitions ran at other
times with their own baselines and are taken as independent. Their median is the bias; the order
statistics [x_(k), x_(n+1-k)] with the largest k whose coverage 1 - 2 P(Bin(n, 1/2) <= k - 1) is
at least 90 % hold the median of the repetitions' distribution with that coverage, whatever the
noise's shape (the sign test's interval; analysis/compare.py tests pairs the same way). An
interval above or below zero says the model errs that way on this machine, noise or not. Fewer
than 5 repetitions cannot reach 90 % and get no interval. Summaries of several sittings pool:
a repetition is one (summary file, experiment, rep)."""
import math

from ddpsim.stats import quantile

LEVEL = 0.90
# The fewest repetitions whose [min, max] reaches LEVEL: 5 at 90 % (93.75 %; four give 87.5 %).
MIN_REPETITIONS = next(n for n in range(1, 64) if 1 - 2 * 0.5 ** n >= LEVEL)


def sign_test_interval(values, level=LEVEL):
    """(lo, hi, coverage) of the median of the values' distribution: the widest-k order statistics
    whose exact coverage is at least level; (nan, nan, nan) when even [min, max] falls short."""
    x = sorted(values)
    n = len(x)
    below = 0.0  # P(Bin(n, 1/2) <= k - 1), summed as k grows
    best = None
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2 ** n
        coverage = 1 - 2 * below
        if coverage < level:
            break
        best = (x[k - 1], x[n - k], coverage)
    return best if best else (math.nan, math.nan, math.nan)


def verdict(lo, hi):
    if lo != lo:
        return "-"
    if lo > 0:
        return "predicts high"
    if hi < 0:
        return "predicts low"
    return "none beyond noise"


def summarise(kind, experiment, variant, group):
    """One row of the bias table: group holds errors.error_rows of one family (or "all") with a
    repetition number each (source and rep)."""
    per_repetition = group.groupby(["source", "experiment", "rep"], sort=True)["error_pct"].median()
    lo, hi, coverage = sign_test_interval(per_repetition.tolist())
    return {"kind": kind, "experiment": experiment, "variant": variant,
            "repetitions": len(per_repetition), "pairs": len(group),
            "bias_pct": quantile(per_repetition, 0.5), "lo_pct": lo, "hi_pct": hi,
            "coverage": coverage, "verdict": verdict(lo, hi)}


def format_table(frame):
    lines = [f"Bias (median over repetitions of each one's median signed error; an exact "
             f"{LEVEL:.0%} interval of it, from {MIN_REPETITIONS} repetitions up: outside zero, the "
             f"model errs that way beyond this machine's noise):",
             f"{'kind':<15} {'experiment':<24} {'variant':<22} {'reps':>5} {'bias %':>7} "
             f"{'interval %':>16} {'coverage':>9}  verdict"]
    for _, row in frame.iterrows():
        interval = ("-" if row["lo_pct"] != row["lo_pct"] else
                    f"[{row['lo_pct']:+.1f}, {row['hi_pct']:+.1f}]")
        coverage = "-" if row["coverage"] != row["coverage"] else f"{row['coverage']:.1%}"
        lines.append(f"{row['kind']:<15} {row['experiment']:<24} {row['variant']:<22} "
                     f"{row['repetitions']:>5d} {row['bias_pct']:>+7.1f} {interval:>16} {coverage:>9}  "
                     f"{row['verdict']}")
    return "\n".join(lines)
