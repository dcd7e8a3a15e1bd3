"""Failure probability versus the process-group timeout: measured runs (markers) against the
simulator's predictions (lines), one colour per injected delay."""
import numpy as np
import pandas as pd

from ddpsim.plot import output
from ddpsim.plot import style
from ddpsim.inputs import InputError, base_rows, read_summary

# max_delay_ms: the longest --delay of the row's `delay` column, as the runner's skew parser
# reads it (a summary from before it was written: `ddp-experiment run SPEC` adds it).
REQUIRED = ["point", "rep", "variant", "status", "max_delay_ms", "timeout_s", "predicted_timeout_s",
            "measured_failed", "predicted_failed"]


def source_timeout(path, measured, from_timeout=None):
    """The measured timeout whose runs' replays predict the others: --from-timeout, checked
    against the measured ones, else the largest (None when nothing was measured)."""
    timeouts = sorted(set(measured["timeout_s"].dropna()))
    if from_timeout is None:
        return timeouts[-1] if timeouts else None
    if from_timeout not in timeouts:
        raise InputError(path, "--from-timeout among the measured timeouts " +
                         ", ".join(f"{t:g}" for t in timeouts), f"{from_timeout:g}")
    return from_timeout


def plotted_numbers(path, from_timeout=None):
    """Measured: every run at its own timeout. Predicted: the replays (measured configuration
    and timeout what-ifs) of the traces recorded under `from_timeout` (default: the largest
    measured timeout). Those runs survived the stall, so their traces hold it; a trace cut
    short by a real timeout lacks the stalled iteration and cannot predict it."""
    frame = read_summary(path, REQUIRED)
    frame = frame.assign(delay_ms=frame["max_delay_ms"].fillna(0.0))  # no --delay: 0 ms
    rows = []
    measured = base_rows(frame).dropna(subset=["timeout_s", "measured_failed"])
    for (delay, timeout), group in measured.groupby(["delay_ms", "timeout_s"], sort=True):
        rows.append({"delay_ms": delay, "source": "measured", "timeout_s": timeout,
                     "failure_probability": group["measured_failed"].mean(), "runs": len(group)})
    # Every replay (the measured configuration's and the timeout what-ifs) predicts the
    # outcome at its own predicted_timeout_s.
    from_timeout = source_timeout(path, measured, from_timeout)
    predicted = frame.dropna(subset=["predicted_timeout_s", "predicted_failed"])
    if from_timeout is not None:
        predicted = predicted[predicted["timeout_s"] == from_timeout]
    # A what-if at the measured timeout repeats the replay of the measured configuration.
    predicted = predicted.drop_duplicates(subset=["point", "rep", "predicted_timeout_s"])
    for (delay, timeout), group in predicted.groupby(["delay_ms", "predicted_timeout_s"], sort=True):
        rows.append({"delay_ms": delay, "source": "predicted", "timeout_s": timeout,
                     "failure_probability": group["predicted_failed"].mean(), "runs": len(group),
                     "predicted_from_timeout_s": from_timeout})
    plotted = pd.DataFrame(rows, columns=["delay_ms", "source", "timeout_s",
                                          "failure_probability", "runs", "predicted_from_timeout_s"])
    if plotted.empty:
        raise InputError(path, "rows with timeout_s and measured_failed/predicted_failed", "none")
    return plotted


def plot(path, out_dir, name="timeout-curve", from_timeout=None):
    plotted = plotted_numbers(path, from_timeout)
    fig, ax = style.figure()
    delays = sorted(plotted["delay_ms"].unique())
    for index, delay in enumerate(delays):
        colour = style.CYCLE[index % len(style.CYCLE)]
        label = f"{delay / 1000:g} s stall" if delay > 0 else "no stall"
        # Small vertical offsets keep coinciding curves of different delays visible (the
        # CSV holds the exact values).
        jitter = (index - (len(delays) - 1) / 2) * 0.025
        predicted = plotted[(plotted["delay_ms"] == delay) & (plotted["source"] == "predicted")]
        if not predicted.empty:
            # The replay's outcome holds until the next timeout it was asked about: a step.
            ax.step(predicted["timeout_s"], predicted["failure_probability"] + jitter, where="post",
                    color=colour, linestyle="--", linewidth=1.0)
        measured = plotted[(plotted["delay_ms"] == delay) & (plotted["source"] == "measured")]
        if not measured.empty:
            ax.plot(measured["timeout_s"], measured["failure_probability"] + jitter, "o",
                    color=colour, markersize=4, markeredgecolor="white", markeredgewidth=0.4,
                    label=label)
        else:
            ax.plot([], [], "--", color=colour, label=label)
        if delay > 0:
            ax.axvline(delay / 1000, color=colour, linewidth=0.6, linestyle=":", alpha=0.8)
    ax.plot([], [], "o", color="#777777", label="measured")
    source = plotted["predicted_from_timeout_s"].dropna()
    ax.plot([], [], "--", color="#777777",
            label=f"predicted (from {source.iloc[0]:g} s runs)" if len(source) else "predicted")
    ax.set_xlabel("Process-group timeout (s)")
    ax.set_ylabel("Failure probability")
    ax.set_ylim(-0.08, 1.08)
    ax.set_yticks(np.linspace(0, 1, 5))
    ax.set_xlim(left=0)
    ax.legend(loc="center right", fontsize=6.5)
    return output.save(fig, plotted, out_dir, name)
