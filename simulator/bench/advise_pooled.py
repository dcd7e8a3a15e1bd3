#!/usr/bin/env python3
"""advise_pooled.py: is `ddp-sim advise`'s bucket cap right, from one baseline run or from all of them?

  simulator/bench/advise_pooled.py RESULTS/NAME [RESULTS/NAME ...] [--baseline cap25] [--json OUT.json]
      [--bin-dir build/release/bin]

For ddp-experiment results folders of a bucket-cap spec (whatif-bucket.toml,
whatif-testbed-bucket.toml: traces/capC-repR and summary.csv): each repetition's baseline run
(--baseline, the point name) is advised over the folder's caps twice: alone, and with the
other repetitions' baseline runs as `--repeats ... --pool` (one run at the machine's typical
speed). The advised cap is scored against what was measured: the median over repetitions of
each cap's measured median iteration, as the best cap's throughput over the advised one's (1:
the best). Caps that give one bucket layout are told apart only by noise, so "within 3 %" counts
too. Nothing is measured. Standard library only. Bad input: one line on stderr, exit 2.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_folder import InputError, arguments, read_summary, write_json  # noqa: E402


def advised_cap(bin_dir, trace, caps, extra, scratch):
    out = os.path.join(scratch, "advice.json")
    done = subprocess.run([os.path.join(bin_dir, "ddp-sim"), "advise", trace, "--bucket-caps", ",".join(caps),
                           "--runs", "11", "--json", out, *extra], capture_output=True, text=True)
    if done.returncode != 0:
        raise InputError(f"{trace}: ddp-sim advise failed: {done.stderr.strip()}")
    with open(out) as handle:
        bucket = json.load(handle)["bucket"]
    return f"cap{bucket['recommended_bucket_cap_mb']:g}", bucket["keep"]


def folder_rows(bin_dir, folder, baseline, scratch):
    rows = [r for r in read_summary(folder, {"kind", "point", "rep", "measured_iter_s", "trace_dir"}) if r["kind"] == "reconstruction"]
    measured = {}
    for row in rows:
        if row["point"].startswith("cap") and row["measured_iter_s"]:
            measured.setdefault(row["point"], []).append(float(row["measured_iter_s"]))
    if baseline not in measured:
        raise InputError(f"{folder}: expected measured runs of --baseline {baseline}, got points {', '.join(sorted(measured)) or 'none'}")
    median_s = {point: statistics.median(times) for point, times in measured.items()}
    best = min(median_s, key=median_s.get)
    caps = sorted((point[len("cap"):] for point in median_s), key=float)
    traces = {int(r["rep"]): os.path.join(folder, r["trace_dir"]) for r in rows if r["point"] == baseline}
    traces = {rep: path for rep, path in sorted(traces.items()) if os.path.isdir(path)}
    if len(traces) < 2:
        raise InputError(f"{folder}: expected at least 2 baseline traces ({baseline}-repR) to pool, got {len(traces)}")
    out = []
    for rep, trace in traces.items():
        others = [path for other, path in traces.items() if other != rep]
        for mode, extra in (("single", []), ("pooled", ["--repeats", *others, "--pool"])):
            cap, keep = advised_cap(bin_dir, trace, caps, extra, scratch)
            ratio = median_s[best] / median_s[cap] if cap in median_s else None
            out.append({"folder": folder, "rep": rep, "mode": mode, "advised": cap, "keep": keep, "best_measured": best,
                        "throughput_vs_best": ratio})
    return median_s, out


def main(argv):
    try:
        args = arguments(__doc__, argv, bin_dir=True,
                         options=(("--baseline", {"default": "cap25", "help": "the advised point (default cap25)"}),))
        results = {"folders": {}, "rows": []}
        with tempfile.TemporaryDirectory(prefix="advise-pooled-") as scratch:
            for folder in args.folders:
                median_s, rows = folder_rows(args.bin_dir, folder, args.baseline, scratch)
                results["folders"][folder] = {p: round(v, 6) for p, v in median_s.items()}
                results["rows"].extend(rows)
    except InputError as error:
        print(f"advise_pooled.py: {error}", file=sys.stderr)
        return 2
    print(f"{'folder':40s} {'mode':7s} {'advice':>6s}  within 3 %  mean best/advised  kept {args.baseline}")
    summary = {}
    for folder in list(args.folders) + ["all"]:
        for mode in ("single", "pooled"):
            rows = [r for r in results["rows"] if r["mode"] == mode and folder in ("all", r["folder"])]
            ratios = [r["throughput_vs_best"] for r in rows if r["throughput_vs_best"] is not None]
            within = sum(1 for x in ratios if x >= 0.97)
            kept = sum(1 for r in rows if r["advised"] == args.baseline)
            mean = statistics.mean(ratios) if ratios else float("nan")
            summary[f"{folder}:{mode}"] = {"advice": len(rows), "within_3pct": within, "mean_ratio": mean, "kept": kept}
            name = os.path.join(*folder.rstrip("/").split("/")[-2:]) if folder != "all" else folder
            print(f"{name[-40:]:40s} {mode:7s} {len(rows):6d}  {within:10d}  {mean:17.3f}  {kept:4d}")
    results["summary"] = summary
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
