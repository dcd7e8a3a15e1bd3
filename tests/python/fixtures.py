"""Test inputs for the ddpsim package: a small realistic multi-rank trace (traces/FORMAT.md) and
ddp-experiment summaries, written from known numbers so tests can recompute every result; and
ddpsim-plot run in this process (a process of its own spends ~1 s importing matplotlib and
pandas). pytest imports this module from the tests' folder (its rootdir-relative import)."""
import contextlib
import csv
import io
import json
import os
import random
import stat
import types
import warnings

SOURCE_DIR = os.environ.get("DDPSIM_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
# ddpsim-plot as a command of this interpreter (the console script's module).
PLOT = ["-m", "ddpsim.plot"]

# Six parameters of a small MLP (784-256-256-10), in registration order.
PARAMETERS = [("fc1.weight", 784 * 256), ("fc1.bias", 256), ("fc2.weight", 256 * 256),
              ("fc2.bias", 256), ("out.weight", 256 * 10), ("out.bias", 10)]
# DDP's layout: one bucket in iteration 0, the real buckets (gradient order) from iteration 1.
LAYOUTS = [{"first_iteration": 0, "buckets": [[5, 4, 3, 2, 1, 0]]},
           {"first_iteration": 1, "buckets": [[5, 4, 3], [2, 1], [0]]}]
HEADER = "rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message"


def write_trace(directory, world_size=2, iterations=5, source="measured", seed=1, speed=1.0,
                delay=None):
    """Writes a trace; returns {rank: [event dicts]} exactly as written.

    Compute per rank is jittered; each bucket's all-reduce starts on a rank when the bucket is
    ready and the previous one is done there, and ends on every rank at the same time once
    the last rank has joined (a collective). `delay` = (rank, iteration, ms) injects a stall
    before that rank's forward pass.
    """
    os.makedirs(directory, exist_ok=True)
    rng = random.Random(seed)
    events = {rank: [] for rank in range(world_size)}
    clock = {rank: 1_000_000_000 + rank * 150_000 for rank in range(world_size)}

    def add(rank, iteration, event, t, **fields):
        events[rank].append(dict(rank=rank, iteration=iteration, event=event, t_ns=int(t), **fields))

    for iteration in range(iterations):
        layout = LAYOUTS[0 if iteration == 0 else 1]["buckets"]
        ready = {}  # rank -> list of bucket ready times
        for rank in range(world_size):
            t = clock[rank]
            add(rank, iteration, "iteration_begin", t)
            if delay and delay[0] == rank and delay[1] == iteration:
                add(rank, iteration, "delay", t, dur_ns=int(delay[2] * 1e6), kind="delay")
                t += delay[2] * 1e6
            add(rank, iteration, "forward_begin", t + 10_000)
            t += 10_000 + speed * rng.uniform(2.8e6, 3.2e6)
            add(rank, iteration, "forward_end", t)
            t += 5_000
            add(rank, iteration, "backward_begin", t)
            ready[rank] = []
            for bucket in layout:
                for param in bucket:
                    t += speed * PARAMETERS[param][1] * 4 * rng.uniform(2.0, 2.4)  # ~2 ns/byte
                    add(rank, iteration, "grad_ready", t, param=param)
                size = sum(PARAMETERS[p][1] * 4 for p in bucket)
                t += 3_000
                add(rank, iteration, "bucket_ready", t, bucket=layout.index(bucket), bytes=size)
                ready[rank].append(t)
            clock[rank] = t
        # Collectives: bucket b ends on every rank when the last rank joined plus transfer.
        comm_free = {rank: 0 for rank in range(world_size)}
        last_end = 0
        for b, bucket in enumerate(layout):
            size = sum(PARAMETERS[p][1] * 4 for p in bucket)
            begins = {rank: max(ready[rank][b] + 2_000, comm_free[rank]) for rank in range(world_size)}
            end = max(begins.values()) + size * 1.5 + 40_000
            for rank in range(world_size):
                add(rank, iteration, "allreduce_begin", begins[rank], bucket=b, bytes=size)
                add(rank, iteration, "allreduce_end", end, bucket=b, bytes=size)
                comm_free[rank] = end + 1_000
            last_end = end
        for rank in range(world_size):
            t = max(clock[rank], last_end) + 20_000
            add(rank, iteration, "backward_end", t)
            add(rank, iteration, "optimizer_begin", t + 5_000)
            t += 5_000 + speed * rng.uniform(0.9e6, 1.1e6)
            add(rank, iteration, "optimizer_end", t)
            add(rank, iteration, "iteration_end", t + 5_000)
            clock[rank] = t + 50_000

    for rank in range(world_size):
        meta = {
            "schema": "ddpsim-trace", "schema_version": 1, "source": source,
            "tool": {"name": "fixture", "version": "0", "git_sha": "none"},
            "start_time_utc": "2026-11-22T04:00:00Z", "clock": "CLOCK_MONOTONIC",
            "host": "test", "rank": rank, "local_rank": rank, "world_size": world_size,
            "backend": "gloo" if source == "measured" else "simgrid",
            "workload": {"name": "mlp", "batch_size": "32"},
            "parameters": [{"index": i, "name": n, "numel": k, "dtype": "float32"}
                           for i, (n, k) in enumerate(PARAMETERS)],
            "bucket_cap_bytes": 1048576, "first_bucket_cap_bytes": 1048576,
            "bucket_assignments": LAYOUTS, "timeout_s": 1800,
            "skew": {}, "settings": {},
        }
        with open(os.path.join(directory, f"rank-{rank}.meta.json"), "w") as handle:
            json.dump(meta, handle, indent=1)
        ordered = sorted(events[rank], key=lambda e: e["t_ns"])  # stable: ties keep order
        events[rank] = ordered
        with open(os.path.join(directory, f"rank-{rank}.events.csv"), "w") as handle:
            handle.write(HEADER + "\n")
            for e in ordered:
                fields = [e["rank"], e["iteration"], e["event"], e["t_ns"], e.get("bucket", ""),
                          e.get("param", ""), e.get("bytes", ""), e.get("dur_ns", ""),
                          e.get("kind", ""), ""]
                handle.write(",".join(str(f) for f in fields) + "\n")
    return events


# experiments/src/results.cpp's columns, in order.
SUMMARY_COLUMNS = [
    "experiment", "point", "rep", "variant", "kind", "world_size", "hosts", "bucket_cap_mb",
    "first_bucket_cap_mb", "slowdown", "delay", "delay_dist", "timeout_s", "batch_size",
    "iterations", "predicted_world_size", "predicted_timeout_s", "measured_iter_s",
    "predicted_iter_s", "error_pct", "predicted_lo_s", "predicted_hi_s", "inside", "ks_distance",
    "p50_error_pct", "p90_error_pct", "p99_error_pct", "measured_samples_per_s",
    "predicted_samples_per_s", "measured_iterations", "measured_failed", "measured_failure",
    "predicted_failed", "predicted_failure", "job_exit", "job_wall_s", "status", "message",
    "trace_dir", "replayed_trace", "predicted_dir", "max_slowdown", "max_delay_ms",
    "run_to_run_lo_s", "run_to_run_hi_s", "inside_run_to_run"]
# The columns before issue #16 (no kind: every replay of the measured configuration is a
# reconstruction, no intervals) and #14 (no skew numbers).
OLD_SUMMARY_COLUMNS = [c for c in SUMMARY_COLUMNS if c not in (
    "kind", "hosts", "delay_dist", "predicted_lo_s", "predicted_hi_s", "inside", "ks_distance",
    "p50_error_pct", "p90_error_pct", "p99_error_pct", "replayed_trace", "max_slowdown",
    "max_delay_ms", "run_to_run_lo_s", "run_to_run_hi_s", "inside_run_to_run")]


def write_tools(directory, scripts):
    """Stand-ins for the project's binaries: each {name: text} as an executable in directory
    (made if missing), for the benchmarks that take --bin-dir."""
    os.makedirs(directory, exist_ok=True)
    for name, text in scripts.items():
        path = os.path.join(directory, name)
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def summary_row(**values):
    """A summary row, derived columns computed the way the runner computes them."""
    row = {column: "" for column in SUMMARY_COLUMNS}
    row.update({"experiment": "test", "rep": 0, "world_size": 2, "bucket_cap_mb": 25,
                "batch_size": 32, "iterations": 10, "status": "ok", "measured_failed": 0,
                "predicted_failed": 0})
    row.update(values)
    if row["kind"] == "":  # as the runner writes it for a replay of its own trace / a what-if
        row["kind"] = "reconstruction" if row["variant"] == "" else "whatif"
    row.setdefault("predicted_world_size", row["world_size"])
    if row["predicted_world_size"] == "":
        row["predicted_world_size"] = row["world_size"]
    for which, size in (("measured", row["world_size"]), ("predicted", row["predicted_world_size"])):
        if row[f"{which}_iter_s"] != "":
            row[f"{which}_samples_per_s"] = float(size) * 32 / float(row[f"{which}_iter_s"])
    if row["measured_iter_s"] != "" and row["predicted_iter_s"] != "":
        m, p = float(row["measured_iter_s"]), float(row["predicted_iter_s"])
        row["error_pct"] = 100 * (p - m) / m
    if row["measured_iter_s"] != "" and row["run_to_run_lo_s"] != "" and row["inside_run_to_run"] == "":
        m = float(row["measured_iter_s"])
        row["inside_run_to_run"] = int(float(row["run_to_run_lo_s"]) <= m <= float(row["run_to_run_hi_s"]))
    return row


def write_summary(path, rows, columns=None):
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns or SUMMARY_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def load_plot():
    """ddpsim-plot's module (ddpsim.plot.cli), for run_plot."""
    from ddpsim.plot import cli
    return cli


def run_plot(plot, argv):
    """`ddpsim-plot ARGV` run by main() in this process (plot: load_plot()), as subprocess.run
    would report it: returncode, stdout, stderr. Every warning is shown, as a fresh process would
    show it the first time, so a warning still breaks a one-line error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("always")
        try:
            status = plot.main(list(argv))
        except SystemExit as exit_:
            status = 0 if exit_.code is None else exit_.code
    return types.SimpleNamespace(returncode=status, stdout=out.getvalue(), stderr=err.getvalue())


def timing(median_s, spread=0.25, samples=10):
    """A machine profile's timing (traces/MACHINE.md) around `median_s`."""
    return {"median_s": median_s, "min_s": median_s * (1 - spread), "max_s": median_s * (1 + 2 * spread),
            "samples": samples}


def machine_profile(scale=1.0, created_utc="2030-01-01T00:00:00Z", version=2, by_size=True):
    """A machine profile as ddp-machine-profile writes it (traces/MACHINE.md), its all-reduce times
    t(S) = scale x (150 us + S / 1.5 GB/s); returns the dict."""
    ladder = [{"bytes": 4 << (2 * i + 10),
               "one": timing(scale * (150e-6 + (4 << (2 * i + 10)) / 1.5e9)),
               "together": timing(scale * (250e-6 + (4 << (2 * i + 10)) / 1.2e9))} for i in range(8)]
    profile = {
        "ddpsim_machine_profile": version,
        "tool": {"name": "ddp-machine-profile", "version": "0.1.0", "git_sha": "abc123"},
        "created_utc": created_utc, "launcher": "torchrun", "backend": "gloo", "device": "cpu",
        "world_size": 3, "hosts": ["vm"], "ranks_per_host": 3, "threads": 1,
        "versions": {"torch": "2.13.0", "gloo": "", "nccl": ""},
        "allreduce": {"dtype": "float32", "in_flight": 2, "in_flight_gain": 1.15, "ladder": ladder},
        "compute": {"kernel": "40 float32 products of 256x256 matrices on the CPU, 1 thread(s) per rank",
                    "alone": timing(0.010), "together": timing(0.0105), "slowest": timing(0.011),
                    "effective_cores": 1.8,
                    "by_ranks": [{"ranks": 2, "together": timing(0.0102), "effective_cores": 1.95},
                                 {"ranks": 3, "together": timing(0.0105), "effective_cores": 1.8}]},
    }
    if version >= 2:
        sizes = [(1 << 20, 0.0008, 0.006), (4 << 20, 0.003, 0.008), (16 << 20, 0.011, 0.025)]
        overlap = {"bytes": 4 << 20, "allreduce_alone": timing(0.003), "allreduce_busy": timing(0.008),
                   "compute_quiet": timing(0.0125), "compute_busy": timing(0.019),
                   "allreduce_fraction": 0.375, "compute_fraction": 0.66}
        if by_size:
            overlap["by_size"] = [{"bytes": size, "allreduce_alone": timing(alone), "allreduce_busy": timing(busy)}
                                  for size, alone, busy in sizes]
        profile["overlap"] = overlap
        profile["sleep"] = {"requested_s": 2e-4, "slept": timing(2.8e-4), "resumed": timing(2.1e-4),
                            "hot": timing(1.9e-4), "resume_cost_s": 1.1e-4}
    return profile


def write_machine_profile(path, **kwargs):
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(machine_profile(**kwargs), handle, indent=2)
    return path
