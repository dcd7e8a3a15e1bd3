"""Ground truth for the network model as a figure: the link rate the testbed was told (x) and
the bandwidth `ddp-sim calibrate` fitted from a trace recorded through that link (y), one
marker per bucket cap, against the line y = x. Input: scripts/testbed_calibration.sh's
calibration.csv."""

import pandas as pd

from ddpsim.plot import output
from ddpsim.plot import style
from ddpsim.inputs import InputError, read_csv_rows

COLUMNS = ("rate_mbit", "cap_mb", "told_bytes_per_s", "beta_bytes_per_s", "error_pct")


def plotted_numbers(path):
    rows = read_csv_rows(path, COLUMNS, "scripts/testbed_calibration.sh")
    if not rows:
        raise InputError(path, "at least one calibrated rate", "none")
    plotted = []
    for row in rows:
        try:
            told, beta = float(row["told_bytes_per_s"]), float(row["beta_bytes_per_s"])
        except ValueError:
            raise InputError(path, "numbers in told_bytes_per_s and beta_bytes_per_s",
                             f"{row['told_bytes_per_s']!r}, {row['beta_bytes_per_s']!r}") from None
        # Both in Mbit/s, the unit the testbed is told (tc's "200mbit").
        plotted.append({"cap_mb": row["cap_mb"], "told_mbit_s": told * 8 / 1e6,
                        "fitted_mbit_s": beta * 8 / 1e6, "error_pct": 100 * (beta - told) / told})
    return pd.DataFrame(plotted)


def plot(path, out_dir, name="calibration"):
    plotted = plotted_numbers(path)
    fig, ax = style.figure(width=style.COLUMN_WIDTH, height=2.4)
    top = max(plotted["told_mbit_s"].max(), plotted["fitted_mbit_s"].max()) * 1.1
    ax.plot([0, top], [0, top], "-", color="0.6", linewidth=0.8, label="fitted = told")
    markers = "os^vD"
    for i, (cap, group) in enumerate(plotted.groupby("cap_mb", sort=False)):
        ax.plot(group["told_mbit_s"], group["fitted_mbit_s"], markers[i % len(markers)],
                color=style.PREDICTED if i % 2 else style.MEASURED, fillstyle="none",
                label=f"bucket cap {cap} MiB")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("link rate the testbed was told (Mbit/s)")
    ax.set_ylabel("β fitted by ddp-sim calibrate (Mbit/s)")
    ax.legend(fontsize="x-small", loc="upper left")
    return output.save(fig, plotted, out_dir, name)
