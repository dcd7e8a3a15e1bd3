"""A real GPU job scaled out on a named cluster platform: the scaling figure of
docs/cluster-presets.md (#18).

Usage: python -m ddpsim.bench.cluster_scaling [--sim build/release/bin/ddp-sim]
           [--import-tool build/release/bin/ddp-trace] [--kineto ../shared/kineto-real/resnet50-ddp-a100-rank0]
           [--cluster dgx-a100] [--worlds 2,8,...] [--out cluster-scaling.csv]

Imports a PyTorch profiler trace of a DDP job (default: ResNet-50, rank 0 of 2 on A100s,
NCCL; ../shared/kineto-real/README.md says where it comes from) with `ddp-trace import
--kineto`, then replays it with `ddp-sim replay --cluster CLUSTER --world-size W` for each W
and each all-reduce model (ring-agg, tree, auto), 3 iterations each. One CSV row per
(W, model): the trace's measured step, the predicted one, and for auto how many all-reduce
sizes went to each model. The all-reduce model on the preset is checked against nccl-tests
by nccl_tests_check.py; `ddpsim-plot cluster-scaling` draws both.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

MODELS = ("ring-agg", "tree", "auto")
WORLDS = (2, 8, 64, 512, 1024, 4096, 16384, 65536)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sim", default="build/release/bin/ddp-sim")
    parser.add_argument("--import-tool", default="build/release/bin/ddp-trace")
    parser.add_argument("--kineto", default="../shared/kineto-real/resnet50-ddp-a100-rank0")
    parser.add_argument("--cluster", default="dgx-a100")
    parser.add_argument("--worlds", default=",".join(str(w) for w in WORLDS))
    parser.add_argument("--out", default="cluster-scaling.csv")
    args = parser.parse_args()
    profiles = sorted(os.path.join(args.kineto, f) for f in os.listdir(args.kineto) if f.startswith("rank-"))
    if not profiles:
        print(f"{args.kineto}: expected rank-*.json.gz profiler traces, got none", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "trace")
        subprocess.run([args.import_tool, "import", "--kineto", trace] + profiles, check=True,
                       stdout=subprocess.DEVNULL)
        for world in (int(w) for w in args.worlds.split(",")):
            for model in MODELS:
                report_path = os.path.join(work, f"{model}-{world}.json")
                start = time.monotonic()
                subprocess.run([args.sim, "replay", trace, "--cluster", args.cluster, "--world-size", str(world),
                                "--iterations", "3", "--allreduce", model, "--json", report_path],
                               check=True, stdout=subprocess.DEVNULL)
                wall = time.monotonic() - start
                with open(report_path) as f:
                    report = json.load(f)
                picked = {}
                for choice in report.get("allreduce_choices", []):
                    picked[choice["algorithm"]] = picked.get(choice["algorithm"], 0) + len(choice["buckets"])
                row = {"trace": os.path.basename(os.path.normpath(args.kineto)), "cluster": args.cluster,
                       "world_size": world, "allreduce": model,
                       "measured_world_size": report["measured"]["world_size"],
                       "measured_iteration_s": report["measured"]["median_iteration_s"],
                       "predicted_iteration_s": report["predicted"]["median_iteration_s"],
                       "buckets_ring_agg": picked.get("ring-agg", ""), "buckets_tree": picked.get("tree", ""),
                       "wall_s": round(wall, 3)}
                rows.append(row)
                print(f"W={world:<6} {model:9} predicted {row['predicted_iteration_s'] * 1e3:9.2f} ms "
                      f"(measured {row['measured_iteration_s'] * 1e3:.2f} ms at W={row['measured_world_size']})"
                      + (f"  buckets: ring-agg {picked.get('ring-agg', 0)}, tree {picked.get('tree', 0)}"
                         if model == "auto" else "") + f"  [{wall:.1f} s]")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
