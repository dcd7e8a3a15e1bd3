#!/usr/bin/env python3
"""A plain Python DDP job: torch.nn.parallel.DistributedDataParallel with nothing of ddpsim inside.

It plays a user's own training script. Run it with the project's venv Python (.venv/bin/python:
torch 2.13, the same LibTorch ddp-train is built against) under a launcher that sets RANK,
WORLD_SIZE, MASTER_ADDR and MASTER_PORT (ddp-launch, torchrun or srun). It serves three uses:
  - the peer of ddp-train: does ddp-train (C++ on c10d::Reducer) run DDP as fast as PyTorch's
    own DDP? (--model mlp mirrors ddp-train's synthetic MLP: layer sizes, optimizer, batch);
  - a user's job to profile: --profile DIR runs it under torch.profiler exactly as a user would
    (a schedule, prof.step() per iteration, record_shapes=True) and writes the standard traces
    `ddp-trace import --kineto` reads;
  - the check of that import: --layout-out FILE records the bucket layouts PyTorch's DDP itself
    built (DDP._get_ddp_logging_data()) at the run's cap and at every --layout-caps cap.
Four model families: mlp, cnn (a small convnet on 28x28 images), transformer (a small
encoder classifying token sequences) and rnn (a GRU classifying them); the data are random
tensors built outside the timed step.
It prints ddp-train's closing line format, including "median step <ms> ms", and with
--step-times FILE writes the same JSON as ddp-train: every step's time (forward + backward with
DDP's all-reduces + optimizer step), iteration 0 excluded. --slowdown RANK=F makes one rank's
compute F times longer, as ddp-train --slowdown does (stretch_compute below).
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
    p.add_argument("--model", default="mlp", choices=sorted(MODELS))
    p.add_argument("--width", type=int, default=None,
                   help="mlp: hidden width (1024); cnn: channels of the last convs (256); "
                        "transformer: d_model (256)")
    p.add_argument("--depth", type=int, default=None,
                   help="mlp: hidden layers (4); cnn: conv layers (4); transformer: layers (4)")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bucket-cap-mb", type=float, default=25.0)
    p.add_argument("--first-bucket-cap-mb", type=float, default=1.0)
    p.add_argument("--explicit-bucket-cap", action="store_true",
                   help="DDP(bucket_cap_mb=C) as a user writes it: every bucket, the first too, capped at "
                        "C (--first-bucket-cap-mb is not used)")
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--no-trace", action="store_true", help="accepted for symmetry; never traces")
    p.add_argument("--step-times", help="write {rank, step_seconds, iteration_seconds} JSON ({rank} is "
                                        "replaced); an iteration also builds its batch, as a ProfilerStep")
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
    p.add_argument("--profile-steps", type=int, metavar="N",
                   help="with --profile: profile N iterations (from iteration 2) and run the rest "
                        "unprofiled, as a user profiles a window of a longer job (default: all but "
                        "the first two)")
    p.add_argument("--slowdown", metavar="RANK=F", type=parse_slowdown,
                   help="rank RANK computes F times slower (F >= 1; as ddp-train --slowdown)")
    p.add_argument("--layout-out", metavar="FILE",
                   help="rank 0 writes the bucket layouts DDP built, as JSON")
    p.add_argument("--layout-caps", metavar="MB,MB,...", type=parse_caps, default=[],
                   help="with --layout-out: also the layouts DDP builds at these bucket caps "
                        "(each a fresh DDP over the same module, 3 iterations, unprofiled)")
    args = p.parse_args()
    defaults = MODELS[args.model][1]
    args.width = defaults[0] if args.width is None else args.width
    args.depth = defaults[1] if args.depth is None else args.depth
    if args.width < 1 or args.depth < 1:
        p.error(f"--width/--depth: expected positive integers, got {args.width}/{args.depth}")
    return args


def parse_slowdown(text):
    rank, sep, factor = text.partition("=")
    try:
        rank, factor = int(rank), float(factor)
    except ValueError:
        rank = -1
    if not sep or rank < 0 or not factor >= 1:
        raise argparse.ArgumentTypeError(f"expected RANK=F with RANK >= 0 and F >= 1, got '{text}'")
    return rank, factor


def parse_caps(text):
    try:
        caps = [float(c) for c in text.split(",")]
    except ValueError:
        caps = []
    if not caps or not all(c > 0 for c in caps):
        raise argparse.ArgumentTypeError(f"expected positive MiB separated by commas, got '{text}'")
    return caps


def make_mlp(width, depth):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, CLASSES))
    return nn.Sequential(*layers)


def mlp_batch(args, gen):
    return torch.randn(args.batch_size, args.width, generator=gen)


def make_cnn(width, depth):
    """A convnet on 1x28x28 images: convs of width/4 and width/2 channels, each pooled by 2, then
    depth-2 convs of width channels at 7x7, pooled to 4x4, and two linears (16 width -> 2 width
    -> classes). The default (256, 4) has parameters from 2 KB to 8.4 MB, so caps move buckets."""
    quarter, half = max(1, width // 4), max(1, width // 2)
    layers = [nn.Conv2d(1, quarter, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
              nn.Conv2d(quarter, half, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
    channels = half
    for _ in range(max(0, depth - 2)):
        layers += [nn.Conv2d(channels, width, 3, padding=1), nn.ReLU()]
        channels = width
    layers += [nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(channels * 16, 2 * width), nn.ReLU(),
               nn.Linear(2 * width, CLASSES)]
    return nn.Sequential(*layers)


def cnn_batch(args, gen):
    return torch.randn(args.batch_size, 1, 28, 28, generator=gen)


VOCAB, SEQUENCE = 1000, 32


class TransformerClassifier(nn.Module):
    """Token embedding, a TransformerEncoder (4 heads, feed-forward 2 x d_model), mean pooling."""

    def __init__(self, width, depth):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        layer = nn.TransformerEncoderLayer(width, nhead=4, dim_feedforward=2 * width,
                                           dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(width, CLASSES)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


def transformer_batch(args, gen):
    return torch.randint(VOCAB, (args.batch_size, SEQUENCE), generator=gen)


class GRUClassifier(nn.Module):
    """Token embedding, a GRU of `depth` layers, the last step's state to the classes: autograd
    through a recurrent kernel rather than matrix products alone."""

    def __init__(self, width, depth):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.gru = nn.GRU(width, width, num_layers=depth, batch_first=True)
        self.head = nn.Linear(width, CLASSES)

    def forward(self, tokens):
        return self.head(self.gru(self.embed(tokens))[0][:, -1])


# name -> (constructor(width, depth), default (width, depth), batch(args, generator))
MODELS = {
    "mlp": (make_mlp, (1024, 4), mlp_batch),
    "cnn": (make_cnn, (256, 4), cnn_batch),
    "transformer": (TransformerClassifier, (256, 4), transformer_batch),
    "rnn": (GRUClassifier, (256, 2), transformer_batch),
}


class Slowdown:
    """ddp-train's --slowdown F for one rank: its compute takes F times as long.

    Forward and optimizer step: after the phase, sleep (F-1) x its duration. Backward: a hook on
    every parameter, run as its gradient is accumulated and before DDP's own hook (which is
    registered on the accumulator's post-hooks), sleeps (F-1) x the compute since the previous
    gradient or the start of backward, so each gradient appears when a device F times slower
    would produce it and the all-reduces overlap the stretched backward. Communication is never
    stretched. Registered before DDP is built, on the module's parameters.
    """

    def __init__(self, module, factor):
        self.extra = factor - 1.0
        self.last = None
        for param in module.parameters():
            param.register_post_accumulate_grad_hook(self._on_gradient)

    def stretch(self, since):
        if self.extra > 0:
            time.sleep(self.extra * (time.monotonic() - since))

    def begin_backward(self):
        self.last = time.monotonic()

    def _on_gradient(self, _param):
        if self.last is not None:
            self.stretch(self.last)
            self.last = time.monotonic()


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
    if args.profile_steps is not None:
        if not 1 <= args.profile_steps <= active:
            raise SystemExit(f"python_ddp.py: --profile-steps: expected 1..{active} with --iterations "
                             f"{args.iterations}, got {args.profile_steps}")
        active = args.profile_steps
    profiler = profile(activities=activities, record_shapes=True,
                       schedule=schedule(skip_first=1, wait=0, warmup=1, active=active, repeat=1),
                       on_trace_ready=lambda prof: prof.export_chrome_trace(path))
    profiler.start()
    return profiler


def first_bucket_cap_mb(args, cap_mb):
    """The first bucket's cap at bucket cap `cap_mb`: the cap itself with --explicit-bucket-cap
    (DDP given bucket_cap_mb), else --first-bucket-cap-mb."""
    return cap_mb if args.explicit_bucket_cap else args.first_bucket_cap_mb


def make_ddp(module, cap_mb, first_cap_mb, explicit=False):
    """DDP over `module` at bucket cap `cap_mb` with a separate first bucket of `first_cap_mb`.

    ddp-train's --bucket-cap-mb X keeps a separate first bucket (--first-bucket-cap-mb, 1 MiB),
    as DDP does for its default cap; DDP(bucket_cap_mb=X) given explicitly makes the first
    bucket X too, so the layout is asked for the way DDP's default path reads it: both
    module-level defaults are read when DDP is constructed. `explicit`: DDP(bucket_cap_mb=X)
    itself, every bucket capped at X.
    """
    if explicit:
        return nn.parallel.DistributedDataParallel(module, bucket_cap_mb=cap_mb)
    import torch.nn.parallel.distributed as ddp_module
    ddp_module._DEFAULT_BUCKET_CAP_MB = cap_mb
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(first_cap_mb * 1024 * 1024)
    return nn.parallel.DistributedDataParallel(module)


def train_step(model, opt, x, y, slowdown, device):
    """Forward, backward with DDP's all-reduces, optimizer step; the loss."""
    t = time.monotonic()
    out = model(x)
    if slowdown is not None:
        slowdown.stretch(t)
        slowdown.begin_backward()
    loss = F.cross_entropy(out, y)
    loss.backward()
    t = time.monotonic()
    opt.step()
    opt.zero_grad()
    if slowdown is not None:
        slowdown.stretch(t)
    sync(device)
    return loss


def ddp_layout(ddp, cap_mb, first_cap_mb):
    """The buckets DDP rebuilt after iteration 0, as its logger reports them.

    rebuilt_bucket_sizes are bytes per bucket in bucket order; rebuilt_per_bucket_param_indices
    are indices into the module's parameters (registration order), whose shapes are listed.
    """
    data = ddp._get_ddp_logging_data()

    def ints(text):
        return [int(v) for v in str(text).replace(",", " ").split()]

    return {
        "bucket_cap_mb": cap_mb,
        "first_bucket_cap_mb": first_cap_mb,
        "bucket_sizes": ints(data.get("rebuilt_bucket_sizes", "")),
        "bucket_params": [ints(b) for b in str(data.get("rebuilt_per_bucket_param_indices", "")).split(",")
                          if b.strip()],
        "param_shapes": [list(p.shape) for p in ddp.module.parameters()],
    }


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
    torch.manual_seed(args.seed)
    build, _, make_batch = MODELS[args.model]
    module = build(args.width, args.depth).to(device)
    slowdown = None
    if args.slowdown is not None and args.slowdown[0] == rank:
        slowdown = Slowdown(module, args.slowdown[1])  # before DDP: its hooks run first
    model = make_ddp(module, args.bucket_cap_mb, first_bucket_cap_mb(args, args.bucket_cap_mb),
                     args.explicit_bucket_cap)
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
    iterations = []
    previous = time.monotonic()
    loss = None
    profiler = start_profiler(args, rank, device)
    for it in range(args.iterations):
        x = make_batch(args, gen).to(device)
        y = torch.randint(CLASSES, (args.batch_size,), generator=gen).to(device)
        sync(device)
        t0 = time.monotonic()
        loss = train_step(model, opt, x, y, slowdown, device)
        now = time.monotonic()
        if profiler is not None:
            profiler.step()  # one ProfilerStep#N per iteration, as users write it
        if it > 0 or args.iterations == 1:
            steps.append(now - t0)
        if it > 0:
            iterations.append(now - previous)  # from the last step's end, as prof.step() bounds it
        previous = now
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
            json.dump({"rank": rank, "step_seconds": steps, "iteration_seconds": iterations}, f)
    if args.layout_out:
        layouts = [ddp_layout(model, args.bucket_cap_mb, first_bucket_cap_mb(args, args.bucket_cap_mb))]
        for cap in args.layout_caps:
            ddp = make_ddp(module, cap, first_bucket_cap_mb(args, cap), args.explicit_bucket_cap)
            sgd = torch.optim.SGD(ddp.parameters(), lr=0.0)
            for _ in range(3):  # rebuilt in the forward of iteration 1, logged in the next
                train_step(ddp, sgd, make_batch(args, gen).to(device),
                           torch.randint(CLASSES, (args.batch_size,), generator=gen).to(device),
                           None, device)
            layouts.append(ddp_layout(ddp, cap, first_bucket_cap_mb(args, cap)))
        if rank == 0:
            with open(args.layout_out, "w") as f:
                json.dump({"model": args.model, "width": args.width, "depth": args.depth,
                           "world_size": world, "layouts": layouts}, f, indent=1)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
