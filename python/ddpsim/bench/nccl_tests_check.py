"""ddp-sim's all-reduce on the named cluster platforms against published nccl-tests results.

Usage: python -m ddpsim.bench.nccl_tests_check [--sim build/release/bin/ddp-sim] [--out nccl-tests-check.json]

For each published system it writes a 2-rank trace with one bucket per message size (one
float32 parameter each, all ready at once), replays it with `ddp-sim replay --cluster ...
--world-size W` (ring-agg, tree, and auto: per size the faster of the two), reads every
bucket's all-reduce time from the predicted trace and turns it into nccl-tests' bus
bandwidth: busbw = S / t * 2(W-1)/W. The CSV also has every size of the A100 sweep (the
curve `ddpsim-plot cluster-scaling` draws) and its average busbw. The published
numbers are quoted below with their source; nothing is fitted to them here (the presets'
latencies come from two other nccl-tests runs, cluster_presets.cpp).

Published measurements used (GitHub issues):
  A  NVIDIA/nccl-tests#119: 3 nodes x 8 A100-SXM4-40GB, 4 HDR 200 Gb/s NICs per node, 24 ranks,
     `all_reduce_perf -b 8 -e 128M` (step 1 MiB: sizes 8 + k*1048576, k = 0..127). Quoted rows
     near 128 MB (size B, out-of-place time us, busbw GB/s) and the run's "Avg bus bandwidth"
     84.8558 GB/s over its 128 sizes. The preset is dgx-a100 with this system's 4 NICs
     (--inter-bandwidth 4 x 24 GB/s) instead of DGX A100's 8.
  H  NVIDIA/nccl-tests#309: HGX H100 nodes with 8 GPU-NIC pairs (8 x 400G mlx5), up to 16 GiB:
     peak busbw 480 GB/s on 1 node (8 ranks), 470 GB/s on 2 nodes (16), 365.84 GB/s on 4 nodes
     (32). Compared with dgx-h100 at 16 GiB. The reporter's nodes are VMs; NCCL used its
     NVLink-SHARP/tree algorithms, which the ring and tree models here do not have.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

from ddpsim.bench.bench_jobs import SYNTHETIC_START_UTC

A100_ROWS = [  # nccl-tests#119, out-of-place: size (B), time (us), busbw (GB/s)
    (127926280, 2560.7, 95.75),
    (128974856, 2583.9, 95.67),
    (130023432, 2584.7, 96.42),
    (131072008, 2604.6, 96.45),
    (132120584, 2644.1, 95.77),
    (133169160, 2666.0, 95.74),
]
A100_SWEEP = [8 + k * 1048576 for k in range(128)]
A100_AVG_BUSBW = 84.8558
H100_PEAKS = [(8, 480.0), (16, 470.0), (32, 365.84)]  # nccl-tests#309: ranks, peak busbw GB/s
H100_SIZE = 17179869184


def write_trace(out, sizes):
    """A 2-rank trace, one bucket per size, ready together (traces/FORMAT.md)."""
    os.makedirs(out, exist_ok=True)
    params = [{"index": p, "name": f"p{p}", "numel": size // 4, "dtype": "float32"} for p, size in enumerate(sizes)]
    layout = [[p] for p in range(len(sizes))]
    for rank in range(2):
        meta = {
            "schema": "ddpsim-trace", "schema_version": 1, "source": "measured",
            "tool": {"name": "nccl_tests_check.py", "version": "0", "git_sha": "bench"},
            "start_time_utc": SYNTHETIC_START_UTC, "clock": "CLOCK_MONOTONIC", "host": "bench",
            "rank": rank, "local_rank": rank, "world_size": 2, "backend": "nccl",
            "workload": {"name": "allreduce-sizes", "batch_size": "1"}, "parameters": params,
            "bucket_cap_bytes": max(sizes), "first_bucket_cap_bytes": max(sizes),
            "bucket_assignments": [{"first_iteration": 0, "buckets": layout}],
            "timeout_s": 1800, "skew": {}, "settings": {},
        }
        with open(os.path.join(out, f"rank-{rank}.meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        rows = []
        t = 1_000_000_000
        for it in range(2):
            def ev(name, at, bucket="", param="", nbytes=""):
                rows.append(f"{rank},{it},{name},{int(at)},{bucket},{param},{nbytes},,,")
            ev("iteration_begin", t)
            ev("forward_begin", t)
            t += 1e6
            ev("forward_end", t)
            ev("backward_begin", t)
            ready = t + 1e6
            comm = ready
            for b, size in enumerate(sizes):
                ev("grad_ready", ready, param=b)
                ev("bucket_ready", ready, bucket=b, nbytes=size)
                ev("allreduce_begin", comm, bucket=b, nbytes=size)
                comm += 1e3 + size / 10.0  # any positive duration: the network is given, not fitted
                ev("allreduce_end", comm, bucket=b, nbytes=size)
            t = comm + 1e5
            ev("backward_end", t)
            ev("optimizer_begin", t)
            t += 1e6
            ev("optimizer_end", t)
            ev("iteration_end", t)
            t += 1e4
        rows.sort(key=lambda line: int(line.split(",")[3]))
        with open(os.path.join(out, f"rank-{rank}.events.csv"), "w") as f:
            f.write("\n".join(["rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message"] + rows) + "\n")


def simulate(sim, work, sizes, world, allreduce, platform_flags):
    """Every size's predicted all-reduce time, seconds (rank 0, the replayed iteration)."""
    trace = os.path.join(work, "trace")
    if not os.path.isdir(trace):
        write_trace(trace, sizes)
    out = os.path.join(work, f"pred-{allreduce}-{world}")
    subprocess.run([sim, "replay", trace, "--world-size", str(world), "--iterations", "1", "--allreduce", allreduce,
                    "--bandwidth", "1e9", "--latency", "1e-6", "--out", out] + platform_flags,
                   check=True, stdout=subprocess.DEVNULL)
    begin, durations = {}, {}
    with open(os.path.join(out, "rank-0.events.csv")) as f:
        for row in csv.DictReader(f):
            if row["event"] == "allreduce_begin":
                begin[int(row["bucket"])] = int(row["t_ns"])
            elif row["event"] == "allreduce_end":
                durations[int(row["bucket"])] = (int(row["t_ns"]) - begin[int(row["bucket"])]) * 1e-9
    return [durations[b] for b in range(len(sizes))]


def busbw_gb(size, seconds, world):
    return size / seconds * 2 * (world - 1) / world / 1e9


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sim", default="build/release/bin/ddp-sim")
    parser.add_argument("--out", default="nccl-tests-check.json")
    args = parser.parse_args()
    report = {"benchmark": "nccl_tests_check", "busbw": "S / t * 2(W-1)/W", "systems": []}
    rows_csv = []
    with tempfile.TemporaryDirectory() as work:
        # A: 24 A100 on 3 nodes, 4 HDR NICs each.
        flags = ["--cluster", "dgx-a100", "--inter-bandwidth", str(4 * 24e9)]
        system = {"name": "A100 x 24 (3 nodes x 8, 4 HDR NICs per node)", "source": "github.com/NVIDIA/nccl-tests/issues/119",
                  "ddp_sim": "--cluster dgx-a100 --inter-bandwidth 96e9 --world-size 24", "models": {}}
        for allreduce in ("ring-agg", "tree", "auto"):
            times = simulate(sim=args.sim, work=os.path.join(work, "a100"), sizes=A100_SWEEP, world=24,
                             allreduce=allreduce, platform_flags=flags)
            by_size = dict(zip(A100_SWEEP, times))
            points = []
            for size, time_us, busbw in A100_ROWS:
                predicted = by_size[size]
                points.append({"size_bytes": size, "measured_time_us": time_us, "predicted_time_us": predicted * 1e6,
                               "time_error_pct": 100 * (predicted * 1e6 / time_us - 1), "measured_busbw_gbs": busbw,
                               "predicted_busbw_gbs": busbw_gb(size, predicted, 24)})
                rows_csv.append(["A100x24", allreduce, 24, size, time_us, predicted * 1e6, busbw, busbw_gb(size, predicted, 24)])
            # Every size of the sweep too (no published time for most: the curve the figure draws).
            rows_csv.extend(["A100x24 sweep", allreduce, 24, s, "", t * 1e6, "", busbw_gb(s, t, 24)]
                            for s, t in zip(A100_SWEEP, times))
            average = sum(busbw_gb(s, t, 24) for s, t in zip(A100_SWEEP, times)) / len(times)
            rows_csv.append(["A100x24 average", allreduce, 24, "", "", "", A100_AVG_BUSBW, average])
            small = {str(s): {"predicted_time_us": by_size[s] * 1e6} for s in (8, 1048584, 16777224)}
            system["models"][allreduce] = {
                "points": points,
                "median_abs_time_error_pct": sorted(abs(p["time_error_pct"]) for p in points)[len(points) // 2],
                "avg_busbw_gbs": {"measured": A100_AVG_BUSBW, "predicted": average,
                                  "error_pct": 100 * (average / A100_AVG_BUSBW - 1)},
                "unpublished_sizes_predicted": small,
            }
        report["systems"].append(system)
        # H: HGX H100, peak busbw at 1, 2 and 4 nodes.
        system = {"name": "HGX H100 (8 GPUs + 8 x 400G NICs per node)", "source": "github.com/NVIDIA/nccl-tests/issues/309",
                  "ddp_sim": "--cluster dgx-h100, 16 GiB", "models": {}}
        for allreduce in ("ring-agg", "tree", "auto"):
            points = []
            for world, peak in H100_PEAKS:
                predicted = simulate(sim=args.sim, work=os.path.join(work, "h100"), sizes=[H100_SIZE], world=world,
                                     allreduce=allreduce, platform_flags=["--cluster", "dgx-h100"])[0]
                bw = busbw_gb(H100_SIZE, predicted, world)
                points.append({"ranks": world, "measured_peak_busbw_gbs": peak, "predicted_busbw_gbs": bw,
                               "error_pct": 100 * (bw / peak - 1)})
                rows_csv.append(["H100", allreduce, world, H100_SIZE, "", predicted * 1e6, peak, bw])
            system["models"][allreduce] = {"points": points}
        report["systems"].append(system)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.splitext(args.out)[0] + ".csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["system", "allreduce", "ranks", "size_bytes", "measured_time_us", "predicted_time_us",
                         "measured_busbw_gbs", "predicted_busbw_gbs"])
        writer.writerows(rows_csv)
    for system in report["systems"]:
        print(system["name"], "-", system["source"])
        for model, result in system["models"].items():
            for p in result["points"]:
                if "size_bytes" in p:
                    print(f"  {model:8} {p['size_bytes']:>10} B  measured {p['measured_time_us']:8.1f} us "
                          f"({p['measured_busbw_gbs']:6.2f} GB/s)  predicted {p['predicted_time_us']:8.1f} us "
                          f"({p['predicted_busbw_gbs']:6.2f} GB/s)  {p['time_error_pct']:+6.1f} %")
                else:
                    print(f"  {model:8} W={p['ranks']:<3} peak busbw measured {p['measured_peak_busbw_gbs']:6.1f} GB/s, "
                          f"predicted {p['predicted_busbw_gbs']:6.1f} GB/s  {p['error_pct']:+6.1f} %")
            if "avg_busbw_gbs" in result:
                a = result["avg_busbw_gbs"]
                print(f"  {model:8} average busbw over the 128 sizes: measured {a['measured']:.2f}, "
                      f"predicted {a['predicted']:.2f} GB/s ({a['error_pct']:+.1f} %)")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
