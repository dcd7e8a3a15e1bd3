"""sleep_resume_cost.py: what a rank slowed by ddp-train --slowdown pays resuming after each sleep.

  ddpsim-sleep-resume-cost --out OUT.json [--factor 3] [--repetitions 3]
      [--iterations 40] [--bin-dir build/release/bin] -- DDP_TRAIN_ARGS...

One rank alone (ddp-launch --nproc-per-node 1), no peer: per repetition, interleaved, a run as
it is (A) and one with --slowdown 0=FACTOR (B). Per run, the median over iterations 2.. of the
compute of forward + autograd + the optimizer step with the slowdown's sleeps cut out
(stall_phases.compute_spans) and of the sleeps per iteration. Per pair, the resume cost is
(compute B - compute A) / sleeps B per iteration: the compute the slowed rank spends more than
the same rank unslowed, per sleep. The JSON has every pair and their median and range; the
median is what a lone rank pays; a rank beside a peer pays another amount, which the 2-rank
what-if specs fit on their own sittings (docs/validation.md names the record:
"Compute paced on the shared cores"). ddp-experiment's [predict] resume_profile runs one pair
(--repetitions 1) before each repetition of a spec and pools them (experiments/README.md). A and B run on the same machine in
turn, so a CPU-speed change moves both of a pair alike only if it is slower than a run.
Bad input: one line on stderr, exit 2; a failed run: its log's path, exit 1.
"""
import argparse
import json
import os
import statistics
import sys

from ddpsim.bench.bench_jobs import (add_job_arguments, add_run_counts, failure_status, launch, run_counts_error,
                                     setup_error, trace_root)
from ddpsim.bench.stall_phases import iteration_compute


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--factor", type=float, default=3.0, help="the slowdown of the B runs (default 3)")
    add_run_counts(parser, 3, 40, "A/B pairs")
    add_job_arguments(parser, "ddp-launch and ddp-train")
    args = parser.parse_args(argv)
    if not args.factor > 1:
        print(f"sleep_resume_cost.py: --factor: expected a slowdown > 1, got {args.factor}", file=sys.stderr)
        return 2
    refusal = (run_counts_error("sleep_resume_cost.py", args, 8)
               or setup_error("sleep_resume_cost.py", args.bin_dir, ("ddp-launch", "ddp-train"), args.out))
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    root = trace_root(args.keep, "sleep-resume-")
    common = ["--iterations", str(args.iterations), *args.train_args]
    pairs = []

    def measure():
        for rep in range(args.repetitions):
            measured = {}
            for side, extra in (("A", []), ("B", ["--slowdown", f"0={args.factor:g}"])):
                trace_dir = os.path.join(root, f"{side}-rep{rep}")
                launch(args.bin_dir, trace_dir, common + extra)
                measured[side] = iteration_compute(trace_dir)
            (compute_a, _), (compute_b, sleeps_b) = measured["A"], measured["B"]
            pairs.append({"rep": rep, "compute_ms_A": compute_a, "compute_ms_B": compute_b, "sleeps_per_iteration": sleeps_b,
                          "resume_cost_ms": (compute_b - compute_a) / sleeps_b})
            print(f"rep {rep}: compute {compute_a:.3f} -> {compute_b:.3f} ms over {sleeps_b:g} sleeps: "
                  f"{pairs[-1]['resume_cost_ms']:.4f} ms per sleep", flush=True)

    status = failure_status("sleep_resume_cost.py", measure)
    if status is not None:
        return status
    costs = [pair["resume_cost_ms"] for pair in pairs]
    result = {"train_args": args.train_args, "factor": args.factor, "iterations": args.iterations, "pairs": pairs,
              "resume_cost_ms_median": statistics.median(costs), "resume_cost_ms_min": min(costs),
              "resume_cost_ms_max": max(costs)}
    with open(args.out, "w") as handle:
        json.dump(result, handle, indent=1)
    print(f"resume cost: median {result['resume_cost_ms_median']:.4f} ms per sleep "
          f"[{min(costs):.4f}, {max(costs):.4f}] over {len(costs)} pairs; --sleep-resume-cost "
          f"{result['resume_cost_ms_median'] / 1e3:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
