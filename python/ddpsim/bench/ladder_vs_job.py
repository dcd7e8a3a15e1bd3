"""ladder_vs_job.py: a job's own all-reduces beside the machine profile's ladder at the same sizes.

  python -m ddpsim.bench.ladder_vs_job --out OUT.json [--repetitions 3] [--iterations 30]
      [--world-size 2 | --launcher CMD] [--bin-dir build/release/bin] [--keep DIR] -- DDP_TRAIN_ARGS...

Per repetition, interleaved: one ddp-train job (by default ddp-launch with --world-size ranks;
--launcher, a command that starts one job, e.g. on the testbed's 2 hosts: "scripts/testbed.sh
--hosts 2 --quiet -- build/release/bin/ddp-launch --nnodes {hosts} --node-rank {host}
--master-addr {master} --master-port 29500 --"), then ddp-machine-profile launched the same way,
its ladder given the job's bucket sizes beside its default ones, so that each bucket has a rung of
exactly its size. Per bucket: the job's transfer, from the last rank to launch it to its end (the
replay's "from the last rank to start"), median over iterations 2..; the share of those launched
while a rank's autograd still ran; the ladder's median at its size; and job / ladder. A replay on
the profile's network times an all-reduce after autograd at the ladder's rate, so a ratio above 1
there is what it misses (Note [the job's all-reduce and the ladder] in docs/model.md).
Bad input: one line on stderr, exit 2; a failed run: its log's path, exit 1.
"""
import argparse
import json
import os
import shlex
import statistics
import sys

import pandas as pd

from ddpsim.bench.bench_jobs import (add_job_arguments, add_run_counts, default_launcher, failure_status, launch,
                                     run_counts_error, run_logged, setup_error, trace_root)
from ddpsim.input_error import InputError
from ddpsim.trace import read_trace

# ddp-machine-profile's default --sizes (runtime/src/machine_profile_options.cpp).
LADDER_SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
FIRST_ITERATION = 2  # iterations 0 and 1 build the buckets and warm up


def bucket_transfers(trace_dir):
    """{bucket: {"bytes", "transfer_ms" (median), "during_autograd" (share), "iterations"}} of a
    trace's all-reduces joined by every rank, from iteration 2 on. A transfer is timed as
    traces/FORMAT.md's: on the rank that started it last, a rank starting at the later of its
    launch and the end of its previous all-reduce (one stream), so a bucket queued behind another
    is not charged the wait."""
    trace = read_trace(trace_dir)
    ranks = trace.world_size
    events = trace.events
    grads = events[(events["event"] == "grad_ready") & (events["iteration"] >= FIRST_ITERATION)]
    autograd_end = grads.groupby("iteration")["t_ns"].max()
    rows = trace.buckets[trace.buckets["end_ns"].notna()].sort_values(["rank", "begin_ns"], kind="stable").copy()
    previous_end = rows.groupby("rank")["end_ns"].shift(1)
    rows["start"] = pd.concat([rows["begin_ns"], previous_end], axis=1).max(axis=1)  # the previous end when later
    rows = rows[rows["iteration"] >= FIRST_ITERATION]
    joined = rows.groupby(["iteration", "bucket"]).agg(bytes=("bytes", "first"), ranks=("rank", "nunique"),
                                                       last_begin=("begin_ns", "max"), last_start=("start", "max"),
                                                       end=("end_ns", "max"))
    joined = joined[joined["ranks"] == ranks].reset_index()
    if joined.empty:
        raise InputError(trace_dir, f"all-reduces joined by all {ranks} ranks from iteration {FIRST_ITERATION} on",
                         "none")
    result = {}
    for bucket, group in joined.groupby("bucket"):
        during = [row.last_begin < autograd_end.get(row.iteration, -1) for row in group.itertuples()]
        result[int(bucket)] = {"bytes": int(group["bytes"].iloc[0]),
                               "transfer_ms": statistics.median((group["end"] - group["last_start"]) / 1e6),
                               "during_autograd": sum(during) / len(during), "iterations": len(group)}
    return result


def against_ladder(transfers, profile, profile_path):
    """One row per bucket: the job's transfer beside the profile's ladder rung of its size."""
    rungs = {rung["bytes"]: rung["one"]["median_s"] * 1e3 for rung in profile["allreduce"]["ladder"]}
    rows = []
    for bucket, job in sorted(transfers.items()):
        if job["bytes"] not in rungs:
            raise InputError(profile_path, f"a ladder rung of {job['bytes']} bytes (bucket {bucket})")
        ladder_ms = rungs[job["bytes"]]
        rows.append({"bucket": bucket, "bytes": job["bytes"], "job_ms": job["transfer_ms"], "ladder_ms": ladder_ms,
                     "ratio": job["transfer_ms"] / ladder_ms, "during_autograd": job["during_autograd"]})
    return rows


def profile_machine(launcher, bin_dir, out, sizes, threads):
    """ddp-machine-profile started by `launcher`, as the job; its output in OUT.log."""
    run_logged(launcher + [os.path.join(bin_dir, "ddp-machine-profile"), "--sizes", ",".join(str(size) for size in sizes),
                           "--threads", threads, "--out", out, "--quiet"], out + ".log")
    with open(out) as handle:
        return json.load(handle)


def flag_value(args, flag, default):
    return args[args.index(flag) + 1] if flag in args[:-1] else default


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_run_counts(parser, 3, 30, "job / profile pairs")
    parser.add_argument("--world-size", type=int, default=2, help="ranks of the job and the profile under the "
                        "default launcher (default 2)")
    parser.add_argument("--launcher", help="command that starts one job (default: BIN-DIR/ddp-launch "
                        "--nproc-per-node WORLD-SIZE --master-port 0 --)")
    add_job_arguments(parser, "ddp-launch, ddp-train and ddp-machine-profile")
    args = parser.parse_args(argv)
    refusal = (run_counts_error("ladder_vs_job.py", args, FIRST_ITERATION + 3)
               or (f"ladder_vs_job.py: --world-size: expected >= 2, got {args.world_size}" if args.world_size < 2 else None)
               or setup_error("ladder_vs_job.py", args.bin_dir, ("ddp-launch", "ddp-train", "ddp-machine-profile"),
                              args.out))
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    root = trace_root(args.keep, "ladder-vs-job-")
    threads = flag_value(args.train_args, "--threads", "1")
    launcher = shlex.split(args.launcher) if args.launcher else default_launcher(args.bin_dir, args.world_size)
    reps = []

    def measure():
        for rep in range(args.repetitions):
            trace_dir = os.path.join(root, f"job-rep{rep}")
            launch(args.bin_dir, trace_dir, ["--iterations", str(args.iterations), *args.train_args], launcher=launcher)
            transfers = bucket_transfers(trace_dir)
            sizes = sorted(set(LADDER_SIZES) | {job["bytes"] for job in transfers.values()})
            profile_path = os.path.join(root, f"profile-rep{rep}.json")
            profile = profile_machine(launcher, args.bin_dir, profile_path, sizes, threads)
            rows = against_ladder(transfers, profile, profile_path)
            reps.append({"rep": rep, "buckets": rows})
            for row in rows:
                print(f"rep {rep} bucket {row['bucket']} ({row['bytes']} B): job {row['job_ms']:.2f} ms, ladder "
                      f"{row['ladder_ms']:.2f} ms, x{row['ratio']:.2f}; launched during autograd "
                      f"{row['during_autograd']:.0%}", flush=True)

    status = failure_status("ladder_vs_job.py", measure)
    if status is not None:
        return status
    by_bucket = {}
    for rep in reps:
        for row in rep["buckets"]:
            by_bucket.setdefault((row["bucket"], row["bytes"]), []).append(row["ratio"])
    summary = []
    for (bucket, size), ratios in sorted(by_bucket.items()):
        summary.append({"bucket": bucket, "bytes": size, "ratio_median": statistics.median(ratios),
                        "ratio_min": min(ratios), "ratio_max": max(ratios)})
        print(f"bucket {bucket} ({size} B): job / ladder x{summary[-1]['ratio_median']:.2f} "
              f"[{min(ratios):.2f}, {max(ratios):.2f}] over {len(ratios)} repetitions")
    with open(args.out, "w") as handle:
        json.dump({"train_args": args.train_args, "iterations": args.iterations, "world_size": args.world_size,
                   "launcher": args.launcher, "repetitions": reps, "buckets": summary}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
