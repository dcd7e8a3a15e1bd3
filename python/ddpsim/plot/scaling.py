"""Throughput versus world size: measured points (median, IQR) and the simulator's
extrapolation from the largest measured world size, against ideal linear scaling."""
import numpy as np
import pandas as pd

from ddpsim.plot import output
from ddpsim.plot import style
from ddpsim.inputs import InputError, base_rows, read_summary
from ddpsim.stats import median_iqr, quantile

REQUIRED = ["variant", "status", "world_size", "predicted_world_size", "measured_samples_per_s",
            "predicted_samples_per_s"]


def plotted_numbers(path, from_world_size=None):
    frame = read_summary(path, REQUIRED)
    measured = base_rows(frame).dropna(subset=["measured_samples_per_s"])
    if measured.empty:
        raise InputError(path, "rows with measured_samples_per_s", "none")
    if from_world_size is not None and from_world_size not in set(measured["world_size"]):
        raise InputError(path, "--from-world-size among the measured world sizes " +
                         ", ".join(str(int(w)) for w in sorted(set(measured["world_size"]))),
                         str(from_world_size))
    source = from_world_size if from_world_size is not None else measured["world_size"].max()
    predicted = frame[(frame["world_size"] == source)].dropna(subset=["predicted_samples_per_s"])
    sizes = sorted(set(measured["world_size"]) | set(predicted["predicted_world_size"].dropna()))
    smallest = measured["world_size"].min()
    per_rank = quantile(measured[measured["world_size"] == smallest]["measured_samples_per_s"], 0.5) / smallest
    rows = []
    for size in sizes:
        median, q25, q75, n = median_iqr(measured[measured["world_size"] == size]["measured_samples_per_s"])
        rows.append({
            "world_size": int(size),
            "measured_median": median,
            "measured_q25": q25,
            "measured_q75": q75,
            "repetitions": n,
            "predicted_median": quantile(
                predicted[predicted["predicted_world_size"] == size]["predicted_samples_per_s"], 0.5),
            "predicted_from_world_size": int(source),
            "ideal": per_rank * size,
        })
    return pd.DataFrame(rows)


def plot(path, out_dir, name="scaling", from_world_size=None):
    plotted = plotted_numbers(path, from_world_size)
    fig, ax = style.figure()
    ax.plot(plotted["world_size"], plotted["ideal"], ":", color="#888888", label="Linear scaling")
    predicted = plotted.dropna(subset=["predicted_median"])
    measured = plotted.dropna(subset=["measured_median"])
    source = int(plotted["predicted_from_world_size"].iloc[0])
    ax.plot(predicted["world_size"], predicted["predicted_median"], "--s", color=style.PREDICTED,
            markerfacecolor="white", label=f"Predicted (from W = {source})")
    ax.errorbar(measured["world_size"], measured["measured_median"],
                yerr=[measured["measured_median"] - measured["measured_q25"],
                      measured["measured_q75"] - measured["measured_median"]],
                fmt="o", color=style.MEASURED, label="Measured (median, IQR)", zorder=3)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    # Powers of two, plus the measured sizes (3 is not one).
    ticks = sorted({int(w) for w in plotted["world_size"] if np.log2(w) == int(np.log2(w))}
                   | {int(w) for w in measured["world_size"]})
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("World size (ranks)")
    ax.set_ylabel("Throughput (samples/s)")
    ax.legend(loc="upper left")
    return output.save(fig, plotted, out_dir, name)
