#!/usr/bin/python3
"""Gloo all-reduce over loopback, alone (no training), to give ddp-sim a network model that
does not come from the trace it predicts.

Spawns W ranks; for each message size (interleaved, several rounds) times a blocking
dist.all_reduce after a barrier, keeps the slowest rank's median per size, fits t = a + b*S
and converts it to ddp-sim's ring alpha-beta model, t = 2(W-1)*alpha + 2(W-1)/W * S/beta:

    alpha = a / (2(W-1)),  beta = 2(W-1)/W / b

Usage: allreduce_bench.py --out FILE.json [--world-size 2] [--rounds 15]
"""

import argparse
import json
import os
import socket
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [64 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20]  # bytes


def worker(rank, args, results):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    dist.init_process_group("gloo", rank=rank, world_size=args.world_size)
    tensors = {size: torch.ones(size // 4) for size in SIZES}
    times = {size: [] for size in SIZES}
    for round_ in range(args.rounds + 1):  # round 0 warms up connections and buffers
        for size in SIZES:
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(tensors[size])
            if round_ > 0:
                times[size].append(time.perf_counter() - start)
    results[rank] = {size: statistics.median(t) for size, t in times.items()}
    dist.destroy_process_group()


def fit_line(xs, ys):
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    slope = sxy / sxx
    return mean_y - slope * mean_x, slope


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    if args.world_size < 2:
        parser.error("--world-size must be at least 2")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        args.port = s.getsockname()[1]
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(worker, args=(args, results), nprocs=args.world_size, join=True)
        per_rank = dict(results)
    slowest = {size: max(per_rank[r][size] for r in per_rank) for size in SIZES}
    intercept, slope = fit_line([float(s) for s in SIZES], [slowest[s] for s in SIZES])
    w = args.world_size
    report = {
        "world_size": w,
        "points": [{"bytes": s, "median_s": slowest[s]} for s in SIZES],
        "intercept_s": intercept,
        "slope_s_per_byte": slope,
        "alpha_s": max(intercept, 0.0) / (2 * (w - 1)),
        "beta_bytes_per_s": (2 * (w - 1) / w) / slope,
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"gloo all-reduce W={w}: alpha {report['alpha_s'] * 1e6:.1f} us, "
          f"beta {report['beta_bytes_per_s'] / 1e9:.3f} GB/s")


if __name__ == "__main__":
    main()
