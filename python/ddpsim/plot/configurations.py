"""What-if errors per configuration: the median of a configuration's predictions over its
repetitions against the median of its measured runs (issue 16: "interleaved, >= 5 repetitions
each, medians"), beside errors.py's per-pair table (each repetition's prediction against that
repetition's measured run).

A pair carries two runs' drift, its baseline's and its measured run's; a configuration's medians
carry less of it, so what stays is mostly the model's (or a drift that lasted the whole sitting).
A family whose configurations are off by about as much as its pairs errs in the model, not in
the draws. The error of two medians is stats.relative_error, as trace::relative_error writes a
pair's: 100 (predicted - measured) / measured."""
import pandas as pd

from ddpsim.stats import per_experiment_and_all, quantile, relative_error

COLUMNS = ["experiment", "configurations", "repetitions", "median_abs_error_pct", "p90_abs_error_pct",
           "max_abs_error_pct", "median_error_pct"]


def configuration_rows(errors):
    """From errors.error_rows (the pairs the per-pair table compares): per summary (source),
    experiment, variant and point of its predictions, the repetitions, the medians of
    measured_iter_s and predicted_iter_s over them, and the error of the medians in %. Rows
    without a point (summaries before that column) give none."""
    predictions = errors[(errors["kind"] == "prediction") & (errors["point"] != "")]
    rows = []
    # A point predicted from two baselines (variants) is two configurations of prediction.
    for (source, experiment, variant, point), group in predictions.groupby(
            ["source", "experiment", "variant", "point"], sort=False):
        measured = quantile(group["measured_iter_s"], 0.5)
        predicted = quantile(group["predicted_iter_s"], 0.5)
        rows.append({"source": source, "experiment": experiment, "variant": variant, "point": point,
                     "repetitions": len(group), "measured_median_s": measured,
                     "predicted_median_s": predicted,
                     "error_pct": 100 * relative_error(predicted, measured)})
    return pd.DataFrame(rows, columns=["source", "experiment", "variant", "point", "repetitions", "measured_median_s",
                                       "predicted_median_s", "error_pct"])


def table(rows):
    """Per experiment, then "all": configurations, repetitions per configuration (the fewest),
    median / p90 / max |error| and the median signed error of the configurations' medians."""
    out = []
    for experiment, group in per_experiment_and_all(rows):
        errors = group["error_pct"].abs()
        out.append({"experiment": experiment, "configurations": len(group),
                    "repetitions": int(group["repetitions"].min()),
                    "median_abs_error_pct": quantile(errors, 0.5), "p90_abs_error_pct": quantile(errors, 0.9),
                    "max_abs_error_pct": float(errors.max()), "median_error_pct": quantile(group["error_pct"], 0.5)})
    return pd.DataFrame(out, columns=COLUMNS)


def format_table(frame):
    lines = ["What-if predictions per configuration (median of its predictions over the repetitions "
             "against the median of its measured runs):",
             f"{'experiment':<24} {'configurations':>14} {'reps':>5} {'median |err| %':>15} {'p90 |err| %':>12} "
             f"{'max |err| %':>12} {'median err %':>13}"]
    for _, row in frame.iterrows():
        lines.append(f"{row['experiment']:<24} {row['configurations']:>14d} {row['repetitions']:>5d} "
                     f"{row['median_abs_error_pct']:>15.1f} {row['p90_abs_error_pct']:>12.1f} "
                     f"{row['max_abs_error_pct']:>12.1f} {row['median_error_pct']:>+13.1f}")
    return "\n".join(lines)
