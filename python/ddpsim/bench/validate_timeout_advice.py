"""Does `ddp-sim advise`'s timeout hold on real runs? (issue 17, third check; 2 Gloo ranks)

  1. a baseline job (no stall, the default 30-minute timeout) is traced and advised: the
     timeout T and the predicted time to detect a hang D;
  2. --survive jobs run with `ddp-train --timeout T` and no stall: every one must finish;
  3. --hangs jobs run with --timeout T and rank 1 stalled for 20 T at iteration 3: every one
     must fail, and the measured time to detect (rank 0's `failure` event minus rank 1's
     `delay` event, one machine's monotonic clock) is compared with D.

Writes OUT/timeout.json (default results/advise-timeout) and prints a summary. Standard
library only; needs ddp-launch, ddp-train, ddp-trace and ddp-sim (build/release/bin).

    python -m ddpsim.bench.validate_timeout_advice [--survive 5] [--hangs 3] [--out DIR]
"""
import argparse
import csv
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys

from ddpsim.bench.bench_jobs import ROOT
from ddpsim.stats import relative_error  # the one definition of the error, as in C++
WORKLOAD = ["--model", "mlp", "--width", "1024", "--depth", "4", "--batch-size", "64", "--threads", "1"]


def train(bin_dir, trace, extra, iterations, seed):
    """One 2-rank job; its exit status (a timed-out job exits non-zero)."""
    shutil.rmtree(trace, ignore_errors=True)
    cmd = [f"{bin_dir}/ddp-launch", "--nproc-per-node", "2", "--master-port", "0", "--",
           f"{bin_dir}/ddp-train", *WORKLOAD, "--iterations", str(iterations), "--seed", str(seed),
           "--quiet", "--trace-dir", trace, *extra]
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600).returncode


def events(trace, rank, kind):
    with open(os.path.join(trace, f"rank-{rank}.events.csv"), newline="") as f:
        return [e for e in csv.DictReader(f) if e["event"] == kind]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--survive", type=int, default=5)
    ap.add_argument("--hangs", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "release", "bin"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "advise-timeout"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    base = os.path.join(args.out, "baseline")
    if train(args.bin_dir, base, [], args.iterations, 0) != 0:
        sys.exit("validate_timeout_advice.py: the baseline job failed")
    advice_json = os.path.join(args.out, "advice.json")
    subprocess.run([f"{args.bin_dir}/ddp-sim", "advise", base, "--json", advice_json, "--bucket-caps", "25"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(advice_json) as f:
        advice = json.load(f)["timeout"]
    timeout_s, detect_s = advice["timeout_s"], advice["time_to_detect_s"]
    print(f"advised {advice['line']}; predicted time to detect a hang {detect_s:.3f} s", flush=True)
    flags = ["--timeout", f"{timeout_s:.6f}"]

    survived = []
    for i in range(args.survive):
        code = train(args.bin_dir, os.path.join(args.out, f"survive-{i}"), flags, args.iterations, i + 1)
        survived.append(code == 0)
        print(f"unstalled run {i}: {'finished' if code == 0 else f'FAILED (exit {code})'}", flush=True)

    hangs = []
    stall_ms = int(20 * timeout_s * 1e3)
    for i in range(args.hangs):
        trace = os.path.join(args.out, f"hang-{i}")
        code = train(args.bin_dir, trace, flags + ["--delay", f"1={stall_ms}@3"], args.iterations, i + 1)
        failures = [e for r in (0, 1) if os.path.exists(os.path.join(trace, f"rank-{r}.events.csv"))
                    for e in events(trace, r, "failure")]
        stalls = events(trace, 1, "delay") if glob.glob(os.path.join(trace, "rank-1.events.csv")) else []
        measured = None
        if failures and stalls:
            measured = (min(int(e["t_ns"]) for e in failures) - int(stalls[0]["t_ns"])) * 1e-9
        hangs.append({"exit": code, "failed": code != 0, "measured_detect_s": measured,
                      "error": measured and relative_error(detect_s, measured)})
        shown = f"{measured:.3f} s ({relative_error(detect_s, measured):+.1%})" if measured else "not recorded"
        print(f"stalled run {i}: exit {code}, measured time to detect {shown}", flush=True)

    measured = [h["measured_detect_s"] for h in hangs if h["measured_detect_s"]]
    result = {"advice": advice, "survived": survived, "hangs": hangs,
              "median_measured_detect_s": statistics.median(measured) if measured else None,
              "median_error": statistics.median([h["error"] for h in hangs if h["error"] is not None])
              if measured else None}
    with open(os.path.join(args.out, "timeout.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(f"survived {sum(survived)}/{len(survived)}; hangs detected {sum(h['failed'] for h in hangs)}/{len(hangs)}; "
          f"median error of the time to detect {result['median_error']}")


if __name__ == "__main__":
    main()
