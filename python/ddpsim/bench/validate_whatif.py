"""What-if accuracy of ddp-sim: predictions from a baseline trace against measured runs of the
changed configuration.

A *prediction* here always forecasts a configuration that the trace it comes from did not run:
the baseline (2 Gloo ranks, no skew, the family's baseline bucket cap) is measured, and
`ddp-sim replay BASELINE <what-if flags>` is compared with a measured run of that what-if. Each
repetition measures every configuration of a family once, in an order rotated per repetition
(A B C, B C A, ...), so a drift in machine speed touches all configurations alike; each
what-if is predicted from the same repetition's baseline. *Reconstruction* rows (the baseline
replayed against itself) are kept separately and never called predictions.

Families (--families, default all):
  bucket    baseline cap 25 MiB -> caps 0.25, 1, 5, 100 MiB   (comm-heavy MLP: the cap matters)
  slowdown  rank 1's compute x 1.25, 1.5, 2, 3                 (compute-heavy MLP)
  delay     rank 1 stalls exp(mean 20 ms) per iteration: the whole distribution (p50/p90/p99, KS)
  world     1 rank -> 2 ranks (2 ranks on 2 cores: no oversubscription); a 1-rank trace holds
            no all-reduce, so the network comes from an independent Gloo all-reduce benchmark
            run in the same repetition (ddpsim.bench.allreduce_bench, like nccl-tests)

On the testbed (--testbed RATE, root: scripts/testbed.sh): every job runs as 2 hosts (network
namespaces) joined by links shaped to RATE, a communication-bound regime (MLP 256x16, 4.2 MB of
gradients, batch 2048: forward + backward, ~0.15 s, about as long as the gradients take over
200 Mbit/s, so caps 0.25..25 MiB move the iteration by ~25 %):
  bucket    baseline cap 25 MiB (1 bucket) -> caps 0.25, 0.5, 1, 2 MiB (16, 8, 4, 2 buckets)
  slowdown  baseline cap 1 MiB (4 buckets) -> rank 1's compute x 1.25, 1.5, 2, 3
  world     2 hosts x 1 rank -> 2 hosts x 2 ranks, predicted on ddp-sim's two-level platform:
            the inter-node link from the network method, the intra-node one (the host's
            loopback) from a Gloo all-reduce benchmark run in the same repetition; 4 ranks then
            share the 2 cores: each method is also predicted with every rank's compute
            stretched by the ranks per core ("+cpu-share", see cpu_share)
  scaleout  1 host x 2 ranks -> 2 hosts x 2 ranks (opt-in: --families scaleout), the same
            platform; the inter-node link only from the told rate (the baseline never used it)
and the network methods are "trace" (calibrated from the baseline) and "told" (the rate the
testbed was told, RATE/8 bytes/s, no latency).

Writes OUT/whatif.csv (one row per prediction and compute mode, appended as each repetition
ends, so a failure loses nothing measured) and OUT/summary.json, and prints
a table: median and p90 |error| per family and mode, and how often the measured value fell inside
the prediction's Monte Carlo interval. Standard library only; needs ddp-launch, ddp-train,
ddp-trace and ddp-sim.

    python -m ddpsim.bench.validate_whatif [--reps 5] [--families bucket,slowdown] [--out DIR] [--resume]

--resume reuses the measured traces already in OUT (a run cut short is completed, not redone).
"""
import argparse
import csv
import json
import os
import re
import statistics
import sys

from ddpsim.bench import bench_jobs
from ddpsim.bench.bench_jobs import ROOT
from ddpsim.stats import quantile

TORCH_PYTHON = os.environ.get("DDPSIM_TORCH_PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))

# Measured with ddp-train on this 2-core machine: at batch 8 a 2048-wide MLP spends most of an
# iteration in its 64 MiB of all-reduces, so the bucket cap moves iteration time; at batch 64 a
# 1024-wide MLP is compute-bound, so a slowed rank shows.
COMM_HEAVY = ["--model", "mlp", "--width", "2048", "--depth", "4", "--batch-size", "8"]
COMPUTE_HEAVY = ["--model", "mlp", "--width", "1024", "--depth", "4", "--batch-size", "64"]
# On the testbed at 200 Mbit/s: 16 layers of 256 KiB gradients; compute takes about as long as
# the 4.2 MB take over the link (~0.17 s), so overlap (the bucket cap) and a slowed rank both
# show. At batch 256 compute was ~40 ms and the caps moved the iteration by only 10-18 %.
COMM_BOUND = ["--model", "mlp", "--width", "256", "--depth", "16", "--batch-size", "2048"]
# The loopback between two ranks of one testbed host, for the two-level platform: measured by
# the benchmark of the same repetition (its beta), never the shaped link.
TWO_LEVEL = ["--platform", "two-level", "--gpus-per-node", "2", "--intra-latency", "0"]


def cap(c):
    """ddp-train and ddp-sim flags for bucket cap c MiB, the first bucket's cap included."""
    return ["--bucket-cap-mb", c, "--first-bucket-cap-mb", c]


def testbed_configs(name):
    """As family_configs, on the testbed; ranks = (hosts, ranks per host)."""
    if name == "bucket":
        return [("cap25", COMM_BOUND + cap("25"), [], (2, 1))] + [
            (f"cap{c}", COMM_BOUND + cap(c), cap(c), (2, 1)) for c in ("0.25", "0.5", "1", "2")]
    if name == "slowdown":
        base = COMM_BOUND + cap("1")
        return [("x1", base, [], (2, 1))] + [
            (f"x{f}", base + ["--slowdown", f"1={f}"], ["--slowdown", f"1={f}"], (2, 1))
            for f in ("1.25", "1.5", "2", "3")]
    if name == "delay":
        base = COMM_BOUND + cap("1")
        dist = "1=exp:100"
        return [("none", base, [], (2, 1)),
                ("exp100", base + ["--delay-dist", dist], ["--delay-dist", dist], (2, 1))]
    if name == "world":
        base = COMM_BOUND + cap("1")
        return [("2x1", base, [], (2, 1)), ("2x2", base, ["--world-size", "4", *TWO_LEVEL], (2, 2))]
    if name == "scaleout":
        # One node of 2 ranks -> 2 nodes: the baseline never crossed the slow link, so only the
        # told rate can describe it (the "trace" network is the node's loopback).
        base = COMM_BOUND + cap("1")
        return [("1x2", base, [], (1, 2)), ("2x2", base, ["--world-size", "4", *TWO_LEVEL], (2, 2))]
    sys.exit(f"validate_whatif.py: --families: expected bucket, slowdown, delay, world or scaleout, got {name}")


def family_configs(name):
    """[(label, ddp-train flags, ddp-sim what-if flags, ranks)]; the first is the baseline."""
    if name == "bucket":
        base = COMM_HEAVY + ["--bucket-cap-mb", "25"]
        return [("cap25", base, [], 2)] + [
            (f"cap{c}", COMM_HEAVY + ["--bucket-cap-mb", c], ["--bucket-cap-mb", c], 2)
            for c in ("0.25", "1", "5", "100")]
    if name == "slowdown":
        return [("x1", COMPUTE_HEAVY, [], 2)] + [
            (f"x{f}", COMPUTE_HEAVY + ["--slowdown", f"1={f}"], ["--slowdown", f"1={f}"], 2)
            for f in ("1.25", "1.5", "2", "3")]
    if name == "delay":
        dist = "1=exp:20"
        return [("none", COMPUTE_HEAVY, [], 2),
                ("exp20", COMPUTE_HEAVY + ["--delay-dist", dist], ["--delay-dist", dist], 2)]
    if name == "world":
        return [("w1", COMPUTE_HEAVY, [], 1), ("w2", COMPUTE_HEAVY, ["--world-size", "2"], 2)]
    sys.exit(f"validate_whatif.py: --families: expected bucket, slowdown, delay or world, got {name}")


def run(cmd, **kwargs):
    return bench_jobs.run("validate_whatif.py", cmd, **kwargs)


def world_of(ranks):
    return ranks[0] * ranks[1] if isinstance(ranks, tuple) else ranks


def measure(bin_dir, trace, flags, ranks, iterations, seed, resume=False, testbed=None):
    """One real job. ranks: a count (loopback, one machine) or (hosts, ranks per host) on the
    testbed at rate `testbed`."""
    if resume and os.path.exists(os.path.join(trace, f"rank-{world_of(ranks) - 1}.meta.json")):
        return json.loads(run([f"{bin_dir}/ddp-trace", "summary", "--json", trace]))
    train = [f"{bin_dir}/ddp-train", *flags, "--iterations", str(iterations), "--threads", "1",
             "--seed", str(seed), "--quiet", "--trace-dir", trace]
    if testbed:
        hosts, per_host = ranks
        run([os.path.join(ROOT, "scripts", "testbed.sh"), "--quiet", "--hosts", str(hosts),
             "--ranks-per-host", str(per_host), "--rate", testbed, "--timeout", "600", "--",
             f"{bin_dir}/ddp-launch", "--nnodes", "{hosts}", "--node-rank", "{host}",
             "--nproc-per-node", "{ranks}", "--master-addr", "{master}", "--master-port", "29500",
             "--", *train])
    else:
        run([f"{bin_dir}/ddp-launch", "--nproc-per-node", str(ranks), "--master-port", "0", "--",
             *train])
    return json.loads(run([f"{bin_dir}/ddp-trace", "summary", "--json", trace]))


def cpu_share():
    """The testbed's hosts are namespaces of one machine: all ranks share its cores. ddp-sim's
    --cores N stretches every rank's compute by (ranks per core in the what-if) / (ranks per
    core in the baseline), at least 1 (2x1 -> 2x2 on 2 cores: x2); see shared_cores_stretch in
    simulator/include/ddpsim/sim/workload_model.hpp for what the uniform model leaves out."""
    return ["--cores", str(os.cpu_count() or 1)]


def told_network(rate):
    """--bandwidth/--latency from the rate the testbed was told (tc units, e.g. 200mbit)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit)", rate)
    if not m:
        sys.exit(f"validate_whatif.py: --testbed: expected a rate like 200mbit, got {rate}")
    bits = float(m[1]) * {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[m[2]]
    return ["--bandwidth", repr(bits / 8), "--latency", "0"]


def iteration_times(summary):
    return [it["time_s"] for it in summary["iterations"] if it.get("iteration", 1) > 0]


def network_benchmark(out_json, resume=False):
    """A Gloo all-reduce benchmark on this machine's loopback, not from any trace: (alpha_s,
    beta_bytes_per_s)."""
    if not (resume and os.path.exists(out_json)):
        run([TORCH_PYTHON, os.path.join(ROOT, "python", "ddpsim", "bench", "allreduce_bench.py"),
             "--out", out_json, "--world-size", "2"])
    with open(out_json) as f:
        bench = json.load(f)
    return bench["alpha_s"], bench["beta_bytes_per_s"]


def predict(bin_dir, trace, whatif, mode, runs, out_json):
    cmd = [f"{bin_dir}/ddp-sim", "replay", trace, "--compute", mode, "--json", out_json, *whatif]
    if runs > 1:
        # Run 0 is the prediction; the others resample the baseline's iterations (its interval).
        cmd += ["--runs", str(runs), "--seed", "7", "--bootstrap"]
    run(cmd)
    if not os.path.exists(out_json):
        sys.exit(f"validate_whatif.py: {out_json}: expected ddp-sim's JSON report, got none")
    with open(out_json) as f:
        return json.load(f)


def ks_distance(a, b):
    """Two-sample Kolmogorov-Smirnov statistic: the largest gap between the empirical CDFs."""
    a, b = sorted(a), sorted(b)
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        x = min(a[i], b[j])
        while i < len(a) and a[i] <= x:
            i += 1
        while j < len(b) and b[j] <= x:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    return d


def append_rows(path, rows):
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        if new:
            w.writeheader()
        w.writerows(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--families", help="default: bucket,slowdown,delay,world (testbed: no delay)")
    ap.add_argument("--modes", default="per-iteration,median")
    ap.add_argument("--networks",
                    help="trace: calibrate from the baseline trace; bench: an all-reduce "
                         "benchmark; told: the testbed's rate (default trace,bench; testbed: "
                         "trace,told)")
    ap.add_argument("--testbed", metavar="RATE",
                    help="run every job as 2 hosts of scripts/testbed.sh at RATE (root)")
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "release", "bin"))
    ap.add_argument("--out", help="default results/whatif (testbed: results/whatif-testbed)")
    ap.add_argument("--bootstrap-runs", type=int, default=21,
                    help="replays per prediction: 1 + resampled ones for its 90 %% interval "
                         "(1: no interval)")
    ap.add_argument("--resume", action="store_true",
                    help="reuse measured traces (and benchmarks) already in --out")
    args = ap.parse_args()
    tb = args.testbed
    args.families = args.families or ("bucket,slowdown,world" if tb else "bucket,slowdown,delay,world")
    args.networks = args.networks or ("trace,told" if tb else "trace,bench")
    args.out = args.out or os.path.join(ROOT, "results", "whatif-testbed" if tb else "whatif")
    modes = args.modes.split(",")
    networks = args.networks.split(",")
    for net in networks:
        if net not in ("trace", "bench", "told") or (net == "told" and not tb):
            sys.exit(f"validate_whatif.py: --networks: expected trace, bench{', told' if tb else ''}"
                     f", got {net}")
    told = told_network(tb) if tb else []
    os.makedirs(args.out, exist_ok=True)
    csv_path = os.path.join(args.out, "whatif.csv")
    if os.path.exists(csv_path):
        os.remove(csv_path)  # rewritten from the traces, which are what a resume keeps
    rows = []
    dist_rows = []
    for family in args.families.split(","):
        configs = testbed_configs(family) if tb else family_configs(family)
        for rep in range(args.reps):
            order = configs[rep % len(configs):] + configs[:rep % len(configs)]
            measured = {}
            for label, flags, _, ranks in order:
                trace = os.path.join(args.out, "traces", f"{family}-{label}-rep{rep}")
                measured[label] = (trace, measure(args.bin_dir, trace, flags, ranks,
                                                  args.iterations, rep, args.resume, tb))
                print(f"{family} rep {rep} {label}: measured "
                      f"{measured[label][1]['median_iteration_s'] * 1e3:.2f} ms", flush=True)
            base_label = configs[0][0]
            base_trace = measured[base_label][0]
            # The network: calibrated from the baseline trace itself ("trace"), from a Gloo
            # all-reduce benchmark run in this repetition ("bench", like nccl-tests), or the
            # rate the testbed was told ("told"). A 1-rank baseline has no all-reduce, so the
            # loopback world family predicts with the benchmark only. On the testbed the
            # benchmark measures the hosts' loopback: the two-level platform's intra-node link.
            need_bench = "bench" in networks or (tb and family in ("world", "scaleout"))
            alpha, beta = (network_benchmark(
                os.path.join(args.out, "traces", f"network-rep{rep}.json"), args.resume)
                if need_bench else (None, None))
            net_flags = {"trace": [], "told": told,
                         "bench": ["--latency", repr(alpha), "--bandwidth", repr(beta)]}
            first_row = len(rows)
            for label, _, whatif, ranks in configs:
                kind = "reconstruction" if label == base_label else "prediction"
                m = measured[label][1]["median_iteration_s"]
                variants = [(net, "") for net in networks]
                if tb and family in ("world", "scaleout") and kind == "prediction":
                    variants += [(net, "+cpu-share") for net in networks]
                for net, variant in variants:
                    if net == "trace" and family == "world" and kind == "prediction" and not tb:
                        continue
                    if net == "trace" and family == "scaleout" and kind == "prediction":
                        continue
                    for mode in modes:
                        method = f"{mode}/{net}{variant}"
                        pj = os.path.join(args.out, "predictions",
                                          f"{family}-{label}-rep{rep}-{mode}-{net}{variant}.json")
                        os.makedirs(os.path.dirname(pj), exist_ok=True)
                        flags = whatif + net_flags[net]
                        if "two-level" in whatif:
                            flags += ["--intra-bandwidth", repr(beta)]
                        if variant:
                            flags += cpu_share()
                        report = predict(args.bin_dir, base_trace, flags, mode,
                                         args.bootstrap_runs, pj)
                        p = report["predicted"]
                        # The interval of the predicted median, where the replay reports one.
                        lo, hi = report.get("interval", {}).get("median_iteration_s", [None, None])
                        pred = p["median_iteration_s"]
                        rows.append({"where": f"testbed:{tb}" if tb else "loopback",
                                     "family": family, "config": label, "kind": kind, "rep": rep,
                                     "mode": method, "measured_s": m, "predicted_s": pred,
                                     "error": pred / m - 1, "interval_lo_s": lo,
                                     "interval_hi_s": hi,
                                     "inside": "" if lo is None else int(lo <= m <= hi)})
                        if family == "delay" and kind == "prediction":
                            meas_t = iteration_times(measured[label][1])
                            pred_t = [it["time_s"] for it in p["iterations"]]
                            dist_rows.append({"rep": rep, "mode": method,
                                              "ks": ks_distance(meas_t, pred_t),
                                              **{f"{q}_err": quantile(pred_t, v) /
                                                 quantile(meas_t, v) - 1
                                                 for q, v in (("p50", .5), ("p90", .9),
                                                              ("p99", .99))}})
                mine = [r for r in rows[first_row:] if r["config"] == label]
                print(f"  {family} {label} ({kind}): measured {m * 1e3:.2f} ms; " + ", ".join(
                    f"{r['mode']} {r['error']:+.1%}" for r in mine), flush=True)
            append_rows(csv_path, rows[first_row:])
    summary = {}
    print(f"\n{'family':<10} {'kind':<15} {'method':<20} {'n':>3} {'median|err|':>11} "
          f"{'p90|err|':>9} {'max|err|':>9} {'median err':>10} {'in interval':>11}")
    groups = sorted({(r["family"], r["kind"], r["mode"]) for r in rows})
    methods = sorted({r["mode"] for r in rows})
    groups += [("all", "prediction", method) for method in methods]
    for family, kind, mode in groups:
        sel = [r for r in rows if (family == "all" or r["family"] == family)
               and r["kind"] == kind and r["mode"] == mode]
        if not sel:
            continue
        e = [abs(r["error"]) for r in sel]
        s = {"n": len(sel), "median_abs_error": statistics.median(e),
             "p90_abs_error": quantile(e, .9), "max_abs_error": max(e),
             "median_error": statistics.median([r["error"] for r in sel]),
             "inside_interval": (sum(r["inside"] for r in sel if r["inside"] != "") /
                                 max(1, sum(1 for r in sel if r["inside"] != "")))}
        summary[f"{family}/{kind}/{mode}"] = s
        print(f"{family:<10} {kind:<15} {mode:<20} {s['n']:>3} {s['median_abs_error']:>11.1%} "
              f"{s['p90_abs_error']:>9.1%} {s['max_abs_error']:>9.1%} {s['median_error']:>+10.1%} "
              f"{s['inside_interval']:>11.0%}")
    for mode in methods:
        sel = [d for d in dist_rows if d["mode"] == mode]
        if sel:
            s = {k: statistics.median([d[k] for d in sel]) for k in ("ks", "p50_err", "p90_err", "p99_err")}
            summary[f"delay-distribution/{mode}"] = s
            print(f"delay distribution ({mode}): median KS {s['ks']:.3f}, p50 {s['p50_err']:+.1%}, "
                  f"p90 {s['p90_err']:+.1%}, p99 {s['p99_err']:+.1%}")
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"args": vars(args), "summary": summary, "delay_distribution": dist_rows}, f, indent=1)


if __name__ == "__main__":
    main()
