"""Scale-out on a named cluster platform, and the all-reduce model behind it checked against
published nccl-tests measurements (#18).

Left: a real GPU job's step time replayed on a `--cluster` preset at growing world sizes,
per all-reduce model (simulator/bench/cluster_scaling.py). Middle and right: the same
presets' all-reduce as nccl-tests' bus bandwidth against the published runs, with the error
(simulator/bench/nccl_tests_check.py)."""
import matplotlib.ticker
import pandas as pd

from ddpsim.plot import output
from ddpsim.plot import style
from ddpsim.inputs import InputError, read_csv_rows
from ddpsim.stats import relative_error

REPLAY_COLUMNS = ["trace", "cluster", "world_size", "allreduce", "measured_world_size", "measured_iteration_s",
                  "predicted_iteration_s"]
CHECK_COLUMNS = ["system", "allreduce", "ranks", "size_bytes", "measured_time_us", "predicted_time_us",
                 "measured_busbw_gbs", "predicted_busbw_gbs"]
MODELS = ["ring-agg", "tree", "auto"]
COLOURS = {"ring-agg": style.OKABE_ITO["orange"], "tree": style.OKABE_ITO["green"], "auto": style.PREDICTED}
STYLES = {"ring-agg": "--", "tree": ":", "auto": "-"}
MARKERS = {"ring-agg": "o", "tree": "^", "auto": None}


def _number(path, row, column):
    try:
        return float(row[column])
    except (TypeError, ValueError):
        raise InputError(path, f"a number in column {column}", repr(row[column])) from None


def plotted_numbers(replays_path, check_path):
    """Long format: panel, series, x, y, error_pct (predicted vs published, where there is one)."""
    rows = []
    replays = read_csv_rows(replays_path, REPLAY_COLUMNS, "simulator/bench/cluster_scaling.py")
    if not replays:
        raise InputError(replays_path, "rows", "none")
    first = replays[0]
    rows.append({"panel": "scaling", "series": "measured", "x": _number(replays_path, first, "measured_world_size"),
                 "y": 1e3 * _number(replays_path, first, "measured_iteration_s"), "error_pct": None})
    for row in replays:
        rows.append({"panel": "scaling", "series": row["allreduce"], "x": _number(replays_path, row, "world_size"),
                     "y": 1e3 * _number(replays_path, row, "predicted_iteration_s"), "error_pct": None})
    check = read_csv_rows(check_path, CHECK_COLUMNS, "simulator/bench/nccl_tests_check.py")
    for row in check:
        model = row["allreduce"]
        predicted = _number(check_path, row, "predicted_busbw_gbs")
        if row["system"] == "A100x24 sweep":
            rows.append({"panel": "a100", "series": model, "x": _number(check_path, row, "size_bytes"), "y": predicted,
                         "error_pct": None})
        elif row["system"] == "A100x24":
            measured_us = _number(check_path, row, "measured_time_us")
            rows.append({"panel": "a100", "series": "measured", "x": _number(check_path, row, "size_bytes"),
                         "y": _number(check_path, row, "measured_busbw_gbs"), "error_pct": None})
            rows.append({"panel": "a100-error", "series": model, "x": _number(check_path, row, "size_bytes"),
                         "y": predicted,
                         "error_pct": 100 * relative_error(_number(check_path, row, "predicted_time_us"), measured_us)})
        elif row["system"] == "A100x24 average":
            measured = _number(check_path, row, "measured_busbw_gbs")
            rows.append({"panel": "a100-average", "series": model, "x": None, "y": predicted,
                         "error_pct": 100 * relative_error(predicted, measured)})
            rows.append({"panel": "a100-average", "series": "measured", "x": None, "y": measured, "error_pct": None})
        elif row["system"] == "H100":
            measured = _number(check_path, row, "measured_busbw_gbs")
            nodes = _number(check_path, row, "ranks") / 8
            rows.append({"panel": "h100", "series": model, "x": nodes, "y": predicted,
                         "error_pct": 100 * relative_error(predicted, measured)})
            rows.append({"panel": "h100", "series": "measured", "x": nodes, "y": measured, "error_pct": None})
    frame = pd.DataFrame(rows).drop_duplicates(subset=["panel", "series", "x", "y"], ignore_index=True)
    for panel in ("a100", "h100"):
        if frame[frame["panel"] == panel].empty:
            raise InputError(check_path, f"rows of the {panel} check", "none")
    return frame


def _series(frame, panel, series):
    return frame[(frame["panel"] == panel) & (frame["series"] == series)].sort_values("x")


def _draw(ax, points, model, markers=True):
    """auto under the others, wide and pale: it coincides with whichever model it picked."""
    if model == "auto":
        ax.plot(points["x"], points["y"], "-", color=COLOURS[model], linewidth=3.2, alpha=0.35, label=_label(model))
    else:
        ax.plot(points["x"], points["y"], STYLES[model], marker=MARKERS[model] if markers else None,
                markerfacecolor="white", color=COLOURS[model], label=_label(model))


def _label(model):
    return "auto (picks the faster)" if model == "auto" else model


def plot(replays_path, check_path, out_dir, name="cluster-scaling"):
    plotted = plotted_numbers(replays_path, check_path)
    replays = read_csv_rows(replays_path, REPLAY_COLUMNS, "simulator/bench/cluster_scaling.py")
    cluster, trace = replays[0]["cluster"], replays[0]["trace"]
    fig, (scaling, a100, h100) = style.figure(width=style.TEXT_WIDTH, height=2.5, ncols=3,
                                              gridspec_kw={"width_ratios": [1, 1.3, 1]})

    for model in MODELS:
        _draw(scaling, _series(plotted, "scaling", model), model)
    measured = _series(plotted, "scaling", "measured")
    scaling.plot(measured["x"], measured["y"], "s", color=style.MEASURED,
                 label=f"measured (W = {int(measured['x'].iloc[0])})", zorder=3)
    scaling.set_xscale("log", base=2)
    scaling.set_yscale("log")
    scaling.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    scaling.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    scaling.set_yticks([200, 500, 1000, 2000, 5000])
    scaling.set_xlabel("World size (GPUs)")
    scaling.set_ylabel("Step time (ms)")
    scaling.set_title(f"{trace} replayed on {cluster}", fontsize=7)
    scaling.legend(loc="upper left")

    for model in MODELS:
        curve = _series(plotted, "a100", model).copy()
        curve["x"] = curve["x"] / 2**20
        _draw(a100, curve, model, markers=False)
        handle = a100.get_lines()[-1]
        average = plotted[(plotted["panel"] == "a100-average") & (plotted["series"] == model)]
        errors = plotted[(plotted["panel"] == "a100-error") & (plotted["series"] == model)]["error_pct"]
        handle.set_label(f"{model}: time {errors.min():+.0f}…{errors.max():+.0f} % near 128 MB, "
                         f"avg busbw {average['error_pct'].iloc[0]:+.0f} %")
    published = _series(plotted, "a100", "measured")
    a100.plot(published["x"] / 2**20, published["y"], "o", color=style.MEASURED, label="nccl-tests#119", zorder=3)
    average = plotted[(plotted["panel"] == "a100-average") & (plotted["series"] == "measured")]["y"].iloc[0]
    a100.axhline(average, color=style.MEASURED, linewidth=0.6, linestyle="-.",
                 label=f"nccl-tests#119 average over its 128 sizes ({average:.1f})")
    a100.set_xlabel("Message size (MiB)")
    a100.set_ylabel("Bus bandwidth (GB/s)")
    a100.set_ylim(0, 165)  # room for the legend above the curves
    a100.set_title("all-reduce, 24 × A100 (3 nodes, 4 HDR NICs each)", fontsize=7)
    a100.legend(loc="upper left", fontsize=5.2)

    for model in MODELS:
        points = _series(plotted, "h100", model)
        _draw(h100, points, model)
        h100.get_lines()[-1].set_label(f"{model}: " + ", ".join(f"{e:+.1f}" for e in points["error_pct"]) + " %")
    published = _series(plotted, "h100", "measured")
    h100.plot(published["x"], published["y"], "s", color=style.MEASURED, label="nccl-tests#309 (peak)", zorder=3)
    h100.set_xscale("log", base=2)
    h100.set_xticks([1, 2, 4])
    h100.set_xticklabels(["1", "2", "4"])
    h100.minorticks_off()
    h100.set_ylim(0, None)
    h100.set_xlabel("Nodes (8 GPUs each)")
    h100.set_ylabel("Bus bandwidth, 16 GiB (GB/s)")
    h100.set_title("all-reduce, HGX H100 on dgx-h100", fontsize=7)
    h100.legend(loc="lower left", fontsize=5.2)
    fig.tight_layout()
    return output.save(fig, plotted, out_dir, name)
