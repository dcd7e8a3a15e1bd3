"""Throughput per sweep point: measured median with IQR bars, predicted line, error labelled."""
import math

import numpy as np
import pandas as pd
from matplotlib.transforms import blended_transform_factory

from ddpsim.plot import output
from ddpsim.plot import style
from ddpsim.inputs import InputError, base_rows, read_summary, sweep_axis
from ddpsim.stats import median_iqr, quantile

REQUIRED = ["point", "rep", "variant", "status", "measured_samples_per_s",
            "predicted_samples_per_s", "measured_iter_s", "predicted_iter_s", "error_pct"]


def plotted_numbers(path, x_column=None):
    """The per-point numbers the figure shows, one row per sweep value, sorted by x."""
    frame = base_rows(read_summary(path, REQUIRED))
    column, label, x = sweep_axis(frame, path, x_column)
    frame = frame.assign(x=x)
    rows = []
    for x_value, group in frame.groupby("x", sort=True):
        measured, q25, q75, n = median_iqr(group["measured_samples_per_s"])
        # Error of each repetition against its own prediction, then the median: both come
        # from the same run, so machine drift between repetitions cancels.
        # error_pct is the runner's (trace::relative_error, ddpsim/trace/stats.hpp): read, not
        # recomputed, so there is one definition of the error.
        errors = group["error_pct"]
        rows.append({
            "x": x_value,
            "measured_median": measured,
            "measured_q25": q25,
            "measured_q75": q75,
            "predicted_median": quantile(group["predicted_samples_per_s"], 0.5),
            "error_pct_median": quantile(errors, 0.5),
            "repetitions": n,
        })
    plotted = pd.DataFrame(rows)
    if plotted.empty or plotted["measured_median"].isna().all():
        raise InputError(path, "measured_samples_per_s in at least one row", "none")
    return column, label, plotted


def error_label(error_pct):
    """Signed whole percent with a typographic minus; "0%" rather than "-0%"."""
    rounded = round(error_pct)
    if rounded == 0:
        return "0%"
    return f"{rounded:+d}%".replace("-", "\u2212")


def plot(path, out_dir, name="predicted-vs-measured", x_column=None):
    column, label, plotted = plotted_numbers(path, x_column)
    fig, ax = style.figure()
    x = plotted["x"]
    ax.errorbar(x, plotted["measured_median"],
                yerr=[plotted["measured_median"] - plotted["measured_q25"],
                      plotted["measured_q75"] - plotted["measured_median"]],
                fmt="o", color=style.MEASURED, label="Measured (median, IQR)", zorder=3)
    has_prediction = plotted["predicted_median"].notna()
    ax.plot(x[has_prediction], plotted["predicted_median"][has_prediction], "--",
            color=style.PREDICTED, marker="s", markerfacecolor="white", label="Predicted", zorder=2)
    # Errors in one row along the top, clear of the data and its IQR bars.
    along_top = blended_transform_factory(ax.transData, ax.transAxes)
    for xv, error in zip(x, plotted["error_pct_median"]):
        if not math.isnan(error):
            ax.text(xv, 0.97, error_label(error), transform=along_top, ha="center", va="top",
                    fontsize=6, color=style.PREDICTED)
    ax.text(0.0, 1.0, "prediction error:", transform=ax.transAxes, ha="left", va="bottom",
            fontsize=6, color=style.PREDICTED)
    positive = x[x > 0]
    if len(positive) == len(x) and positive.max() / positive.min() >= 20:
        ax.set_xscale("log")
        ax.set_xticks(list(x))
        ax.set_xticklabels([f"{v:g}" for v in x])
        ax.minorticks_off()
    ax.set_xlabel(label)
    ax.set_ylabel("Throughput (samples/s)")
    top = np.nanmax(np.concatenate([plotted["measured_q75"], plotted["predicted_median"]]))
    ax.set_ylim(0, top * 1.22)
    # The top row holds the error labels, so the legend goes in a lower corner: the one on the
    # side where throughput is higher, which leaves the space under it empty.
    measured = plotted["measured_median"].to_numpy()
    falls = measured[-1] < measured[0]
    ax.legend(loc="lower left" if falls else "lower right")
    plotted = plotted.rename(columns={"x": column})
    return output.save(fig, plotted, out_dir, name)
