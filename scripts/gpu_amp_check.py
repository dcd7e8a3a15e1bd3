#!/usr/bin/env python3
"""gpu_amp_check.py: ddp-train's mixed precision where it matters, on a GPU, checked.

  scripts/gpu_amp_check.py --out OUT_DIR [--bin-dir build/gpu/bin] [--backend nccl]

--amp fp16 runs only on CUDA, so CI (no GPU) never runs it; tests/runtime/amp_eval_test.cpp
checks bf16 on the CPU. This runs the same checks, 1 rank (NCCL refuses two on one GPU), for
every precision the backend allows (nccl: fp32, bf16, fp16; gloo: fp32, bf16, which is how the
script itself is tested without a GPU):
  1. trains: 60 steps of the test MLP (32 wide, 2 deep, batch 16), the last batch's loss within
     0.05 of fp32's, fp32 below 1.5 (it trained), the parameters not fp32's (autocast ran);
  2. the loss scale: every step the trace records as skipped (a non-finite gradient) halves the
     scale the next step uses, every step taken keeps it (growth comes after 2000);
  3. float32 gradients on the wire, as without AMP (the all-reduce's bytes);
  4. an injected inf (--inject-inf-at 3, scale 16384) skips that step: the parameters are those
     of 3 steps, which a 4th step would have moved, and the scale halves;
  5. --eval-every 20 prints an accuracy in [0, 1], within 0.05 of fp32's;
  6. no run exits with its NCCL group still up (ProcessGroupNCCL's "destroy_process_group() was
     not called" warning, which every run printed before ddp-train shut the group down).
Writes OUT_DIR/amp-check.json (every value and every check) and each run's trace and log under
OUT_DIR; exit 0 when every check passed, 1 when one failed, 2 on bad input (one line).
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

UNSHUT_GROUP = "destroy_process_group() was not called"
unshut_runs = []  # the tags of the runs whose output had UNSHUT_GROUP

# amp_eval_test.cpp's 2 ranks x batch 8 as 1 rank x 16: the same global batch.
MODEL = ["--model", "mlp", "--width", "32", "--depth", "2", "--batch-size", "16", "--dataset-size", "1000"]
LOSS_TOLERANCE = 0.05
ACCURACY_TOLERANCE = 0.05


def run(args, out, tag, extra):
    """One 1-rank ddp-train job; its trace in OUT/TAG, its output in OUT/TAG.log; the output."""
    trace = os.path.join(out, tag)
    command = [os.path.join(args.bin_dir, "ddp-launch"), "--nproc-per-node", "1", "--master-port", "0", "--",
               os.path.join(args.bin_dir, "ddp-train"), "--backend", args.backend, *MODEL,
               "--trace-dir", trace, *extra]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(trace + ".log", "w") as log:
        log.write(" ".join(command) + "\n" + result.stdout)
    if result.returncode != 0:
        raise RuntimeError(f"{trace}.log: {tag} exited {result.returncode}")
    if UNSHUT_GROUP in result.stdout:
        unshut_runs.append(tag)
    return result.stdout


def final_loss(output, tag):
    match = re.search(r"done: .* loss ([0-9.eE+-]+|nan|inf)", output)
    if not match:
        raise RuntimeError(f"{tag}: no closing line with a loss")
    return float(match.group(1))


def accuracy(output):
    found = re.findall(r"accuracy ([0-9.]+)", output)
    return float(found[-1]) if found else None


def read_dump(path):
    """{name: [values]} of a --dump-params file."""
    values = {}
    with open(path) as handle:
        for line in handle:
            fields = line.split()
            values[fields[0] + fields[1] + fields[2]] = [float(v) for v in fields[4:]]
    return values


def max_difference(a, b):
    if a.keys() != b.keys():
        return float("inf")
    return max(abs(x - y) for name in a for x, y in zip(a[name], b[name]))


def events(trace, event):
    with open(os.path.join(trace, "rank-0.events.csv")) as handle:
        return [row for row in csv.DictReader(handle) if row["event"] == event]


def scale_steps(trace):
    """[(iteration, kind, scale)] of every optimizer step, in order."""
    return [(int(row["iteration"]), row["kind"], float(row["message"])) for row in events(trace, "optimizer_end")]


def scale_follows_skips(steps):
    """True when each skip halves the next step's scale and each step taken keeps it."""
    for (_, kind, scale), (_, _, following) in zip(steps, steps[1:]):
        if following != (scale / 2 if kind == "skipped" else scale):
            return False
    return True


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder for the runs and amp-check.json")
    parser.add_argument("--bin-dir", default="build/gpu/bin", help="holding ddp-launch and ddp-train")
    parser.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    args = parser.parse_args(argv)
    for tool in ("ddp-launch", "ddp-train"):
        if not os.access(os.path.join(args.bin_dir, tool), os.X_OK):
            print(f"--bin-dir: expected a folder holding {tool}, got {args.bin_dir}", file=sys.stderr)
            return 2
    os.makedirs(args.out, exist_ok=True)
    precisions = ["bf16", "fp16"] if args.backend == "nccl" else ["bf16"]
    checks, values = {}, {}
    train = ["--iterations", "60", "--lr", "0.05", "--eval-every", "20"]

    def dump(tag):
        return ["--dump-params", os.path.join(args.out, tag + ".params")]

    fp32_out = run(args, args.out, "fp32", train + dump("fp32"))
    values["fp32_loss"] = final_loss(fp32_out, "fp32")
    values["fp32_accuracy"] = accuracy(fp32_out)
    checks["fp32 trained (loss < 1.5)"] = values["fp32_loss"] < 1.5
    fp32_params = read_dump(os.path.join(args.out, "fp32.params"))
    fp32_bytes = [int(r["bytes"]) for r in events(os.path.join(args.out, "fp32"), "allreduce_begin")]

    for amp in precisions:
        out = run(args, args.out, amp, train + ["--amp", amp] + dump(amp))
        trace = os.path.join(args.out, amp)
        loss, acc = final_loss(out, amp), accuracy(out)
        steps = scale_steps(trace)
        values[amp] = {"loss": loss, "accuracy": acc, "steps": len(steps),
                       "skipped": [it for it, kind, _ in steps if kind == "skipped"],
                       "final_scale": steps[-1][2] if steps else None}
        checks[f"{amp}: loss within {LOSS_TOLERANCE} of fp32"] = abs(loss - values["fp32_loss"]) <= LOSS_TOLERANCE
        checks[f"{amp}: parameters not fp32's (autocast ran)"] = \
            max_difference(read_dump(os.path.join(args.out, amp + ".params")), fp32_params) > 0
        checks[f"{amp}: 60 optimizer steps recorded"] = len(steps) == 60
        checks[f"{amp}: each skip halves the scale, each step keeps it"] = scale_follows_skips(steps)
        checks[f"{amp}: float32 gradients on the wire"] = \
            [int(r["bytes"]) for r in events(trace, "allreduce_begin")] == fp32_bytes
        checks[f"{amp}: accuracy in [0, 1], within {ACCURACY_TOLERANCE} of fp32's"] = (
            acc is not None and values["fp32_accuracy"] is not None and 0 <= acc <= 1
            and abs(acc - values["fp32_accuracy"]) <= ACCURACY_TOLERANCE)

        scaled = ["--amp", amp, "--loss-scale-init", "16384"]
        run(args, args.out, amp + "-inf", scaled + ["--iterations", "4", "--inject-inf-at", "3"] + dump(amp + "-inf"))
        run(args, args.out, amp + "-three", scaled + ["--iterations", "3", "--no-trace"] + dump(amp + "-three"))
        run(args, args.out, amp + "-four", scaled + ["--iterations", "4", "--no-trace"] + dump(amp + "-four"))
        skipped = read_dump(os.path.join(args.out, amp + "-inf.params"))
        inf_steps = scale_steps(os.path.join(args.out, amp + "-inf"))
        values[amp]["inf_steps"] = inf_steps
        checks[f"{amp} inf: parameters those of 3 steps"] = \
            max_difference(skipped, read_dump(os.path.join(args.out, amp + "-three.params"))) == 0
        checks[f"{amp} inf: a 4th step would have moved them"] = \
            max_difference(skipped, read_dump(os.path.join(args.out, amp + "-four.params"))) > 1e-6
        checks[f"{amp} inf: only step 3 skipped, at scale 16384"] = \
            [(it, kind) for it, kind, _ in inf_steps] == [(0, "stepped"), (1, "stepped"), (2, "stepped"),
                                                         (3, "skipped")] and inf_steps[3][2] == 16384

    values["unshut_runs"] = unshut_runs
    checks["every run shut its process group down"] = not unshut_runs
    report = {"backend": args.backend, "model": MODEL, "values": values,
              "checks": checks, "passed": all(checks.values())}
    with open(os.path.join(args.out, "amp-check.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(json.dumps(values))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except RuntimeError as error:
        print(error, file=sys.stderr)
        sys.exit(1)
