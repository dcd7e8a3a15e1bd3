#!/usr/bin/env python3
"""A plain Python DDP job's profile re-buckets exactly: the import's layout at other caps is DDP's.

Usage: python_ddp_layout.py DDP_LAUNCH PYTHON PEER DDP_TRACE DDP_SIM SCRATCH MODEL [--explicit-bucket-cap]

Runs runtime/peer/python_ddp.py (2 Gloo ranks) as a user would, profiled with record_shapes=True
at bucket_cap_mb 25, and has it record the layouts PyTorch's DDP itself built at 25, 5 and 1 MiB
(DDP._get_ddp_logging_data(): rebuilt bucket sizes and parameters). The profile is imported with
`ddp-trace import --kineto`, re-bucketed by `ddp-sim replay --bucket-cap-mb C` for each cap, and
the predicted trace's buckets (bytes and parameter count, in order) must equal DDP's. With
--explicit-bucket-cap the job builds DDP(bucket_cap_mb=C) as users write it (every bucket, the first
too, capped at C) and `--bucket-cap-mb C` alone must move the first bucket with it. Exit 0 on
success, 1 on a mismatch (with both layouts printed), 2 on a failed step.
"""
import json
import os
import shutil
import subprocess
import sys

from ddpsim.bench.python_jobs import worth_another_run

CAPS = [25.0, 5.0, 1.0]


def run(cmd, log, attempt=1):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n" + result.stdout)
    if worth_another_run(result.returncode, result.stdout, attempt):
        return run(cmd, log, attempt + 1)  # a worker's abort as it ends: again, as python_jobs does
    if result.returncode != 0:
        sys.stdout.write(result.stdout)
        sys.exit(f"python_ddp_layout: failed ({result.returncode}): {' '.join(cmd)}")
    return result.stdout


def trace_layout(trace_dir):
    """(bytes, parameter count) per bucket of rank 0's last bucket layout."""
    with open(os.path.join(trace_dir, "rank-0.meta.json")) as f:
        meta = json.load(f)
    sizes = {p["index"]: p["numel"] * {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}[p["dtype"]]
             for p in meta["parameters"]}
    buckets = meta["bucket_assignments"][-1]["buckets"]
    return [(sum(sizes[i] for i in bucket), len(bucket)) for bucket in buckets]


def main():
    launch, python, peer, ddp_trace, ddp_sim, scratch, model = sys.argv[1:8]
    explicit = sys.argv[8:] == ["--explicit-bucket-cap"]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    log = os.path.join(scratch, "log.txt")
    layouts_file = os.path.join(scratch, "ddp-layouts.json")
    run([launch, "--nproc-per-node", "2", "--master-port", "0", "--", python, peer, "--model", model,
         "--iterations", "6", "--batch-size", "8", "--bucket-cap-mb", "25", "--quiet",
         "--profile", os.path.join(scratch, "prof"), "--layout-out", layouts_file,
         "--layout-caps", ",".join(str(c) for c in CAPS[1:])] + (["--explicit-bucket-cap"] if explicit else []), log)
    imported = os.path.join(scratch, "trace")
    report = run([ddp_trace, "import", "--kineto", imported] +
                 [os.path.join(scratch, "prof", f"rank-{r}.kineto.json") for r in range(2)], log)
    print(report, end="")
    if "re-bucketing is exact" not in report:
        sys.exit("python_ddp_layout: the import did not find per-gradient parameters")
    with open(layouts_file) as f:
        ddp = {layout["bucket_cap_mb"]: layout for layout in json.load(f)["layouts"]}
    failed = False
    for cap in CAPS:
        expected = [(size, len(params)) for size, params in zip(ddp[cap]["bucket_sizes"], ddp[cap]["bucket_params"])]
        if not expected:
            sys.exit(f"python_ddp_layout: DDP reported no rebuilt buckets at {cap} MiB")
        if cap == 25.0:
            got = trace_layout(imported)  # the recorded layout, as imported
        else:
            predicted = os.path.join(scratch, f"cap-{cap}")
            run([ddp_sim, "replay", imported, "--bucket-cap-mb", str(cap), "--iterations", "1",
                 "--out", predicted], log)
            got = trace_layout(predicted)
        same = got == expected
        failed |= not same
        print(f"{model} cap {cap:g} MiB: DDP {expected} | ddpsim {got} {'ok' if same else 'MISMATCH'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
