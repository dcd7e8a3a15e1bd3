"""Reading ddp-experiment summaries and CSV inputs, with one-line errors for bad input.

Every problem raises InputError("FILE: expected ..., got ..."); ddpsim-plot prints it and
exits with status 2. Nothing here plots.
"""
import csv
import math
import os

import pandas as pd

from ddpsim.input_error import InputError

# Columns of summary.csv that hold numbers (experiments/src/results.cpp writes them).
NUMERIC_COLUMNS = [
    "rep", "world_size", "bucket_cap_mb", "first_bucket_cap_mb", "timeout_s", "batch_size",
    "iterations", "predicted_world_size", "predicted_timeout_s", "measured_iter_s",
    "predicted_iter_s", "error_pct", "measured_samples_per_s", "predicted_samples_per_s",
    "measured_iterations", "measured_failed", "predicted_failed", "job_exit", "job_wall_s",
    "max_slowdown", "max_delay_ms",
]


def read_csv_rows(path, columns, source):
    """The rows of a CSV file that must have `columns`; `source` names what writes it (for
    the one-line error)."""
    try:
        with open(path, newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                raise InputError(path, "columns " + ", ".join(columns) + f" ({source})", "no " + ", ".join(missing))
            return list(reader)
    except FileNotFoundError:
        raise InputError(path, f"a CSV file from {source}", "no such file") from None
    except OSError as error:  # a folder, or a path under a file
        raise InputError(path, "a readable file", error.strerror or str(error)) from None
    except UnicodeDecodeError as error:
        raise InputError(path, "a CSV file", str(error)) from None

def short(value, limit=40):
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_summary(path, required):
    """summary.csv as a DataFrame: `required` columns present, numeric columns numeric.

    Empty cells stay NaN (e.g. measured columns of a what-if row), text columns are strings.
    """
    if not os.path.isfile(path):
        raise InputError(path, "a summary CSV file written by ddp-experiment", "no such file")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise InputError(path, "a CSV header line", "an empty file") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(path, "a well-formed CSV file", short(first, 80)) from None
    missing = [column for column in required if column not in frame.columns]
    if missing:
        raise InputError(path, "column(s) " + ", ".join(missing),
                         "header " + short(",".join(frame.columns), 60))
    for column in NUMERIC_COLUMNS:
        if column not in frame.columns:
            continue
        text = frame[column].str.strip()
        values = pd.to_numeric(text.where(text != ""), errors="coerce")
        bad = values.isna() & (text != "")
        if bad.any():
            line = int(bad.to_numpy().nonzero()[0][0]) + 2  # +1 header, +1 one-based
            raise InputError(f"{path}:{line}", f"a number in column '{column}'",
                             repr(short(text[bad].iloc[0])))
        frame[column] = values
    if "status" in frame.columns:
        # "prediction_error" rows hold a good measurement (their predicted columns are empty).
        frame = frame[frame["status"].isin(["ok", "prediction_error", ""])]
    if "variant" not in frame.columns:
        frame["variant"] = ""
    if frame.empty:
        raise InputError(path, "at least one row with status ok", "none")
    return frame


def base_rows(frame):
    """Rows of the measured configuration (not what-if predictions)."""
    return frame[frame["variant"] == ""]


# Sweep axes a predicted-vs-measured figure can have on x: column, label, and the numeric
# column holding its values. The skew columns hold flag text ("1=2.0", "1=500@5"); their numbers
# are max_slowdown and max_delay_ms, which the runner reads with the trace library's skew parser
# (experiments/src/results.cpp fill_skew_maxima), so the syntax is parsed in one place.
SWEEP_AXES = [
    ("bucket_cap_mb", "Bucket cap (MB)", "bucket_cap_mb"),
    ("first_bucket_cap_mb", "First bucket cap (MB)", "first_bucket_cap_mb"),
    ("slowdown", "Straggler slowdown (×)", "max_slowdown"),
    ("delay", "Injected delay (ms)", "max_delay_ms"),
    ("timeout_s", "Timeout (s)", "timeout_s"),
    ("world_size", "Ranks", "world_size"),
]


def sweep_axis(frame, path, column=None):
    """(column, label, x values) of the axis that varies across the measured points."""
    for name, label, source in SWEEP_AXES:
        if column is not None and name != column:
            continue
        if name not in frame.columns:
            continue
        if source not in frame.columns:
            # A summary from before the runner wrote the skew numbers: rerunning its spec
            # (nothing left to run) rewrites it with them.
            if column is not None or frame[name].replace("", math.nan).nunique(dropna=True) > 1:
                raise InputError(path, f"column {source} (the numbers of '{name}'; `ddp-experiment "
                                 "run SPEC` adds it to an older summary.csv)", "none")
            continue
        values = frame[source]
        if column is not None or values.nunique(dropna=True) > 1:
            return name, label, values
    if column is not None:
        raise InputError(path, "a sweep column among " + ", ".join(n for n, _, _ in SWEEP_AXES),
                         repr(column))
    raise InputError(path, "points that differ in one of " +
                     ", ".join(n for n, _, _ in SWEEP_AXES), "a single configuration")
