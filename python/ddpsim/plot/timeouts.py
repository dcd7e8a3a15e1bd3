"""Timeout what-ifs against measured runs: does the job die, where, and how long after the stall.

Each measured run at timeout T (a point of experiments/timeout-whatif.toml, one repetition) is
compared with the replay at --timeout T of the same repetition's run measured at the source
timeout (default: the largest; those runs survived the stall, so their traces hold it). Runs
measured at the source timeout itself are left out: their replay is a reconstruction.

Time to failure is the first `failure` event of any rank minus the last `delay` event before
it (the injected stall's start), on one trace's clock; measured and predicted traces record
both (traces/FORMAT.md)."""
import os

import pandas as pd

from ddpsim.plot import output
from ddpsim.inputs import InputError, base_rows, read_summary
from ddpsim.trace import read_metas_and_events
from ddpsim.stats import relative_error
from ddpsim.plot.timeout_curve import source_timeout

REQUIRED = ["point", "rep", "variant", "status", "max_delay_ms", "timeout_s", "predicted_timeout_s",
            "measured_failed", "predicted_failed", "trace_dir", "predicted_dir"]
COLUMNS = ["delay_ms", "timeout_s", "rep", "point", "from_timeout_s", "measured_failed",
           "predicted_failed", "outcome_right", "measured_where", "predicted_where", "where_right",
           "measured_time_to_failure_s", "predicted_time_to_failure_s", "time_to_failure_error_pct"]


def first_failure(trace_dir):
    """(where, seconds from the stall's start) of a trace's first failure; (None, None) without
    one. `where` is 'rank R iteration I bucket B', the collective that timed out."""
    _, events = read_metas_and_events(trace_dir)
    failures = events[events["event"] == "failure"].sort_values("t_ns", kind="stable")
    if failures.empty:
        return None, None
    first = failures.iloc[0]
    bucket = "" if pd.isna(first["bucket"]) else f" bucket {int(first['bucket'])}"
    where = f"rank {int(first['rank'])} iteration {int(first['iteration'])}{bucket}"
    stalls = events[(events["event"] == "delay") & (events["t_ns"] <= first["t_ns"])]
    if stalls.empty:
        return where, None
    return where, (int(first["t_ns"]) - int(stalls["t_ns"].max())) * 1e-9


def compared(path, from_timeout=None):
    """One row per measured run below/above the source timeout (COLUMNS)."""
    frame = read_summary(path, REQUIRED)
    frame = frame.assign(delay_ms=frame["max_delay_ms"].fillna(0.0))
    measured = base_rows(frame).dropna(subset=["timeout_s", "measured_failed"])
    if measured.empty:
        raise InputError(path, "measured rows with timeout_s", "none")
    from_timeout = source_timeout(path, measured, from_timeout)
    predictions = frame[(frame["timeout_s"] == from_timeout)].dropna(
        subset=["predicted_timeout_s", "predicted_failed"])
    predictions = predictions.drop_duplicates(subset=["delay_ms", "rep", "predicted_timeout_s"])
    base = os.path.dirname(os.path.abspath(path))
    rows = []
    for _, run in measured[measured["timeout_s"] != from_timeout].iterrows():
        match = predictions[(predictions["delay_ms"] == run["delay_ms"]) & (predictions["rep"] == run["rep"])
                            & (predictions["predicted_timeout_s"] == run["timeout_s"])]
        if match.empty:
            continue  # no replay of the source run at this timeout (not asked, or it failed)
        prediction = match.iloc[0]
        row = {"delay_ms": run["delay_ms"], "timeout_s": run["timeout_s"], "rep": run["rep"],
               "point": run["point"], "from_timeout_s": from_timeout,
               "measured_failed": int(run["measured_failed"]),
               "predicted_failed": int(prediction["predicted_failed"])}
        row["outcome_right"] = int(row["measured_failed"] == row["predicted_failed"])
        if row["measured_failed"] and row["predicted_failed"]:
            m_where, m_s = first_failure(os.path.join(base, run["trace_dir"]))
            p_where, p_s = first_failure(os.path.join(base, prediction["predicted_dir"]))
            row.update(measured_where=m_where, predicted_where=p_where,
                       where_right=int(m_where is not None and m_where == p_where),
                       measured_time_to_failure_s=m_s, predicted_time_to_failure_s=p_s)
            if m_s and p_s is not None:
                row["time_to_failure_error_pct"] = 100 * relative_error(p_s, m_s)
        rows.append(row)
    if not rows:
        raise InputError(path, f"runs below or above --from-timeout {from_timeout:g} with a replay "
                         "of that timeout's run at theirs", "none")
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["where_right"] = table["where_right"].astype("Int64")  # 0/1, empty where not both failed
    return table


def format_table(table):
    lines = ["delay_ms  timeout_s  runs  outcome right  where right  time to failure: measured s  "
             "predicted s  median err %"]
    for (delay, timeout), group in table.groupby(["delay_ms", "timeout_s"], sort=True):
        failed = group.dropna(subset=["time_to_failure_error_pct"])
        ttf = (f"{failed['measured_time_to_failure_s'].median():27.3f}  "
               f"{failed['predicted_time_to_failure_s'].median():11.3f}  "
               f"{failed['time_to_failure_error_pct'].median():+12.1f}") if len(failed) else f"{'-':>27}  {'-':>11}  {'-':>12}"
        both = group["where_right"].notna().sum()
        lines.append(f"{delay:8g}  {timeout:9g}  {len(group):4d}  {group['outcome_right'].sum():6d} of {len(group):<3d}"
                     f"  {int(group['where_right'].sum()) if both else 0:4d} of {both:<3d}  {ttf}")
    errors = table["time_to_failure_error_pct"].dropna().abs()
    lines.append(f"all: die/survive right {int(table['outcome_right'].sum())} of {len(table)}; failing "
                 f"rank/iteration/bucket right {int(table['where_right'].sum())} of "
                 f"{int(table['where_right'].notna().sum())}; time to failure median |err| "
                 + (f"{errors.median():.1f} %, max {errors.max():.1f} % ({len(errors)} runs)" if len(errors) else "-")
                 + f" (predicted from the runs at {table['from_timeout_s'].iloc[0]:g} s)")
    return "\n".join(lines)


def plot(path, out_dir, name="timeouts", from_timeout=None):
    table = compared(path, from_timeout)
    print(format_table(table))
    return [output.save_table(table, out_dir, name)]
