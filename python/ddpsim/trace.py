"""A ddpsim trace directory (traces/FORMAT.md) as pandas DataFrames, for notebooks and figures.

    trace = ddpsim.read_trace("traces/examples/convnet-2rank")
    trace.events       # every event of every rank, as in rank-R.events.csv
    trace.iterations   # one row per rank and iteration: its bounds and phases
    trace.buckets      # one row per rank, iteration and all-reduce of a bucket
    trace.metas        # {rank: rank-R.meta.json as a dict}

Bad input raises ddpsim.InputError (one line: the file and what was expected).
"""
import glob
import io
import json
import os
from dataclasses import dataclass

import pandas as pd

from ddpsim.input_error import InputError
from ddpsim.inputs import short

EVENTS_HEADER = ["rank", "iteration", "event", "t_ns", "bucket", "param", "bytes", "dur_ns",
                 "kind", "message"]

# The phases of an iteration, each from its first <phase>_begin to its last <phase>_end.
PHASES = ["forward", "backward", "optimizer"]


@dataclass
class Trace:
    """One trace directory read: its metadata per rank and its events as DataFrames."""

    path: str
    metas: dict
    events: pd.DataFrame
    iterations: pd.DataFrame
    buckets: pd.DataFrame

    @property
    def world_size(self):
        return len(self.metas)

    def __repr__(self):
        complete = int(self.iterations["complete"].sum())
        return (f"<ddpsim.Trace {self.path}: {self.world_size} ranks, {len(self.events)} events, "
                f"{complete} complete rank-iterations, {len(self.buckets)} bucket all-reduces>")


def read_trace(path):
    """The Trace of a directory of rank-R.meta.json and rank-R.events.csv files.

    A cut last line of an events file (a rank that died while writing) is dropped, as the C++
    reader does; an iteration without its iteration_end has complete == False.
    """
    metas, events = read_metas_and_events(path)
    return Trace(path=path, metas=metas, events=events, iterations=iterations_of(events),
                 buckets=buckets_of(events))


def read_metas_and_events(path):
    """(metas by rank, events DataFrame of every rank) of a trace directory."""
    if not os.path.isdir(path):
        raise InputError(path, "a trace directory (rank-R.meta.json + rank-R.events.csv)",
                         "no such directory")
    meta_files = sorted(glob.glob(os.path.join(path, "rank-*.meta.json")))
    if not meta_files:
        raise InputError(path, "rank-R.meta.json files of a trace", "none")
    metas, frames = {}, []
    for meta_file in meta_files:
        try:
            with open(meta_file, encoding="utf-8") as handle:
                meta = json.load(handle)
        except (OSError, ValueError, RecursionError) as error:  # RecursionError: nested too deep
            raise InputError(meta_file, "trace metadata JSON", short(error, 60)) from None
        if not isinstance(meta, dict) or meta.get("schema") != "ddpsim-trace":
            raise InputError(meta_file, 'trace metadata with "schema": "ddpsim-trace"',
                             short(meta.get("schema") if isinstance(meta, dict) else type(meta).__name__))
        if meta.get("schema_version") != 1:
            raise InputError(meta_file, "schema_version 1", repr(meta.get("schema_version")))
        rank = meta.get("rank")
        if not isinstance(rank, int):
            raise InputError(meta_file, "an integer 'rank'", repr(rank))
        metas[rank] = meta
        frames.append(_read_events(os.path.join(path, f"rank-{rank}.events.csv")))
    return metas, pd.concat(frames, ignore_index=True)


def _read_events(path):
    if not os.path.isfile(path):
        raise InputError(path, "the rank's events CSV", "no such file")
    with open(path, encoding="utf-8") as handle:
        header = handle.readline().rstrip("\r\n")
        text = handle.read()
    if header.split(",") != EVENTS_HEADER:
        raise InputError(f"{path}:1", "the header " + ",".join(EVENTS_HEADER), repr(short(header)))
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # a cut last line: the rank died while writing
    frame = pd.read_csv(io.StringIO(header + "\n" + text),
                        dtype={"event": str, "kind": str, "message": str})
    for column in ("rank", "iteration", "t_ns"):
        values = pd.to_numeric(frame[column], errors="coerce")
        if values.isna().any():
            line = int(values.isna().to_numpy().nonzero()[0][0]) + 2
            raise InputError(f"{path}:{line}", f"an integer in column '{column}'",
                             repr(short(frame[column].iloc[line - 2])))
        frame[column] = values.astype("int64")
    return frame


def _first_last(events, name, pick):
    rows = events[events["event"] == name]
    return rows.groupby(["rank", "iteration"])["t_ns"].agg(pick)


def iterations_of(events):
    """One row per (rank, iteration): begin_ns, end_ns, duration_ms, <phase>_ms for forward,
    backward and optimizer (first begin to last end; NaN where missing), and complete (its
    iteration_end recorded)."""
    keys = events[["rank", "iteration"]].drop_duplicates().set_index(["rank", "iteration"]).index
    frame = pd.DataFrame(index=keys.sort_values())
    frame["begin_ns"] = _first_last(events, "iteration_begin", "min")
    frame["end_ns"] = _first_last(events, "iteration_end", "max")
    frame["duration_ms"] = (frame["end_ns"] - frame["begin_ns"]) / 1e6
    for phase in PHASES:
        begin = _first_last(events, f"{phase}_begin", "min")
        end = _first_last(events, f"{phase}_end", "max")
        frame[f"{phase}_ms"] = (end - begin) / 1e6
    frame["complete"] = frame["end_ns"].notna()
    for column in ("begin_ns", "end_ns"):
        frame[column] = frame[column].astype("Int64")
    return frame.reset_index()


def buckets_of(events):
    """One row per bucket all-reduce: rank, iteration, bucket, bytes, ready_ns (its
    bucket_ready), begin_ns, end_ns (NaN if it never completed) and allreduce_ms. Each
    allreduce_begin pairs with the next allreduce_end of the same bucket in the same iteration
    (traces/FORMAT.md)."""
    keys = ["rank", "iteration", "bucket"]
    columns = keys + ["bytes", "ready_ns", "begin_ns", "end_ns", "allreduce_ms"]

    def numbered(name):
        rows = events[events["event"] == name][keys + ["t_ns", "bytes"]].copy()
        rows["n"] = rows.groupby(keys).cumcount()
        return rows

    begins = numbered("allreduce_begin").rename(columns={"t_ns": "begin_ns"})
    if begins.empty:
        return pd.DataFrame(columns=columns)
    ends = numbered("allreduce_end").rename(columns={"t_ns": "end_ns"}).drop(columns="bytes")
    ready = numbered("bucket_ready").rename(columns={"t_ns": "ready_ns"}).drop(columns="bytes")
    frame = begins.merge(ends, on=keys + ["n"], how="left").merge(ready, on=keys + ["n"], how="left")
    frame["allreduce_ms"] = (frame["end_ns"] - frame["begin_ns"]) / 1e6
    for column in ("bucket", "bytes", "ready_ns", "end_ns"):
        frame[column] = frame[column].astype("Int64")
    return frame.sort_values(keys + ["begin_ns"], kind="stable")[columns].reset_index(drop=True)
