"""A what-if family from simulator/bench/validate_whatif.py's whatif.csv as a figure: for each
configuration, the measured median iteration time of every repetition (small dots) and their
median (large), beside what ddp-sim predicted for it from each repetition's *baseline* trace
(the same). The baseline itself is a
reconstruction and is drawn hollow, so a reader never takes it for a prediction."""
import statistics

import pandas as pd

from ddpsim.plot import output
from ddpsim.plot import style
from ddpsim.inputs import InputError, read_csv_rows

COLUMNS = ("family", "config", "kind", "rep", "mode", "measured_s", "predicted_s")


def read_rows(path):
    return read_csv_rows(path, COLUMNS, "simulator/bench/validate_whatif.py's whatif.csv")


def number(path, row, column):
    try:
        return float(row[column])
    except (TypeError, ValueError):
        raise InputError(path, f"a number in column {column}", repr(row[column])) from None


def plotted_numbers(path, family, mode):
    """One row per configuration, in the order the family lists them: measured and predicted
    medians over the repetitions, with min and max, in ms."""
    rows = [r for r in read_rows(path) if r["family"] == family and r["mode"] == mode]
    if not rows:
        raise InputError(path, f"rows of family {family} and mode {mode}", "none")
    configs = list(dict.fromkeys(r["config"] for r in rows))
    plotted = []
    for config in configs:
        mine = [r for r in rows if r["config"] == config]
        measured = [number(path, r, "measured_s") * 1e3 for r in mine]
        predicted = [number(path, r, "predicted_s") * 1e3 for r in mine]
        plotted.append({"config": config, "kind": mine[0]["kind"], "reps": len(mine),
                        "measured_median_ms": statistics.median(measured),
                        "measured_min_ms": min(measured), "measured_max_ms": max(measured),
                        "predicted_median_ms": statistics.median(predicted),
                        "predicted_min_ms": min(predicted), "predicted_max_ms": max(predicted),
                        "median_error": statistics.median(
                            [p / m - 1 for p, m in zip(predicted, measured)]),
                        "measured_reps_ms": ";".join(f"{v:.3f}" for v in measured),
                        "predicted_reps_ms": ";".join(f"{v:.3f}" for v in predicted)})
    return pd.DataFrame(plotted)


def plot(path, out_dir, name, family, mode):
    plotted = plotted_numbers(path, family, mode)
    fig, ax = style.figure(width=style.COLUMN_WIDTH, height=2.4)
    x = list(range(len(plotted)))

    def points(column, offset, color, label, hollow_baseline):
        for i, row in plotted.iterrows():
            reps = [float(v) for v in row[f"{column}_reps_ms"].split(";")]
            ax.plot([x[i] + offset] * len(reps), reps, ".", color=color, markersize=3, alpha=0.6)
            hollow = hollow_baseline and row["kind"] == "reconstruction"
            ax.plot([x[i] + offset], [row[f"{column}_median_ms"]], "o", color=color,
                    fillstyle="none" if hollow else "full", label=label if i == 0 else None)

    points("measured", -0.12, style.MEASURED, "measured (median; dots: repetitions)", False)
    points("predicted", 0.12, style.PREDICTED, "predicted from the baseline (hollow: reconstruction)", True)
    ax.set_xticks(x)
    ax.set_xticklabels(plotted["config"])
    ax.set_xlabel(f"{family} what-if (first: the baseline)")
    ax.set_ylabel("median iteration (ms)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="x-small", loc="lower right")
    return output.save(fig, plotted, out_dir, name)
