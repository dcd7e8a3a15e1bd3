"""Writes a small synthetic DDP trace (traces/FORMAT.md) for simulator benchmarks.

Usage: python -m ddpsim.bench.make_synthetic_trace OUT_DIR [--ranks W] [--buckets B] [--iterations N]

Each bucket holds one 1 MiB float32 parameter; compute phases and all-reduce times are
fixed (all-reduce: ring formula with alpha = 50 us, beta = 1 GB/s), so replays of it are
cheap to reason about. Only for timing the simulator, not for validating it.
"""
import argparse
import json
import os

from ddpsim.bench.bench_jobs import SYNTHETIC_START_UTC

ALPHA, BETA = 50e-6, 1e9


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--buckets", type=int, default=25)
    parser.add_argument("--iterations", type=int, default=4)
    args = parser.parse_args()
    world, buckets = args.ranks, args.buckets
    numel = 262144  # 1 MiB of float32
    params = [{"index": p, "name": f"layer{p}.weight", "numel": numel, "dtype": "float32"}
              for p in range(buckets)]
    layout = [[p] for p in reversed(range(buckets))]
    os.makedirs(args.out, exist_ok=True)
    for rank in range(world):
        meta = {
            "schema": "ddpsim-trace", "schema_version": 1, "source": "measured",
            "tool": {"name": "make_synthetic_trace.py", "version": "0", "git_sha": "bench"},
            "start_time_utc": SYNTHETIC_START_UTC, "clock": "CLOCK_MONOTONIC",
            "host": "bench", "rank": rank, "local_rank": rank, "world_size": world,
            "backend": "gloo", "workload": {"name": "synthetic", "batch_size": "32"},
            "parameters": params, "bucket_cap_bytes": 26214400, "first_bucket_cap_bytes": 1048576,
            "bucket_assignments": [{"first_iteration": 0, "buckets": layout}],
            "timeout_s": 1800, "skew": {}, "settings": {},
        }
        with open(os.path.join(args.out, f"rank-{rank}.meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        header = "rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message"
        rows = []
        t = 1_000_000_000
        for it in range(args.iterations):
            def ev(name, at, bucket="", param="", nbytes=""):
                rows.append(f"{rank},{it},{name},{int(at)},{bucket},{param},{nbytes},,,")
            ev("iteration_begin", t)
            ev("forward_begin", t)
            t += 10e6
            ev("forward_end", t)
            ev("backward_begin", t)
            t0, comm = t, t
            for b, (param,) in enumerate(layout):
                ready = t0 + (b + 1) * 1e6
                ev("grad_ready", ready, param=param)
                ev("bucket_ready", ready, bucket=b, nbytes=numel * 4)
                start = max(ready, comm)
                comm = start + 2 * (world - 1) * (ALPHA + numel * 4 / world / BETA) * 1e9
                ev("allreduce_begin", start, bucket=b, nbytes=numel * 4)
                ev("allreduce_end", comm, bucket=b, nbytes=numel * 4)
            t = max(comm, t0 + buckets * 1e6) + 1e5
            ev("backward_end", t)
            ev("optimizer_begin", t)
            t += 2e6
            ev("optimizer_end", t)
            ev("iteration_end", t)
            t += 1e4
        rows.sort(key=lambda line: int(line.split(",")[3]))  # stable: ties keep their order
        with open(os.path.join(args.out, f"rank-{rank}.events.csv"), "w") as f:
            f.write("\n".join([header] + rows) + "\n")


if __name__ == "__main__":
    main()
