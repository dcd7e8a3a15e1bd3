#!/usr/bin/env python3
"""The Python peer of ddp-train: the same training job on torch.nn.parallel.DistributedDataParallel.

It exists to answer one question: does ddp-train (C++ on c10d::Reducer) run DDP as fast as
PyTorch's own Python DDP? Run it with the project's venv Python (.venv/bin/python: torch 2.13,
the same LibTorch ddp-train is built against) under a launcher that sets RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT (ddp-launch or torchrun). It prints ddp-train's closing line format,
including "median step <ms> ms", and with --step-times FILE writes the same JSON as ddp-train:
every step's time (forward + backward with DDP's all-reduces + optimizer step, without building
the batch), iteration 0 excluded.

Only the synthetic MLP workload of ddp-train is mirrored (--model mlp): same layer sizes,
optimizer, batch and threads. The data are random tensors, not ddp-train's per-sample stream:
the batch is built outside the timed step in both programs.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

CLASSES = 10


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="mlp", choices=["mlp"])
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bucket-cap-mb", type=float, default=25.0)
    p.add_argument("--first-bucket-cap-mb", type=float, default=1.0)
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--no-trace", action="store_true", help="accepted for symmetry; never traces")
    p.add_argument("--step-times", help="write {rank, step_seconds} JSON ({rank} is replaced)")
    p.add_argument("--backend", default="gloo", choices=["gloo", "nccl"],
                   help="nccl puts each rank on cuda:LOCAL_RANK, as ddp-train --backend nccl")
    p.add_argument("--device", choices=["cpu", "cuda"],
                   help="where the model and batches live (default: cuda for nccl, else cpu)")
    p.add_argument("--comm-hook", choices=["none", "allreduce"], default="none",
                   help="allreduce: register PyTorch's default allreduce_hook (what ddp-train's "
                        "tracing does in C++); none: the Reducer's built-in all-reduce")
    p.add_argument("--profile", metavar="DIR",
                   help="run under torch.profiler (Kineto) and write DIR/rank-R.kineto.json, the "
                        "standard trace `ddp-trace import --kineto` reads; iteration 0 is skipped")
    return p.parse_args()


def make_mlp(width, depth):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, CLASSES))
    return nn.Sequential(*layers)


def sync(device):
    """A step ends when its kernels have: CUDA work is asynchronous."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def start_profiler(args, rank, device):
    """torch.profiler as a user runs it: a schedule, one step() per iteration, shapes recorded.

    Iteration 0 (DDP's bucket rebuild) is skipped; the trace is written when the profiler stops.
    """
    if not args.profile:
        return None
    from torch.profiler import ProfilerActivity, profile, schedule
    os.makedirs(args.profile, exist_ok=True)
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    path = os.path.join(args.profile, f"rank-{rank}.kineto.json")
    active = max(1, args.iterations - 2)
    profiler = profile(activities=activities, record_shapes=True,
                       schedule=schedule(skip_first=1, wait=0, warmup=1, active=active, repeat=1),
                       on_trace_ready=lambda prof: prof.export_chrome_trace(path))
    profiler.start()
    return profiler


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    device = torch.device("cpu")
    if (args.device or ("cuda" if args.backend == "nccl" else "cpu")) == "cuda":
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        gpus = torch.cuda.device_count()
        if gpus == 0 or (args.backend == "nccl" and local_rank >= gpus):
            # NCCL refuses two ranks on one GPU; Gloo copes, so Gloo ranks may share GPUs.
            sys.exit(f"python_ddp.py: --device cuda: LOCAL_RANK {local_rank} needs a GPU of its "
                     f"own for {args.backend}, got {gpus} visible")
        device = torch.device("cuda", local_rank % gpus)
        torch.cuda.set_device(device)  # before the process group, as ddp-train does
    from datetime import timedelta
    dist.init_process_group(args.backend, rank=rank, world_size=world,
                            timeout=timedelta(seconds=args.timeout))
    # ddp-train's --bucket-cap-mb X keeps a separate first bucket (--first-bucket-cap-mb, 1 MiB),
    # as DDP does for its default cap. PyTorch 2.x's DDP(bucket_cap_mb=X) given explicitly makes the
    # first bucket X too, so the same layout is asked for the way DDP's default path reads it: both
    # module-level defaults are read when DDP is constructed.
    import torch.nn.parallel.distributed as ddp_module
    ddp_module._DEFAULT_BUCKET_CAP_MB = args.bucket_cap_mb
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(args.first_bucket_cap_mb * 1024 * 1024)

    torch.manual_seed(args.seed)
    model = nn.parallel.DistributedDataParallel(make_mlp(args.width, args.depth).to(device))
    if args.comm_hook == "allreduce":
        # With any hook the Reducer stops scaling by 1/W while it copies gradients into the
        # bucket: the hook divides, one more pass over the bucket.
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        model.register_comm_hook(None, default_hooks.allreduce_hook)
    if args.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    gen = torch.Generator().manual_seed(args.seed * 1000 + rank)
    report = rank == 0 and not args.quiet
    start = last = time.monotonic()
    last_done = 0
    steps = []
    loss = None
    profiler = start_profiler(args, rank, device)
    for it in range(args.iterations):
        x = torch.randn(args.batch_size, args.width, generator=gen).to(device)
        y = torch.randint(CLASSES, (args.batch_size,), generator=gen).to(device)
        sync(device)
        t0 = time.monotonic()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        sync(device)
        now = time.monotonic()
        if profiler is not None:
            profiler.step()  # one ProfilerStep#N per iteration, as users write it
        if it > 0 or args.iterations == 1:
            steps.append(now - t0)
        if report and now - last >= 1.0:
            its = (it + 1 - last_done) / (now - last)
            print(f"iter {it + 1}/{args.iterations}  {its:.2f} it/s  "
                  f"{its * args.batch_size * world:.0f} samples/s  loss {loss.item():.4f}",
                  flush=True)
            last, last_done = now, it + 1
    if profiler is not None:
        profiler.stop()
    if report:
        seconds = time.monotonic() - start
        its = args.iterations / seconds
        print(f"done: {args.iterations} iterations in {seconds:.2f} s  {its:.2f} it/s  "
              f"{its * args.batch_size * world:.0f} samples/s  loss {loss.item():.4f}  "
              f"median step {statistics.median(steps) * 1e3:.3f} ms", flush=True)
    if args.step_times:
        with open(args.step_times.replace("{rank}", str(rank)), "w") as f:
            json.dump({"rank": rank, "step_seconds": steps}, f)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
