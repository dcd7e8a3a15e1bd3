"""`ddp-sim advise --json` as a figure: the predicted median iteration per bucket cap (left)
and what each rank's compute costs the job per iteration (right), both with their 90 %
bootstrap intervals; the recommended cap and the named stragglers are highlighted."""
import json

import pandas as pd
from matplotlib.patches import Patch

from ddpsim.plot import output
from ddpsim.plot import style
from ddpsim.inputs import InputError


def read_advice(path):
    try:
        with open(path, encoding="utf-8") as file:
            advice = json.load(file)
    except FileNotFoundError:
        raise InputError(path, "a JSON file written by ddp-sim advise --json", "no such file") from None
    except OSError as error:  # a folder, or a path under a file
        raise InputError(path, "a readable file", error.strerror or str(error)) from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:  # or nested too deep
        raise InputError(path, "JSON", str(error).splitlines()[0]) from None
    if not isinstance(advice, dict) or not all(key in advice for key in ("bucket", "stragglers")):
        raise InputError(path, "keys 'bucket' and 'stragglers' (ddp-sim advise --json)")
    return advice


def plotted_numbers(path):
    """One row per bucket cap and per rank (plus 'all'): value, interval, and whether it is
    the recommendation / a straggler."""
    advice = read_advice(path)
    rows = []
    bucket = advice["bucket"]
    for candidate in bucket.get("candidates", []):
        low, high = candidate["interval_s"]
        rows.append({"panel": "bucket_cap", "x": candidate["bucket_cap_mb"], "value_ms": candidate["median_iteration_s"] * 1e3,
                     "low_ms": low * 1e3, "high_ms": high * 1e3,
                     "own": candidate["bucket_cap_mb"] == bucket["own"]["bucket_cap_mb"],
                     "marked": candidate["bucket_cap_mb"] == bucket["recommended_bucket_cap_mb"]})
    for cost in advice["stragglers"]["ranks"] + [dict(advice["stragglers"]["all"], rank="all")]:
        low, high = cost["interval_s"]
        rows.append({"panel": "rank_cost", "x": cost["rank"], "value_ms": cost["per_iteration_s"] * 1e3,
                     "low_ms": low * 1e3, "high_ms": high * 1e3, "own": False,
                     "marked": bool(cost.get("straggler", False))})
    if not rows:
        raise InputError(path, "bucket candidates or ranks", "none")
    return pd.DataFrame(rows, columns=["panel", "x", "value_ms", "low_ms", "high_ms", "own", "marked"])


def plot(path, out_dir, name="advise"):
    plotted = plotted_numbers(path)
    fig, (left, right) = style.figure(width=style.TEXT_WIDTH, height=2.2, ncols=2)
    caps = plotted[plotted["panel"] == "bucket_cap"]
    if not caps.empty:
        left.errorbar(caps["x"], caps["value_ms"], yerr=[caps["value_ms"] - caps["low_ms"], caps["high_ms"] - caps["value_ms"]],
                      fmt="o-", color=style.PREDICTED, label="predicted median (90 % interval)")
        own = caps[caps["own"]]
        left.plot(own["x"], own["value_ms"], "s", color=style.MEASURED, markersize=6, fillstyle="none",
                  label="the trace's cap")
        marked = caps[caps["marked"]]
        left.plot(marked["x"], marked["value_ms"], "*", color=style.OKABE_ITO["green"], markersize=9,
                  label="advised")
        left.set_xscale("log")
        left.legend(fontsize=6.5)
    left.set_xlabel("bucket_cap_mb (MiB)")
    left.set_ylabel("Median iteration (ms)")
    ranks = plotted[plotted["panel"] == "rank_cost"].reset_index(drop=True)
    colours = [style.OKABE_ITO["vermillion"] if marked else "#999999" for marked in ranks["marked"]]
    right.bar(range(len(ranks)), ranks["value_ms"], color=colours,
              yerr=[ranks["value_ms"] - ranks["low_ms"], ranks["high_ms"] - ranks["value_ms"]])
    right.set_xticks(range(len(ranks)), [str(x) for x in ranks["x"]])
    right.axhline(0, color="black", linewidth=0.5)
    right.set_xlabel("Rank made typical (all: every rank)")
    right.set_ylabel("Cost per iteration (ms)")
    right.legend(handles=[Patch(color=style.OKABE_ITO["vermillion"], label="straggler"),
                          Patch(color="#999999", label="not a straggler")], fontsize=6.5)
    return output.save(fig, plotted, out_dir, name)
