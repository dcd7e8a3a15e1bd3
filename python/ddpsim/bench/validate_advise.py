"""Does `ddp-sim advise` give the right answers on real runs? Two checks on 2 Gloo ranks.

  bucket     a comm-heavy MLP (validate_whatif.py's COMM_HEAVY: the cap matters) measured at
             every cap of --caps, in an order rotated per repetition; the advice is taken from
             the 25 MiB run's trace alone, and the advised cap's measured throughput is
             compared with the best measured cap's (issue 17: within 3 %).
  stragglers a compute-heavy MLP measured unskewed, with rank 1 slowed x2 (--slowdown 1=2) and
             with rank 1 stalled exp(100 ms) per iteration (--delay-dist 1=exp:100); advise must
             name rank 1 (and nobody on the unskewed run), and rank 1's predicted cost per
             iteration is compared with the measured one: the skewed run's mean iteration minus
             the unskewed run's (issue 17: within 10 %).

With --from-whatif DIR it measures nothing and checks the same two answers on the runs that
validate_whatif.py already measured in DIR (e.g. its --testbed runs, where the cap matters):
the bucket family's cap-25 baseline of each repetition is advised over the family's caps and
compared with the best measured cap (median over repetitions); each slowdown run (rank 1 x F)
is advised alone, and rank 1's cost is compared with the measured one (that repetition's
mean iteration minus the unslowed run's).

Writes OUT/advise.json (default results/advise) and prints a short table. Standard library
only; needs ddp-launch, ddp-train, ddp-trace and ddp-sim (build/release/bin).

    python -m ddpsim.bench.validate_advise [--reps 1] [--iterations 30] [--out DIR]
    python -m ddpsim.bench.validate_advise --from-whatif results/whatif-testbed [--out DIR]
"""
import argparse
import functools
import json
import os
import statistics
import sys

from ddpsim.bench.bench_jobs import ROOT
from ddpsim.bench.validate_whatif import COMM_HEAVY, COMPUTE_HEAVY, iteration_times, measure, run

SKEWS = {"none": [], "slow2": ["--slowdown", "1=2"], "exp100": ["--delay-dist", "1=exp:100"]}


def advise(bin_dir, trace, out_json, extra=()):
    run([f"{bin_dir}/ddp-sim", "advise", trace, "--json", out_json, *extra])
    with open(out_json) as f:
        return json.load(f)


def bucket_check(bin_dir, out, caps, reps, iterations):
    measured = {c: [] for c in caps}
    advice = []
    for rep in range(reps):
        order = caps[rep % len(caps):] + caps[:rep % len(caps)]
        for c in order:
            trace = os.path.join(out, f"bucket-rep{rep}-cap{c}")
            summary = measure(bin_dir, trace, COMM_HEAVY + ["--bucket-cap-mb", c], 2, iterations, seed=rep)
            measured[c].append(statistics.median(iteration_times(summary)))
        a = advise(bin_dir, os.path.join(out, f"bucket-rep{rep}-cap25"), os.path.join(out, f"advice-bucket-rep{rep}.json"),
                   ["--bucket-caps", ",".join(caps)])
        advice.append(a["bucket"])
    median_s = {c: statistics.median(v) for c, v in measured.items()}
    best = min(median_s, key=median_s.get)
    rows = []
    for a in advice:
        advised = f"{a['recommended_bucket_cap_mb']:g}"
        rows.append({"advised_cap_mb": advised, "keep": a["keep"], "predicted_gain": a["gain"],
                     "best_measured_cap_mb": best,
                     "throughput_vs_best": median_s[best] / median_s[advised] if advised in median_s else None})
    return {"measured_median_iteration_s": median_s, "advice": rows}


def straggler_check(bin_dir, out, reps, iterations):
    results = []
    for rep in range(reps):
        means = {}
        advice = {}
        for label, flags in SKEWS.items():
            trace = os.path.join(out, f"skew-rep{rep}-{label}")
            summary = measure(bin_dir, trace, COMPUTE_HEAVY + ["--bucket-cap-mb", "25"] + flags, 2, iterations, seed=rep)
            means[label] = statistics.mean(iteration_times(summary))
            advice[label] = advise(bin_dir, trace, os.path.join(out, f"advice-skew-rep{rep}-{label}.json"),
                                   ["--bucket-caps", "25"])["stragglers"]
        for label in SKEWS:
            ranks = advice[label]["ranks"]
            measured_cost = means[label] - means["none"] if label != "none" else 0.0
            predicted = ranks[1]["per_iteration_s"]
            results.append({"rep": rep, "run": label, "named": advice[label]["named"],
                            "predicted_rank1_cost_s": predicted,
                            "predicted_rank1_interval_s": ranks[1]["interval_s"],
                            "measured_cost_s": measured_cost,
                            "error": (predicted - measured_cost) / measured_cost if measured_cost > 0 else None})
    return results


@functools.lru_cache(maxsize=None)
def summary_of(bin_dir, trace):
    """ddp-trace summary --json of a trace, read once (a baseline serves every skewed run)."""
    return json.loads(run([f"{bin_dir}/ddp-trace", "summary", "--json", trace]))


def from_whatif(bin_dir, whatif_dirs, out):
    """Both checks on validate_whatif.py's measured runs in whatif_dirs (nothing is measured):
    the bucket family, and the slowdown and delay families, wherever they are."""
    def runs(family):
        """{config: {rep: trace}} of one family, from the first directory that has it."""
        for whatif_dir in whatif_dirs:
            traces = os.path.join(whatif_dir, "traces")
            found = {}
            for name in sorted(os.listdir(traces)):
                if name.startswith(family + "-") and "-rep" in name and os.path.isdir(os.path.join(traces, name)):
                    config, rep = name[len(family) + 1:].rsplit("-rep", 1)
                    found.setdefault(config, {})[int(rep)] = os.path.join(traces, name)
            if found:
                return found
        return {}

    bucket = runs("bucket")
    if "cap25" not in bucket:
        sys.exit(f"validate_advise.py: --from-whatif {' '.join(whatif_dirs)}: expected bucket-cap25-repN traces, got none")
    caps = sorted((c[len("cap"):] for c in bucket), key=float)
    median_s = {c: statistics.median(statistics.median(iteration_times(summary_of(bin_dir, t)))
                                     for t in bucket["cap" + c].values()) for c in caps}
    best = min(median_s, key=median_s.get)
    advice_rows = []
    for rep, trace in sorted(bucket["cap25"].items()):
        a = advise(bin_dir, trace, os.path.join(out, f"advice-bucket-rep{rep}.json"),
                   ["--bucket-caps", ",".join(caps)])["bucket"]
        advised = f"{a['recommended_bucket_cap_mb']:g}"
        advice_rows.append({"rep": rep, "advised_cap_mb": advised, "keep": a["keep"],
                            "predicted_gain": a["gain"], "best_measured_cap_mb": best,
                            "throughput_vs_best": median_s[best] / median_s[advised] if advised in median_s else None})
    stragglers = []
    # (family, unskewed config): rank 1 is slowed or stalled in every other config.
    for family, base in (("slowdown", "x1"), ("delay", "none")):
        skewed = runs(family)
        for config in [c for c in skewed if c != base] + [base]:
            for rep, trace in sorted(skewed[config].items()):
                if rep not in skewed.get(base, {}):
                    continue
                base_mean = statistics.mean(iteration_times(summary_of(bin_dir, skewed[base][rep])))
                measured_cost = (statistics.mean(iteration_times(summary_of(bin_dir, trace))) - base_mean
                                 if config != base else 0.0)
                s = advise(bin_dir, trace, os.path.join(out, f"advice-{family}-{config}-rep{rep}.json"),
                           ["--bucket-caps", "1"])["stragglers"]
                predicted = s["ranks"][1]["per_iteration_s"]
                stragglers.append({"rep": rep, "run": f"{family}-{config}", "named": s["named"],
                                   "predicted_rank1_cost_s": predicted,
                                   "predicted_rank1_interval_s": s["ranks"][1]["interval_s"],
                                   "measured_cost_s": measured_cost,
                                   "error": (predicted - measured_cost) / measured_cost if measured_cost > 0 else None})
    return ({"measured_median_iteration_s": median_s, "advice": advice_rows}, stragglers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--caps", default="0.25,1,5,25,100", help="MiB, must include 25 (the advised-from baseline)")
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "release", "bin"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "advise"))
    ap.add_argument("--from-whatif", metavar="DIR", action="append",
                    help="check the runs validate_whatif.py measured in DIR instead of measuring "
                         "(repeatable: e.g. its --testbed runs and its --families delay runs)")
    args = ap.parse_args()
    caps = args.caps.split(",")
    if "25" not in caps:
        sys.exit(f"validate_advise.py: --caps: expected a list including 25, got {args.caps}")
    os.makedirs(args.out, exist_ok=True)
    if args.from_whatif:
        bucket, stragglers = from_whatif(args.bin_dir, args.from_whatif, args.out)
        result = {"from_whatif": [os.path.abspath(d) for d in args.from_whatif], "bucket": bucket,
                  "stragglers": stragglers}
    else:
        result = {"reps": args.reps, "iterations": args.iterations,
                  "bucket": bucket_check(args.bin_dir, args.out, caps, args.reps, args.iterations),
                  "stragglers": straggler_check(args.bin_dir, args.out, args.reps, args.iterations)}
    with open(os.path.join(args.out, "advise.json"), "w") as f:
        json.dump(result, f, indent=2)
    print("bucket: measured median iteration per cap (ms):",
          {c: round(v * 1e3, 1) for c, v in result["bucket"]["measured_median_iteration_s"].items()})
    for row in result["bucket"]["advice"]:
        print(f"  advised {row['advised_cap_mb']} MiB (keep {row['keep']}), best measured {row['best_measured_cap_mb']} MiB, "
              f"advised/best throughput {row['throughput_vs_best']}")
    for row in result["stragglers"]:
        err = f"{100 * row['error']:+.1f} %" if row["error"] is not None else "-"
        print(f"  {row['run']:7s} named {row['named']}  rank 1 cost predicted {row['predicted_rank1_cost_s'] * 1e3:.1f} ms, "
              f"measured {row['measured_cost_s'] * 1e3:.1f} ms ({err})")
    print(os.path.join(args.out, "advise.json"))


if __name__ == "__main__":
    main()
