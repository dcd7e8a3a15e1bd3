"""A per-bucket list of caps, measured against its prediction (#17).

On loopback (ddp-launch, 2 Gloo ranks, one machine), per repetition and interleaved: a baseline
job with one cap (A), then one job per list (B, C, ...): A B C A B C ... Each list job is
predicted only from its repetition's baseline trace:
    ddp-sim replay BASELINE --bucket-caps-mb LIST
and compared on medians (iteration 0, the one-bucket iteration, left out; the replay replays the
baseline's iterations 1..N). Also checks that each list job built the layout the replay
re-bucketed (bucket count from its trace). Writes one JSON; standard library only.

    flock /tmp/ddpsim-measuring python -m ddpsim.bench.validate_bucket_list --reps 3 \
        --lists 0.25,0.25,25 0.25,0.5 --out results/bucket-list/validate.json
"""
import argparse
import json
import os
import statistics

from ddpsim.bench import bench_jobs
from ddpsim.bench.bench_jobs import ROOT
from ddpsim.stats import relative_error  # the one definition of the error, as in C++
WORKLOAD = ["--model", "mlp", "--width", "2048", "--depth", "4", "--batch-size", "8"]


def run(cmd):
    return bench_jobs.run("validate_bucket_list.py", cmd)


def measure(bin_dir, trace, caps, iterations, seed):
    run([f"{bin_dir}/ddp-launch", "--nproc-per-node", "2", "--master-port", "0", "--",
         f"{bin_dir}/ddp-train", *WORKLOAD, *caps, "--iterations", str(iterations), "--threads", "1",
         "--seed", str(seed), "--quiet", "--trace-dir", trace])
    summary = json.loads(run([f"{bin_dir}/ddp-trace", "summary", "--json", trace]))
    times = [it["time_s"] for it in summary["iterations"] if it.get("iteration", 1) > 0]
    with open(os.path.join(trace, "rank-0.meta.json")) as f:
        meta = json.load(f)
    return statistics.median(times), len(meta["bucket_assignments"][-1]["buckets"]), meta.get("bucket_cap_bytes_list")


def predict(bin_dir, baseline, caps_list, out_json, out_trace):
    """(predicted median iteration, buckets of the re-bucketed layout)."""
    run([f"{bin_dir}/ddp-sim", "replay", baseline, "--bucket-caps-mb", caps_list, "--json", out_json,
         "--out", out_trace])
    with open(out_json) as f:
        report = json.load(f)
    with open(os.path.join(out_trace, "rank-0.meta.json")) as f:
        meta = json.load(f)
    return report["distribution"]["p50_s"], len(meta["bucket_assignments"][-1]["buckets"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "release", "bin"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--baseline-cap", default="25")
    ap.add_argument("--lists", nargs="+", default=["0.25,0.25,25", "0.25,0.5"])
    ap.add_argument("--work", default="/tmp/ddpsim-bucket-list")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rows = []
    for rep in range(args.reps):
        d = os.path.join(args.work, f"rep{rep}")
        os.makedirs(d, exist_ok=True)
        base = os.path.join(d, "base")
        base_p50, base_buckets, _ = measure(args.bin, base, ["--bucket-cap-mb", args.baseline_cap], args.iterations, rep)
        for i, caps in enumerate(args.lists):
            trace = os.path.join(d, f"list{i}")
            measured, buckets, recorded = measure(args.bin, trace, ["--bucket-caps-mb", caps], args.iterations, rep)
            predicted, predicted_buckets = predict(args.bin, base, caps, os.path.join(d, f"pred{i}.json"),
                                                   os.path.join(d, f"pred{i}"))
            rows.append({"rep": rep, "list": caps, "baseline_p50_s": base_p50, "baseline_buckets": base_buckets,
                         "measured_p50_s": measured, "predicted_p50_s": predicted,
                         "error": relative_error(predicted, measured), "buckets": buckets, "recorded_list_bytes": recorded,
                         "predicted_buckets": predicted_buckets})
            print(json.dumps(rows[-1]), flush=True)
    summary = {}
    for caps in args.lists:
        r = [x for x in rows if x["list"] == caps]
        m = statistics.median(x["measured_p50_s"] for x in r)
        p = statistics.median(x["predicted_p50_s"] for x in r)
        b = statistics.median(x["baseline_p50_s"] for x in r)
        summary[caps] = {"measured_median_s": m, "predicted_median_s": p, "error_of_medians": relative_error(p, m),
                         "per_rep_errors": [x["error"] for x in r], "baseline_median_s": b,
                         "measured_change_vs_baseline": relative_error(m, b), "predicted_change_vs_baseline": relative_error(p, b)}
    out = {"workload": WORKLOAD, "baseline_cap_mb": args.baseline_cap, "iterations": args.iterations,
           "reps": args.reps, "order": "per repetition: baseline, then each list (A B C A B C ...)",
           "rows": rows, "summary": summary}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
