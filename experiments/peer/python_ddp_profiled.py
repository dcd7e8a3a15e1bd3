#!/usr/bin/python3
"""A plain Python DDP job, profiled with torch.profiler, as a peer to ddp-train.

Spawns W ranks (torch.multiprocessing) that train an MLP or a small convnet with an unmodified
DistributedDataParallel over Gloo on 127.0.0.1, and writes per rank:

    OUT_DIR/rank-R.kineto.json         the profiler's Chrome trace (prof.export_chrome_trace)
    OUT_DIR/rank-R.kineto.ddpsim.json  the sidecar: what the trace alone does not say

`ddp-trace import --kineto DIR2 OUT_DIR/rank-*.kineto.json` turns them into a ddpsim trace
(the importer finds the sidecar by replacing the trace's ".json" suffix with ".ddpsim.json").

What the trace holds, and why the sidecar exists (measured on Debian python3-torch 1.13.1):
- This torch is built without Kineto (torch.autograd.kineto_available() is False):
  torch.profiler falls back to the legacy autograd profiler, whose export is a bare JSON
  array of complete ("X") events, ts/dur in integer microseconds from the profile's start,
  pid "CPU functions", and *no args*: record_shapes adds nothing to the file. So message
  sizes cannot come from the trace; the sidecar gives parameters and the bucket layout.
- Phases come from our own record_function labels ("ddpsim.iteration#N", "ddpsim.forward",
  "ddpsim.backward", "ddpsim.optimizer"): robust, unlike guessing from operator names.
- DDP's all-reduces show up by themselves as two events per bucket: "c10d::allreduce_" on
  the backward thread, spanning the launch (enqueue) of the bucket's work, and
  "gloo:all_reduce" on one of Gloo's two worker threads (tid 2/3), spanning from when a worker
  took the work to when it completed. The Reducer launches buckets strictly in bucket order
  and Gloo's work queue is FIFO, so the k-th of each within an iteration is bucket k. Two
  buckets' transfers can overlap (two worker threads).
- "torch::autograd::AccumulateGrad" marks each gradient; with a static graph its order is
  the logger's grad-ready order, written here so the importer can emit grad_ready events.
- Bucket layout: read at the end from the Reducer itself (reducer._get_zeros_like_grad_buckets:
  the GradBuckets' parameters, matched by identity to model.parameters()), and checked
  against the DDP logger's "rebuilt_per_bucket_param_indices" / "rebuilt_bucket_sizes".
  Warm-up (>= 2 iterations) runs before profiling so every profiled iteration uses that
  rebuilt layout.
- A "gloo:all_reduce" end is recorded after the work's future completed, so under CPU
  contention it can come late (even after backward returned; the importer bounds it by the
  Reducer's copy out of the bucket) or, for the last iteration, after the profiler stopped,
  which loses the event: the job sleeps briefly inside the profiler after the last iteration,
  and the importer drops a last iteration whose all-reduces are incomplete.
- Clock: the legacy profiler's ts are relative to its own start, so the sidecar records
  time.monotonic_ns() just before and just after entering the profiler; the importer places
  ts on CLOCK_MONOTONIC at their midpoint (error < half their gap, typically < 0.1 ms).
"""

import argparse
import datetime
import json
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.profiler import ProfilerActivity, profile, record_function


def build_model(name):
    # Sized so that bucket_cap_mb changes the layout: DDP caps bucket 0 at 1 MiB whatever
    # bucket_cap_mb says, so the cap only matters for the parameters after the first MiB.
    if name == "mlp":
        # 5.8 MB in six layers of ~1 MB: 5 buckets at 0.25 MB, 2 at 25 MB.
        layers = [nn.Flatten(), nn.Linear(784, 512), nn.ReLU()]
        for _ in range(4):
            layers += [nn.Linear(512, 512), nn.ReLU()]
        return nn.Sequential(*layers, nn.Linear(512, 10))
    if name == "convnet":
        # A small convnet for 28x28 images, 1.6 MB: 3 buckets at 0.25 MB, 2 at 25 MB.
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(128 * 3 * 3, 256), nn.ReLU(), nn.Linear(256, 10))
    raise ValueError(f"unknown model {name!r}: expected mlp or convnet")


def parse_index_groups(text):
    """'3 2, 1 0' (the DDP logger's format) -> [[3, 2], [1, 0]]."""
    return [[int(i) for i in group.split()] for group in text.split(",") if group.strip()]


def bucket_layout(ddp, params):
    """The Reducer's current buckets as parameter indices in registration order."""
    index_by_id = {id(p): i for i, p in enumerate(params)}
    buckets = sorted(ddp.reducer._get_zeros_like_grad_buckets(), key=lambda b: b.index())
    return [[index_by_id[id(p)] for p in bucket.parameters()] for bucket in buckets]


def worker(rank, args):
    torch.set_num_threads(args.threads)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    dist.init_process_group("gloo", rank=rank, world_size=args.world_size)

    torch.manual_seed(args.seed)  # same initial weights everywhere (DDP broadcasts anyway)
    model = build_model(args.model)
    named = list(model.named_parameters())
    ddp = DistributedDataParallel(model, bucket_cap_mb=args.bucket_cap_mb)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    # Synthetic Fashion-MNIST-shaped batches: the data does not change DDP's schedule.
    generator = torch.Generator().manual_seed(args.seed + rank)

    def step(iteration):
        images = torch.randn(args.batch_size, 1, 28, 28, generator=generator)
        labels = torch.randint(0, 10, (args.batch_size,), generator=generator)
        with record_function(f"ddpsim.iteration#{iteration}"):
            with record_function("ddpsim.forward"):
                loss = loss_fn(ddp(images), labels)
            with record_function("ddpsim.backward"):
                loss.backward()
            with record_function("ddpsim.optimizer"):
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)

    # Warm-up outside the profiler: iteration 0 runs with DDP's initial buckets, which it
    # rebuilds in grad-ready order before iteration 1.
    for iteration in range(args.warmup):
        step(iteration)
    first = args.warmup
    dist.barrier()

    start_time_utc = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    before_ns = time.monotonic_ns()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=args.record_shapes) as prof:
        after_ns = time.monotonic_ns()
        for iteration in range(first, first + args.iterations):
            step(iteration)
        # A Gloo worker records a transfer's end only after completing its future; one still
        # descheduled when the profiler stops loses the event. Give it time, inside.
        time.sleep(0.05)
        dist.barrier()

    # Unprofiled iterations, timed by the wall clock: the profiler's own overhead is not free.
    unprofiled_s = []
    for iteration in range(first + args.iterations, first + args.iterations + args.timed):
        start = time.perf_counter()
        step(iteration)
        unprofiled_s.append(time.perf_counter() - start)
    dist.barrier()

    os.makedirs(args.out_dir, exist_ok=True)
    prof.export_chrome_trace(os.path.join(args.out_dir, f"rank-{rank}.kineto.json"))

    params = [p for _, p in named]
    layout = bucket_layout(ddp, params)
    logging = ddp._get_ddp_logging_data()
    logged_layout = parse_index_groups(logging.get("rebuilt_per_bucket_param_indices", ""))
    if logged_layout and logged_layout != layout:
        raise RuntimeError(f"rank {rank}: reducer buckets {layout} disagree with the DDP "
                           f"logger's {logged_layout}")
    sidecar = {
        "schema": "ddpsim-kineto-sidecar",
        "schema_version": 1,
        "rank": rank,
        "world_size": args.world_size,
        "backend": "gloo",
        "host": socket.gethostname(),
        "start_time_utc": start_time_utc,
        "torch_version": torch.__version__,
        "kineto_available": torch.autograd.kineto_available(),
        "workload": {"name": args.model, "batch_size": str(args.batch_size),
                     "threads": str(args.threads), "optimizer": "sgd",
                     "data": "synthetic"},
        "bucket_cap_bytes": int(args.bucket_cap_mb * 1024 * 1024),
        "first_bucket_cap_bytes": int(dist._DEFAULT_FIRST_BUCKET_BYTES),
        "profile_start_monotonic_ns": [before_ns, after_ns],
        "profiled_iterations": [first, first + args.iterations - 1],
        "parameters": [
            {"index": i, "name": n, "numel": p.numel(),
             "dtype": str(p.dtype).replace("torch.", "")}
            for i, (n, p) in enumerate(named)],
        # In force for every profiled iteration; bucket 0 is all-reduced first.
        "buckets": layout,
        "grad_ready_order": [int(i) for i in
                             logging.get("prev_iteration_grad_ready_order_indices", "")
                             .replace(",", " ").split()],
        "ddp_logging": {k: logging[k] for k in ("rebuilt_bucket_sizes", "bucket_cap_bytes",
                                                 "gloo_num_threads", "backend_name")
                        if k in logging},
        "unprofiled_iteration_s": unprofiled_s,
        "unprofiled_median_iteration_s": statistics.median(unprofiled_s) if unprofiled_s
        else None,
    }
    with open(os.path.join(args.out_dir, f"rank-{rank}.kineto.ddpsim.json"), "w") as f:
        json.dump(sidecar, f, indent=1)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=["mlp", "convnet"], default="mlp")
    parser.add_argument("--bucket-cap-mb", type=float, default=25.0)
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=5, help="profiled iterations")
    parser.add_argument("--timed", type=int, default=10,
                        help="unprofiled iterations timed afterwards by the wall clock")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--port", type=int, default=0, help="0 = pick a free port")
    parser.add_argument("--record-shapes", action="store_true",
                        help="(adds nothing to the legacy profiler's export in torch 1.13)")
    parser.add_argument("--out-dir", required=True)
    args = parser.parse_args()
    if args.warmup < 2:
        parser.error("--warmup must be at least 2: DDP rebuilds its buckets after iteration 0")
    if args.iterations < 1 or args.world_size < 1 or args.bucket_cap_mb <= 0:
        parser.error("--iterations and --world-size must be >= 1, --bucket-cap-mb > 0")
    if args.port == 0:
        args.port = free_port()
    start = time.monotonic()
    mp.spawn(worker, args=(args,), nprocs=args.world_size, join=True)
    print(f"{args.model} bucket_cap_mb={args.bucket_cap_mb:g}: wrote {args.out_dir} "
          f"in {time.monotonic() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
