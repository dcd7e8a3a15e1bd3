"""Machine profiles side by side: the all-reduce ladder (one at a time: median, with the min-max
range of its repetitions) and the overlap section's all-reduce alone and while the ranks compute,
against the message size, one series per profile. Several profiles of one machine show how far
its speed moves between days or sittings. Input: ddp-machine-profile --out files."""
import os

import pandas as pd

from ddpsim.machine import read_machine_profile
from ddpsim.plot import output
from ddpsim.plot import style

COLUMNS = ["profile", "created_utc", "series", "bytes", "median_s", "min_s", "max_s"]


def plotted_numbers(paths):
    """One row per profile, series and size: exactly what the figure draws."""
    rows = []
    for path in paths:
        machine = read_machine_profile(path)
        label = os.path.basename(path)
        for series, frame, prefix in (("one all-reduce", machine.ladder, "one"),
                                      ("alone (overlap)", machine.overlap, "alone"),
                                      ("while the ranks compute (overlap)", machine.overlap, "busy")):
            for _, row in frame.iterrows():
                rows.append({"profile": label, "created_utc": machine.info["created_utc"], "series": series,
                             "bytes": int(row["bytes"]), "median_s": row[f"{prefix}_median_s"],
                             "min_s": row[f"{prefix}_min_s"], "max_s": row[f"{prefix}_max_s"]})
    return pd.DataFrame(rows, columns=COLUMNS)


def plot(paths, out_dir, name="machine"):
    plotted = plotted_numbers(paths)
    fig, (ladder_ax, overlap_ax) = style.figure(width=style.TEXT_WIDTH, height=2.6, ncols=2)
    colors = list(style.OKABE_ITO.values())
    for i, (profile, group) in enumerate(plotted.groupby("profile", sort=False)):
        color = colors[i % len(colors)]
        label = f"{profile} ({group['created_utc'].iloc[0]})"
        for ax, series, marker in ((ladder_ax, "one all-reduce", "o"), (overlap_ax, "alone (overlap)", "o"),
                                   (overlap_ax, "while the ranks compute (overlap)", "s")):
            rows = group[group["series"] == series]
            if rows.empty:
                continue
            x = rows["bytes"] / 2**20
            ax.errorbar(x, rows["median_s"] * 1e3,
                        yerr=[(rows["median_s"] - rows["min_s"]) * 1e3, (rows["max_s"] - rows["median_s"]) * 1e3],
                        fmt=marker + "-", color=color, fillstyle="none" if marker == "s" else "full",
                        markersize=3, linewidth=0.8, capsize=1.5,
                        label=label if ax is ladder_ax else f"{series.split(' (')[0]}, {profile}")
    for ax, title in ((ladder_ax, "all-reduce ladder, one at a time"),
                      (overlap_ax, "all-reduce alone and while the ranks compute")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("message size (MiB)")
        ax.set_ylabel("time (ms): median, min-max")
        ax.set_title(title, fontsize="small")
        if ax.has_data():
            ax.legend(fontsize="xx-small")
    return output.save(fig, plotted, out_dir, name)
