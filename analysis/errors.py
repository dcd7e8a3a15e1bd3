"""Prediction error table: median and 90th-percentile absolute error of the predicted
iteration time, per experiment and overall; plus the CDF of the absolute errors."""
import numpy as np
import pandas as pd

import output
import style
from inputs import InputError, base_rows, read_summary
from stats import quantile

REQUIRED = ["experiment", "variant", "status", "measured_iter_s", "predicted_iter_s"]


def absolute_errors(paths):
    """Per row of every summary with both times: experiment, point, rep, |error| in %."""
    frames = []
    for path in paths:
        frame = base_rows(read_summary(path, REQUIRED)).dropna(
            subset=["measured_iter_s", "predicted_iter_s"])
        frame = frame[frame["measured_iter_s"] > 0]
        if frame.empty:
            raise InputError(path, "rows with both measured_iter_s and predicted_iter_s", "none")
        error = 100.0 * (frame["predicted_iter_s"] - frame["measured_iter_s"]) / frame["measured_iter_s"]
        frames.append(pd.DataFrame({"experiment": frame["experiment"], "abs_error_pct": error.abs()}))
    return pd.concat(frames, ignore_index=True)


def table(errors):
    rows = []
    groups = [(name, group["abs_error_pct"]) for name, group in errors.groupby("experiment", sort=True)]
    groups.append(("all", errors["abs_error_pct"]))
    for name, values in groups:
        rows.append({"experiment": name, "runs": len(values),
                     "median_abs_error_pct": quantile(values, 0.5),
                     "p90_abs_error_pct": quantile(values, 0.9),
                     "max_abs_error_pct": float(values.max())})
    return pd.DataFrame(rows)


def format_table(frame):
    lines = [f"{'experiment':<20} {'runs':>5} {'median |err| %':>15} {'p90 |err| %':>12} {'max |err| %':>12}"]
    for _, row in frame.iterrows():
        lines.append(f"{row['experiment']:<20} {row['runs']:>5d} {row['median_abs_error_pct']:>15.1f} "
                     f"{row['p90_abs_error_pct']:>12.1f} {row['max_abs_error_pct']:>12.1f}")
    return "\n".join(lines)


def plot(paths, out_dir, name="errors"):
    errors = absolute_errors(paths)
    summary = table(errors)
    print(format_table(summary))
    table_path = output.save_table(summary, out_dir, name)
    # CDF of |error| per experiment: the figure's CSV holds its exact steps.
    fig, ax = style.figure()
    steps = []
    for index, (experiment, group) in enumerate(errors.groupby("experiment", sort=True)):
        values = np.sort(group["abs_error_pct"].to_numpy())
        fraction = np.arange(1, len(values) + 1) / len(values)
        ax.step(np.concatenate([[0], values]), np.concatenate([[0], fraction]), where="post",
                color=style.CYCLE[index % len(style.CYCLE)], label=experiment)
        steps += [{"experiment": experiment, "abs_error_pct": v, "cumulative_fraction": f}
                  for v, f in zip(values, fraction)]
    ax.set_xlabel("Absolute error of predicted iteration time (%)")
    ax.set_ylabel("Fraction of runs")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.legend(loc="lower right")
    paths_out = output.save(fig, pd.DataFrame(steps), out_dir, name + "-cdf")
    return [table_path] + paths_out
