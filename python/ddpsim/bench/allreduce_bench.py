#!/usr/bin/env python3
"""Gloo all-reduce alone (no training), over loopback or across testbed hosts, to give ddp-sim a network model that
does not come from the trace it predicts.

Spawns W ranks; for each message size (interleaved, several rounds) times a blocking
dist.all_reduce after a barrier, keeps the slowest rank's median per size, fits t = a + b*S
and converts it to ddp-sim's ring alpha-beta model, t = 2(W-1)*alpha + 2(W-1)/W * S/beta:

    alpha = a / (2(W-1)),  beta = 2(W-1)/W / b

With --busy, every rank also keeps one thread multiplying matrices (as autograd would) while
half the all-reduces run, interleaved with idle ones, and the report adds the busy rate as a
fraction of the idle one: ddp-sim's --overlap-bandwidth-fraction (a 1-rank baseline has no
all-reduce to fit it from). It also reports the other side: the load's own rate while an
all-reduce runs over its rate for as long alone (Gloo's threads take CPU from autograd).

With --concurrent K, each size is also all-reduced K times at once (K tensors, async_op, then
every wait), as DDP hands its buckets to Gloo, which runs two collectives at a time: the report
adds the time per all-reduce so (concurrent_points) and the line through them, and says whether
K in flight pay the per-collective latency once each or overlap it, and what they do together over
one alone (concurrent_gains per size, concurrent_gain their median: ddp-sim's
--concurrent-allreduces 2=G).

With --sizes, those message sizes instead of 64 KiB to 8 MiB: a trace's bucket sizes, say, so that
a what-if's larger buckets (a 50 MB bucket at cap 100, predicted from a trace whose largest is
33.6 MB) are timed rather than extrapolated.

With --device cuda, the tensors are CUDA tensors (each rank on GPU local_rank % GPUs, as
ddp-train --backend gloo --device cuda), so a time includes Gloo's copies to the host and back;
the clock stops after torch.cuda.synchronize().

Usage (with the project's torch, .venv/bin/python; it imports nothing of ddpsim, so another
torch's python3 can run it by path, python/ddpsim/bench/allreduce_bench.py, as scripts/gpu-whatif.sh does):
  python -m ddpsim.bench.allreduce_bench --out FILE.json [--world-size 2] [--rounds 15] [--busy] [--concurrent K]
                          [--sizes BYTES,BYTES...] [--device cpu|cuda]
                          [--nnodes N --node-rank I --master-addr A [--master-port P]]

With --nnodes, the W ranks span N hosts, W/N on each (as ddp-launch places them): run it once on
every host, e.g. in the testbed (scripts/testbed.sh), where a host's ranks share its loopback and
its shaped link. Host 0 writes --out; every rank's times reach it through the process group.
"""

import argparse
import json
import os
import socket
import statistics
import sys
import threading
import time

# torch is imported where it is used, not here: its import takes seconds, and a bad flag is
# refused before it (the spawned ranks import it in worker()).

SIZES = [64 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20]  # bytes: the default --sizes


class ComputeLoad:
    """One thread of back-to-back 128x128 matrix products (torch releases the GIL in them),
    switched on and off between all-reduces: the CPU work that autograd does during backward.
    `done` counts the products, so the load's own rate can be read over any window."""

    def __init__(self):
        self.on = threading.Event()
        self.stop = False
        self.done = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        import torch
        a = torch.rand(128, 128)
        b = torch.rand(128, 128)
        while not self.stop:
            if not self.on.wait(timeout=0.05):
                continue
            torch.mm(a, b)
            self.done += 1

    def close(self):
        self.stop = True
        self.on.set()
        self.thread.join()


def worker(local_rank, args, results):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    rank = args.node_rank * (args.world_size // args.nnodes) + local_rank
    os.environ["MASTER_ADDR"] = args.master_addr
    os.environ["MASTER_PORT"] = str(args.port)
    device = torch.device("cpu")
    if args.device == "cuda":
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    dist.init_process_group("gloo", rank=rank, world_size=args.world_size)
    tensors = {size: torch.ones(size // 4, device=device) for size in args.sizes}
    together = {size: [torch.ones(size // 4, device=device) for _ in range(args.concurrent)]
                for size in args.sizes} if args.concurrent > 1 else {}
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    modes = ["idle", "busy"] if args.busy else ["idle"]
    if together:
        modes.append("concurrent")
    times = {(mode, size): [] for mode in modes for size in args.sizes}
    # With --busy: products done and seconds, while all-reduces run and while nothing else does.
    work = {"allreduce": [0, 0.0], "alone": [0, 0.0]}
    load = ComputeLoad() if args.busy else None
    for round_ in range(args.rounds + 1):  # round 0 warms up connections and buffers
        for size in args.sizes:
            for mode in modes:  # interleaved: idle, busy, idle, busy, ...
                if load is not None:
                    if mode == "busy":
                        load.on.set()
                    else:
                        load.on.clear()
                dist.barrier()
                start = time.perf_counter()
                before = load.done if load is not None else 0
                if mode == "concurrent":  # K at once, then every wait: seconds per all-reduce
                    for handle in [dist.all_reduce(t, async_op=True) for t in together[size]]:
                        handle.wait()
                    sync()
                    elapsed = (time.perf_counter() - start) / len(together[size])
                else:
                    dist.all_reduce(tensors[size])
                    sync()
                    elapsed = time.perf_counter() - start
                if round_ > 0:
                    times[(mode, size)].append(elapsed)
                if mode == "busy" and round_ > 0 and size >= (1 << 20):
                    # The load's rate during this all-reduce, then alone for as long.
                    work["allreduce"][0] += load.done - before
                    work["allreduce"][1] += elapsed
                    before, start = load.done, time.perf_counter()
                    time.sleep(elapsed)
                    work["alone"][0] += load.done - before
                    work["alone"][1] += time.perf_counter() - start
    if load is not None:
        load.close()
    mine = {"times": {key: statistics.median(t) for key, t in times.items()}, "work": work}
    everyone = [None] * args.world_size
    dist.all_gather_object(everyone, mine)  # host 0 reports on every host's ranks
    if rank == 0:
        for r, result in enumerate(everyone):
            results[r] = result
    dist.destroy_process_group()


def refuse(message):
    """Bad input: one line on stderr naming the flag, exit 2 (as argparse's own errors)."""
    print(f"allreduce_bench.py: {message}", file=sys.stderr)
    sys.exit(2)


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
    parser.add_argument("--busy", action="store_true",
                        help="also time all-reduces while each rank computes; report the rate fraction")
    parser.add_argument("--concurrent", type=int, default=1,
                        help="also time K all-reduces in flight at once (K >= 2; 1: off)")
    parser.add_argument("--sizes", default=",".join(str(size) for size in SIZES),
                        help="message sizes in bytes, comma-separated (multiples of 4, at least 2 distinct; "
                             "default 64 KiB to 8 MiB), e.g. a trace's bucket sizes")
    parser.add_argument("--device", default="cpu",
                        help="cpu | cuda: where the tensors live (cuda: Gloo stages them through the host)")
    parser.add_argument("--nnodes", type=int, default=1, help="hosts the ranks span (run once on each)")
    parser.add_argument("--node-rank", type=int, default=0, help="this host, 0..nnodes-1")
    parser.add_argument("--master-addr", default="127.0.0.1", help="host 0's address (with --nnodes)")
    parser.add_argument("--master-port", type=int, default=0, help="its port (default: a free one, 1 host only)")
    args = parser.parse_args()

    if args.world_size < 2:
        refuse(f"--world-size {args.world_size}: expected at least 2")
    if args.nnodes < 1 or args.world_size % args.nnodes:
        refuse(f"--nnodes {args.nnodes}: expected a divisor of --world-size {args.world_size}")
    if not 0 <= args.node_rank < args.nnodes:
        refuse(f"--node-rank {args.node_rank}: expected 0..{args.nnodes - 1}")
    if args.concurrent < 1:
        refuse(f"--concurrent {args.concurrent}: expected a positive count (1: off)")
    sizes_text = args.sizes
    try:
        args.sizes = sorted({int(size) for size in sizes_text.split(",")})
    except ValueError:
        args.sizes = []
    if len(args.sizes) < 2 or any(size <= 0 or size % 4 for size in args.sizes):
        refuse(f"--sizes {sizes_text}: expected at least 2 distinct byte counts, comma-separated, "
               f"each a positive multiple of 4")
    if args.device not in ("cpu", "cuda"):
        refuse(f"--device {args.device}: expected cpu or cuda")
    if args.nnodes > 1 and args.master_port == 0:
        refuse("--master-port: expected a port every host agrees on (with --nnodes > 1)")
    import torch  # the flags are good: now the seconds-long import
    import torch.multiprocessing as mp
    if args.device == "cuda" and not torch.cuda.is_available():
        refuse("--device cuda: expected a visible CUDA GPU, got none (or a CPU build of torch)")
    args.port = args.master_port
    if args.port == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.port = s.getsockname()[1]
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(worker, args=(args, results), nprocs=args.world_size // args.nnodes, join=True)
        per_rank = dict(results)
    if args.node_rank != 0:
        return  # host 0 reports
    w = args.world_size

    def fit(mode):
        slowest = {size: max(per_rank[r]["times"][(mode, size)] for r in per_rank) for size in args.sizes}
        intercept, slope = fit_line([float(s) for s in args.sizes], [slowest[s] for s in args.sizes])
        return slowest, intercept, slope

    slowest, intercept, slope = fit("idle")
    report = {
        "world_size": w,
        "ranks_reported": len(per_rank),  # every host's ranks, gathered by host 0
        "points": [{"bytes": s, "median_s": slowest[s]} for s in args.sizes],
        "intercept_s": intercept,
        "slope_s_per_byte": slope,
        "alpha_s": max(intercept, 0.0) / (2 * (w - 1)),
        "beta_bytes_per_s": (2 * (w - 1) / w) / slope,
    }
    report["device"] = args.device
    if args.concurrent > 1:
        together, together_intercept, together_slope = fit("concurrent")
        report["concurrent"] = args.concurrent
        report["concurrent_points"] = [{"bytes": s, "median_s_per_allreduce": together[s]} for s in args.sizes]
        report["concurrent_intercept_s"] = together_intercept
        report["concurrent_slope_s_per_byte"] = together_slope
        # What K in flight do together over one alone, per size, and their median: with K = 2,
        # ddp-sim's --concurrent-allreduces 2=G (the loopback specs take the median of several runs).
        report["concurrent_gains"] = [slowest[s] / together[s] for s in args.sizes]
        report["concurrent_gain"] = statistics.median(report["concurrent_gains"])
    if args.busy:
        busy, _, busy_slope = fit("busy")
        report["busy_points"] = [{"bytes": s, "median_s": busy[s]} for s in args.sizes]
        report["busy_slope_s_per_byte"] = busy_slope
        # ddp-sim takes a rate fraction in (0, 1]: a load that does not slow the transfer is 1.
        report["overlap_bandwidth_fraction"] = min(1.0, slope / busy_slope)
        # The load's rate while all-reduces run over its rate alone, pooled over ranks (1 MiB
        # and larger messages: windows of milliseconds, many products each).
        rate = {key: sum(per_rank[r]["work"][key][0] for r in per_rank) /
                sum(per_rank[r]["work"][key][1] for r in per_rank) for key in ("allreduce", "alone")}
        report["compute_rate_alone_per_s"] = rate["alone"]
        report["compute_rate_during_allreduce_per_s"] = rate["allreduce"]
        report["compute_fraction_during_allreduce"] = min(1.0, rate["allreduce"] / rate["alone"])
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    line = (f"gloo all-reduce W={w}: alpha {report['alpha_s'] * 1e6:.1f} us, "
            f"beta {report['beta_bytes_per_s'] / 1e9:.3f} GB/s")
    if args.concurrent > 1:
        line += (f"; {args.concurrent} at once: {together_intercept * 1e6:.1f} us + "
                 f"{together_slope * 1e9:.3f} ns/byte per all-reduce (alone: {intercept * 1e6:.1f} us + "
                 f"{slope * 1e9:.3f} ns/byte), together x{report['concurrent_gain']:.3f} of one's rate")
    if args.busy:
        line += (f", x{report['overlap_bandwidth_fraction']:.3f} of it while computing; compute at "
                 f"x{report['compute_fraction_during_allreduce']:.3f} while all-reducing")
    print(line)


if __name__ == "__main__":
    main()
