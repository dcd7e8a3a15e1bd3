"""How close is the default `ddp-sim replay` of the demo's own trace? (issue 16: within 5 %)

Runs scripts/demo.sh REPS times (each a fresh 2-rank convnet job, traced, then replayed with
the defaults: network calibrated from the trace, --compute per-iteration) and writes the
median iteration time measured and predicted per run, the error, and their median and range.
This is a reconstruction (the run replayed at its own configuration), not a what-if.

    python -m ddpsim.bench.demo_replay [--reps 5] [--out results/demo-replay.json]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

from ddpsim.bench.bench_jobs import ROOT
from ddpsim.stats import relative_error  # the one definition of the error


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "demo-replay.json"))
    args = ap.parse_args()
    if args.reps < 1:
        sys.exit(f"demo_replay.py: --reps: expected a positive count, got {args.reps}")
    work = os.path.join(os.path.dirname(os.path.abspath(args.out)), "demo-replay-runs")
    runs = []
    for rep in range(args.reps):
        folder = os.path.join(work, f"rep{rep}")
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo.sh")], check=True, cwd=ROOT,
                       env={**os.environ, "DEMO_OUT": folder}, stdout=subprocess.DEVNULL)
        with open(os.path.join(folder, "predicted.json")) as handle:
            report = json.load(handle)
        measured = report["measured"]["median_iteration_s"]
        predicted = report["predicted"]["median_iteration_s"]
        runs.append({"rep": rep, "measured_iter_s": measured, "predicted_iter_s": predicted,
                     "error_pct": 100 * relative_error(predicted, measured)})
        print(f"rep {rep}: measured {measured:.6f} s, predicted {predicted:.6f} s, "
              f"error {runs[-1]['error_pct']:+.2f} %", flush=True)
    errors = [r["error_pct"] for r in runs]
    result = {"what": "default ddp-sim replay of scripts/demo.sh's trace (reconstruction)", "runs": runs,
              "median_error_pct": statistics.median(errors), "min_error_pct": min(errors),
              "max_error_pct": max(errors),
              "within_5_pct": sum(abs(e) <= 5 for e in errors)}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(result, handle, indent=2)
    print(f"median error {result['median_error_pct']:+.2f} % (range {min(errors):+.2f} … {max(errors):+.2f} %), "
          f"{result['within_5_pct']} of {len(errors)} within 5 %; wrote {args.out}")


if __name__ == "__main__":
    main()
