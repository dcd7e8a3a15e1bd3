"""A machine profile (traces/MACHINE.md, written by ddp-machine-profile) as pandas DataFrames.

    machine = ddpsim.read_machine_profile("machine.json")
    machine.ladder      # one row per size: one all-reduce, and in_flight at once (seconds)
    machine.overlap     # one row per --overlap-size: the all-reduce alone and while ranks compute
    machine.colocation  # one row per count of ranks on a host: their effective cores
    machine.info        # provenance and the profile's single numbers, as a dict

Reading several profiles of one machine (days, sittings) shows how far its speed moves.
ddp-sim --machine checks every field of the file; this reads what the tables need and raises
ddpsim.InputError (one line: the file and what was expected) where that is not there.
"""
import json
import math
from dataclasses import dataclass

import pandas as pd

from ddpsim.input_error import InputError
from ddpsim.inputs import short

TIMING = ("median_s", "min_s", "max_s", "samples")
INFO = ("ddpsim_machine_profile", "created_utc", "launcher", "backend", "device", "world_size",
        "hosts", "ranks_per_host", "threads", "versions", "tool")


@dataclass
class MachineProfile:
    """One machine profile read: its sections as DataFrames, its provenance as a dict."""

    path: str
    info: dict
    ladder: pd.DataFrame
    overlap: pd.DataFrame
    colocation: pd.DataFrame

    def __repr__(self):
        info = self.info
        return (f"<ddpsim.MachineProfile {self.path}: {info['backend']} on {info['world_size']} ranks, "
                f"{len(info['hosts'])} host(s), {len(self.ladder)} ladder sizes, {info['created_utc']}>")


def read_machine_profile(path):
    """The MachineProfile of a JSON file written by ddp-machine-profile --out."""
    try:
        with open(path, encoding="utf-8") as handle:
            root = json.load(handle)
    except (OSError, ValueError, RecursionError) as error:  # RecursionError: nested too deep
        raise InputError(path, "a JSON machine profile (ddp-machine-profile --out)", short(error, 60)) from None
    if not isinstance(root, dict) or root.get("ddpsim_machine_profile") not in (1, 2):
        got = root.get("ddpsim_machine_profile") if isinstance(root, dict) else type(root).__name__
        raise InputError(path, 'a machine profile with "ddpsim_machine_profile": 1 or 2', short(got))
    reader = _Reader(path)
    info = {key: root.get(key) for key in INFO}
    allreduce = reader.section(root, "allreduce")
    info["in_flight"] = allreduce.get("in_flight")
    info["in_flight_gain"] = allreduce.get("in_flight_gain")
    ladder = pd.DataFrame([{"bytes": reader.bytes(step, f"allreduce.ladder[{i}]"),
                            **reader.timing(step, "one", f"allreduce.ladder[{i}]"),
                            **reader.timing(step, "together", f"allreduce.ladder[{i}]")}
                           for i, step in enumerate(reader.items(allreduce, "ladder", "allreduce"))])
    compute = reader.section(root, "compute")
    colocation = [{"ranks": root.get("ranks_per_host"), "effective_cores": compute.get("effective_cores")}]
    colocation += [{"ranks": step.get("ranks"), "effective_cores": step.get("effective_cores")}
                   for step in compute.get("by_ranks", []) if isinstance(step, dict)]
    colocation = pd.DataFrame(colocation).drop_duplicates("ranks").sort_values("ranks").reset_index(drop=True)
    overlap_rows = []
    if "overlap" in root:
        overlap = reader.section(root, "overlap")
        info["allreduce_fraction"] = overlap.get("allreduce_fraction")
        info["compute_fraction"] = overlap.get("compute_fraction")
        by_size = bool(overlap.get("by_size"))  # version 2 files from before by_size have none
        sizes = reader.items(overlap, "by_size", "overlap") if by_size else [overlap]
        for i, at in enumerate(sizes):
            where = f"overlap.by_size[{i}]" if by_size else "overlap"
            overlap_rows.append({"bytes": reader.bytes(at, where),
                                 **reader.timing(at, "allreduce_alone", where, "alone"),
                                 **reader.timing(at, "allreduce_busy", where, "busy")})
    columns = ["bytes"] + [f"{prefix}_{field}" for prefix in ("alone", "busy") for field in TIMING]
    overlap_frame = pd.DataFrame(overlap_rows, columns=columns)
    overlap_frame["slowdown"] = overlap_frame["busy_median_s"] / overlap_frame["alone_median_s"]
    if "sleep" in root and isinstance(root["sleep"], dict):
        info["resume_cost_s"] = root["sleep"].get("resume_cost_s")
    return MachineProfile(path=path, info=info, ladder=ladder, overlap=overlap_frame, colocation=colocation)


class _Reader:
    """The checks of the fields the tables take, each failing as one InputError line."""

    def __init__(self, path):
        self.path = path

    def section(self, root, key):
        value = root.get(key)
        if not isinstance(value, dict):
            raise InputError(self.path, f"its {key!r} section, an object", short(value))
        return value

    def items(self, section, key, where):
        value = section.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(item, dict) for item in value):
            raise InputError(self.path, f"{where}.{key} to be a non-empty list of objects", short(value))
        return value

    def bytes(self, item, where):
        value = item.get("bytes")
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise InputError(self.path, f"{where}.bytes to be a positive integer", short(value))
        return value

    def timing(self, item, key, where, prefix=None):
        value = item.get(key)
        numbers = {}
        for field in TIMING:
            number = value.get(field) if isinstance(value, dict) else None
            if not isinstance(number, (int, float)) or isinstance(number, bool) or not 0 < number < math.inf:
                raise InputError(self.path, f"{where}.{key}.{field} to be a finite number > 0", short(number))
            numbers[f"{prefix or key}_{field}"] = number
        return numbers
