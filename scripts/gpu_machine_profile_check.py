#!/usr/bin/env python3
"""Checks a ddp-machine-profile file against traces/MACHINE.md's rules: the check that
scripts/gpu-machine-profile.sh makes of each profile it measures on a GPU. A ctest
(runtime.gpu_machine_profile_check_over_gloo) makes it of a CPU profile too, so that it cannot
rot between the sessions that have a GPU.

Usage: gpu_machine_profile_check.py FILE BACKEND DEVICE
Prints one line naming the file and what it holds; exits 1 with the rule it broke otherwise.
Standard library only: the GPU machine's python need not have ddpsim's packages.
"""

import json
import sys

SCHEMA = 2           # traces/MACHINE.md: the version ddp-machine-profile writes
MIN_LADDER_SIZES = 8  # the tool's default ladder


def check(path, backend, device):
    with open(path) as f:
        p = json.load(f)
    problems = []

    def expect(ok, what):
        if not ok:
            problems.append(what)

    expect(p.get("ddpsim_machine_profile") == SCHEMA,
           f"ddpsim_machine_profile {SCHEMA}, got {p.get('ddpsim_machine_profile')!r}")
    expect(p.get("backend") == backend, f"backend {backend}, got {p.get('backend')!r}")
    expect(p.get("device") == device, f"device {device}, got {p.get('device')!r}")
    allreduce = p.get("allreduce", {})
    steps = allreduce.get("ladder", [])
    expect(len(steps) >= MIN_LADDER_SIZES, f"a ladder of at least {MIN_LADDER_SIZES} sizes, got {len(steps)}")
    expect([s["bytes"] for s in steps] == sorted({s["bytes"] for s in steps}), "ladder sizes increasing")
    expect(all(s["one"]["median_s"] > 0 and s["together"]["median_s"] > 0 for s in steps),
           "every rung's one and together medians > 0")
    gain = allreduce.get("in_flight_gain", 0)
    expect(0 < gain <= allreduce.get("in_flight", 0), f"0 < in_flight_gain <= in_flight, got {gain}")
    compute = p.get("compute", {})
    cores = compute.get("effective_cores", 0)
    expect(0 < cores <= p.get("ranks_per_host", 0), f"0 < compute.effective_cores <= ranks_per_host, got {cores}")
    overlap = p.get("overlap")
    expect(overlap is not None, "an overlap section (schema 2)")
    if overlap is not None:
        expect(0 < overlap.get("allreduce_fraction", 0) <= 1 and 0 < overlap.get("compute_fraction", 0) <= 1,
               "overlap fractions in (0, 1]")
    sleep = p.get("sleep")
    expect(sleep is not None and sleep.get("resume_cost_s", -1) >= 0, "a sleep section with resume_cost_s >= 0")
    versions = p.get("versions", {})
    expect(bool(versions.get("torch")), "versions.torch")
    if problems:
        print(f"{path}: expected " + "; ".join(problems), file=sys.stderr)
        return 1
    print(f"{path}: ok, {len(steps)} sizes, torch {versions['torch']}, nccl {versions.get('nccl') or '-'}, "
          f"gain x{gain:.3f}, {cores:.3f} effective cores, overlap x{overlap['allreduce_fraction']:.3f} "
          f"all-reduce / x{overlap['compute_fraction']:.3f} compute, resume {sleep['resume_cost_s'] * 1e3:.3f} ms")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print("usage: gpu_machine_profile_check.py FILE BACKEND DEVICE", file=sys.stderr)
        sys.exit(2)
    sys.exit(check(*sys.argv[1:]))
