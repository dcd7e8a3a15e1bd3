"""What-ifs on Python DDP jobs ddpsim did not write: predicted from one profile, then measured.

For each model family of runtime/peer/python_ddp.py (plain torch.nn.parallel.DistributedDataParallel,
nothing of ddpsim inside the training step) and each round of --repeats, interleaved:
  1. the baseline is profiled as a user profiles a job (torch.profiler, record_shapes=True,
     bucket_cap_mb 25) and imported with `ddp-trace import --kineto`;
  2. the baseline runs unprofiled and its median iteration time (rank 0, iteration 0 left out)
     is measured: the job's speed as a user knows it from a normal run;
  3. every changed configuration is predicted from the profile with `ddp-sim replay`
     (--machine when a machine profile is given or measured: `ddp-machine-profile`, launched
     like the job; --unprofiled-iteration-ms the baseline's time of step 2);
  4. every changed configuration (other caps; rank 1 slowed by a factor) runs unprofiled and
     is measured.
The configurations are fixed before anything is measured, and nothing is fitted to these runs:
every pair is reported. Beside the model's errors the table prints the "no change" predictor
(the same round's measured baseline taken as the answer) and the repeat floor (a measured run
taken as the prediction of the same configuration's run in the next round), and the model given
the profiled run's own steps after its window as the unprofiled time instead ("profiled steps").

Usage, from the repository root (loopback, 2 ranks):
  .venv/bin/python -m ddpsim.bench.python_jobs --out results/python-jobs
On the testbed (2 hosts; {host} {hosts} {master} are testbed.sh's placeholders):
  .venv/bin/python -m ddpsim.bench.python_jobs --out R --launcher "scripts/testbed.sh --hosts 2 --quiet -- \
      build/release/bin/ddp-launch --nnodes {hosts} --node-rank {host} --master-addr {master} \
      --master-port 29500 --"
Writes OUT/pairs.csv (one row per prediction, with the same prediction made again without each
machine parameter: WITHOUT) and OUT/table.txt; prints the table.
A model change is weighed on runs already measured: `--repredict` predicts a finished run's rounds
again with another --bin (the run's own --families, --caps, --slowdown, --repeats, --iterations),
into OUT/pairs-repredicted.csv and OUT/table-repredicted.txt; the run's files stay as they were.
"""
import argparse
import csv
import json
import os
import shlex
import statistics
import subprocess
import sys

from ddpsim import InputError
from ddpsim.bench.bench_jobs import ROOT

PEER = os.path.join(ROOT, "runtime", "peer", "python_ddp.py")
BASELINE_CAP = 25.0
# name -> python_ddp.py arguments: sizes that run in well under a second per iteration on 2 cores.
FAMILIES = {
    "mlp": ["--model", "mlp", "--width", "1024", "--depth", "4", "--batch-size", "32"],
    "cnn": ["--model", "cnn", "--width", "256", "--depth", "4", "--batch-size", "16"],
    "transformer": ["--model", "transformer", "--width", "256", "--depth", "4", "--batch-size", "8"],
    # Not in the default --families (the reported suite's three): a recurrent job, checked apart.
    "rnn": ["--model", "rnn", "--width", "512", "--depth", "2", "--batch-size", "8"],
}


# Each machine parameter the replay takes from the profile, and the flag that turns it off: the
# prediction is made again without it, so that every parameter shows what it earns on runs
# not used to set it (the pairs' own measurements are never used to set any).
WITHOUT = {
    "overlap_allreduce": ["--overlap-bandwidth-fraction", "1"],
    "overlap_compute": ["--compute-fraction-during-allreduce", "1"],
    "sleep_resume": ["--sleep-resume-cost", "0"],
    "effective_cores": ["--effective-cores", "2=2"],
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="results folder (created; must not hold pairs.csv)")
    p.add_argument("--families", default="mlp,cnn,transformer", help=f"comma list of {','.join(FAMILIES)}")
    p.add_argument("--caps", default="1,2,5,10", help="changed bucket caps, MiB (baseline: 25)")
    p.add_argument("--slowdown", default="1=1.5", help="RANK=F: the straggler configuration")
    p.add_argument("--repeats", type=int, default=5, help="interleaved rounds")
    p.add_argument("--iterations", type=int, default=30, help="iterations per run")
    p.add_argument("--machine", help="a machine profile (ddp-machine-profile's JSON) for every replay")
    p.add_argument("--no-machine", action="store_true",
                   help="predict with the network fitted to the trace (no machine profile)")
    p.add_argument("--launcher", default=None,
                   help="command that starts one job (default: BIN/ddp-launch --nproc-per-node 2 "
                        "--master-port 0 --)")
    p.add_argument("--job-args", default="", help="more python_ddp.py arguments for every run "
                   "(e.g. '--width 256' for a quick check)")
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "release", "bin"))
    p.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    p.add_argument("--without", default=",".join(WITHOUT),
                   help="the machine parameters each prediction is made again without (comma list; "
                        "'none': no ablation)")
    p.add_argument("--repredict", action="store_true",
                   help="OUT holds a finished run: predict its rounds again with --bin (nothing is run or "
                        "measured) into OUT/pairs-repredicted.csv and OUT/table-repredicted.txt")
    args = p.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    if not families or any(f not in FAMILIES for f in families):
        raise InputError("--families", f"names from {','.join(FAMILIES)}", f"'{args.families}'")
    args.families = families
    args.without = [] if args.without == "none" else [k for k in args.without.split(",") if k]
    if any(k not in WITHOUT for k in args.without):
        raise InputError("--without", f"names from {','.join(WITHOUT)}, or none", f"'{','.join(args.without)}'")
    try:
        caps = [float(c) for c in args.caps.split(",")]
        if any(not c > 0 or c == BASELINE_CAP for c in caps):
            raise ValueError
    except ValueError:
        raise InputError("--caps", f"positive MiB other than {BASELINE_CAP:g}, separated by commas",
                         f"'{args.caps}'")
    args.caps = caps
    rank, _, factor = args.slowdown.partition("=")
    try:
        if int(rank) < 0 or not float(factor) > 1:
            raise ValueError
    except ValueError:
        raise InputError("--slowdown", "RANK=F with F > 1", f"'{args.slowdown}'")
    if args.repeats < 2:
        raise InputError("--repeats", "at least 2 (the repeat floor needs two rounds)", args.repeats)
    if args.iterations < 6:
        raise InputError("--iterations", "at least 6", args.iterations)
    if args.machine and args.no_machine:
        raise InputError("--machine and --no-machine", "one of them", "both")
    if args.machine and not os.path.isfile(args.machine):
        raise InputError("--machine", "a machine profile file", f"'{args.machine}' (no such file)")
    if args.repredict:
        if not os.path.exists(os.path.join(args.out, "pairs.csv")):
            raise InputError("--out", "a finished run's folder with --repredict", f"'{args.out}' (no pairs.csv)")
        if not args.machine and not args.no_machine:
            args.machine = os.path.join(args.out, "machine.json")
            if not os.path.isfile(args.machine):
                raise InputError("--out", "a run with its machine.json", f"'{args.out}' (none)")
    elif os.path.exists(os.path.join(args.out, "pairs.csv")):
        raise InputError("--out", "a folder without results", f"'{args.out}' (holds pairs.csv)")
    launcher = args.launcher or f"{args.bin}/ddp-launch --nproc-per-node 2 --master-port 0 --"
    args.launcher = shlex.split(launcher)
    return args


def configurations(args):
    """(name, python_ddp.py arguments, ddp-sim replay arguments); the baseline first."""
    result = [("cap25", ["--bucket-cap-mb", "25"], [])]
    for cap in args.caps:
        result.append((f"cap{cap:g}", ["--bucket-cap-mb", f"{cap:g}"], ["--bucket-cap-mb", f"{cap:g}"]))
    result.append((f"slowdown{args.slowdown}", ["--bucket-cap-mb", "25", "--slowdown", args.slowdown],
                   ["--slowdown", args.slowdown]))
    return result


# A torch worker now and then aborts as it ends ("terminate called without an active
# exception", SIGABRT), profiled or not, in bursts on this machine: such a job wrote no result,
# and is run again, up to TEARDOWN_ATTEMPTS runs in all (the log says so). Any other failure
# stays a failure.
TEARDOWN_ABORT = "terminate called without an active exception"
TEARDOWN_ATTEMPTS = 3


def worth_another_run(code, output, attempt):
    """Whether a job that exited `code` with `output` on its `attempt`-th run (from 1) aborted as it
    ended (TEARDOWN_ABORT) with runs left of TEARDOWN_ATTEMPTS: the one failure run again."""
    return code != 0 and attempt < TEARDOWN_ATTEMPTS and TEARDOWN_ABORT in output


def run(cmd, log, refusal=None, attempt=1):
    """Runs cmd, its output appended to log. False when it exits 2 with `refusal` in its output
    (an expected refusal); a worker's abort at its end (TEARDOWN_ABORT) is run again, up to
    TEARDOWN_ATTEMPTS runs; any other failure raises."""
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        start = f.tell()
        code = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    with open(log) as f:
        f.seek(start)
        output = f.read()
    if code == 2 and refusal is not None and refusal in output:
        return False
    if worth_another_run(code, output, attempt):
        with open(log, "a") as f:
            f.write(f"python_jobs: a worker aborted ({TEARDOWN_ABORT}): running the job once more\n")
        return run(cmd, log, refusal, attempt + 1)
    if code != 0:
        raise RuntimeError(f"exit {code}: {' '.join(cmd)} (see {log})")
    return True


def profile_steps(args):
    """The profiled window (python_ddp.py --profile-steps): a third of the run, leaving at
    least 2 steps after it."""
    return max(1, min(args.iterations // 3, args.iterations - 4))


def unprofiled_iteration_s(step_times, profiled):
    """Median iteration of the profiled run after its window (rank 0): iteration_seconds[k - 1]
    is iteration k's; iteration 1 warms the profiler up, 2..profiled+1 are profiled, and the
    next one writes the trace."""
    with open(step_times.replace("{rank}", "0")) as f:
        after = json.load(f)["iteration_seconds"][profiled + 2:]
    if not after:
        raise InputError(step_times, "iterations after the profiled window", "none")
    return statistics.median(after)


def median_iteration_s(step_times):
    with open(step_times.replace("{rank}", "0")) as f:
        return statistics.median(json.load(f)["iteration_seconds"])


def measure_machine(args, log):
    path = os.path.join(args.out, "machine.json")
    run(args.launcher + [os.path.join(args.bin, "ddp-machine-profile"), "--out", path], log)
    return path


def predict(args, base, configs, machine, baseline_s, log):
    """Every configuration predicted from round folder `base`'s imported profile: (predictions
    by key, whether the unprofiled time was refused, the profiled run's own later steps)."""
    trace = os.path.join(base, "trace")
    profiled_steps_s = unprofiled_iteration_s(os.path.join(base, "profiled-{rank}.json"), profile_steps(args))
    # Each prediction: its key's suffix in `predicted` (and its file's), the flags it adds, and
    # the unprofiled time it is given.
    variants = [("", [], baseline_s), ("/profiled-steps", [], profiled_steps_s)] + \
        ([(f"/without-{key}", WITHOUT[key], baseline_s) for key in args.without] if machine else [])
    predicted = {}  # the baseline's own replay is a reconstruction, reported apart
    refused = False
    tag = "-repredicted" if args.repredict else ""  # a run's own reports stay as they were
    for name, _, replay_args in configs:
        common = [os.path.join(args.bin, "ddp-sim"), "replay", trace] + replay_args + \
            (["--machine", machine] if machine else [])
        # The same without the correction (the profiled run's own speed): reported beside it.
        as_profiled = os.path.join(base, f"predicted-{name}-as-profiled{tag}.json")
        run(common + ["--json", as_profiled], log)
        with open(as_profiled) as f:
            predicted[name + "/as-profiled"] = json.load(f)["predicted"]["median_iteration_s"]
        for suffix, flags, unprofiled_s in variants:
            report = os.path.join(base, f"predicted-{name}{suffix.replace('/', '-')}{tag}.json")
            unprofiled = ["--unprofiled-iteration-ms", f"{unprofiled_s * 1e3:.6g}"]
            # A time the trace's replay cannot reach (its all-reduces alone take longer) is
            # refused; the prediction is then the as-profiled one, and the row says so.
            if run(common + flags + ["--json", report] + unprofiled, log,
                   refusal="--unprofiled-iteration-ms: expected a time the trace's own replay can reach"):
                with open(report) as f:
                    predicted[name + suffix] = json.load(f)["predicted"]["median_iteration_s"]
            else:
                predicted[name + suffix] = predicted[name + "/as-profiled"]
                refused = refused or not suffix
    return predicted, refused, profiled_steps_s


def rows_of(family, r, configs, measured, predicted, refused, profiled_steps_s):
    rows = []
    for name, _, _ in configs[1:] + configs[:1]:
        row = {"family": family, "round": r, "configuration": name,
               "baseline_s": measured["cap25"], "measured_s": measured[name],
               "predicted_s": predicted[name], "predicted_as_profiled_s": predicted[name + "/as-profiled"],
               "predicted_profiled_steps_s": predicted[name + "/profiled-steps"],
               "unprofiled_baseline_s": measured["cap25"], "profiled_steps_s": profiled_steps_s,
               "unprofiled_refused": int(refused),
               "kind": "reconstruction" if name == "cap25" else "prediction"}
        for key in WITHOUT:
            row[f"without_{key}_s"] = predicted.get(f"{name}/without-{key}", "")
        rows.append(row)
    return rows


def round_folders(args, r):
    """(family, its folder of round r), for each family."""
    return [(family, os.path.join(args.out, family, f"round{r}")) for family in args.families]


def one_round(args, r, machine, log):
    """Runs round r: the profiled baseline and its predictions, then every configuration measured."""
    rows = []
    configs = configurations(args)
    for family, base in round_folders(args, r):
        os.makedirs(base, exist_ok=True)
        job = ([args.python, PEER] + FAMILIES[family] + shlex.split(args.job_args) +
               ["--iterations", str(args.iterations), "--quiet"])
        profile = os.path.join(base, "profile")
        profile_times = os.path.join(base, "profiled-{rank}.json")
        run(args.launcher + job + ["--bucket-cap-mb", "25", "--profile", profile,
                                   "--profile-steps", str(profile_steps(args)), "--step-times", profile_times], log)
        trace = os.path.join(base, "trace")
        run([os.path.join(args.bin, "ddp-trace"), "import", "--kineto", trace,
             os.path.join(profile, "rank-0.kineto.json"), os.path.join(profile, "rank-1.kineto.json")], log)
        # The job's iteration time unprofiled, as a user knows it from a normal run's log: the
        # baseline measured before anything is predicted. Beside it, the profiled run's own
        # steps after its window (the first of them, which writes the trace, left out).
        measured = {}
        times = os.path.join(base, "measured-cap25-{rank}.json")
        run(args.launcher + job + ["--bucket-cap-mb", "25", "--step-times", times], log)
        measured["cap25"] = median_iteration_s(times)
        predicted, refused, profiled_steps_s = predict(args, base, configs, machine, measured["cap25"], log)
        # The changed configurations measured, their order rotated each round (machine speed drifts).
        changed = configs[1:]
        for name, job_args, _ in changed[r % len(changed):] + changed[:r % len(changed)]:
            times = os.path.join(base, f"measured-{name}-{{rank}}.json")
            run(args.launcher + job + job_args + ["--step-times", times], log)
            measured[name] = median_iteration_s(times)
        rows += rows_of(family, r, configs, measured, predicted, refused, profiled_steps_s)
    return rows


def repredict_round(args, r, machine, log):
    """Round r of a finished run predicted again from its files; its measurements as they were."""
    rows = []
    configs = configurations(args)
    for family, base in round_folders(args, r):
        measured = {}
        for name, _, _ in configs:
            times = os.path.join(base, f"measured-{name}-{{rank}}.json")
            if not os.path.isfile(times.replace("{rank}", "0")):
                raise InputError(times.replace("{rank}", "0"), "the run's measurement (give --repredict the run's own "
                                 "--families, --caps, --slowdown, --repeats and --iterations)", "no such file")
            measured[name] = median_iteration_s(times)
        predicted, refused, profiled_steps_s = predict(args, base, configs, machine, measured["cap25"], log)
        rows += rows_of(family, r, configs, measured, predicted, refused, profiled_steps_s)
    return rows


def p90(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def table(rows):
    """Median and p90 |error| per family and over all: the model's predictions, no change, the
    repeat floor, as profiled, profiled steps; then the reconstructions (each baseline profile
    replayed at its profiled steps' time against the same round's unprofiled baseline); then
    what each machine parameter earns."""
    measured = {(r["family"], r["configuration"], r["round"]): float(r["measured_s"]) for r in rows}
    pct = lambda v: f"{100 * statistics.median(v):5.1f} / {100 * p90(v):5.1f} %"
    lines = ["predictions (changed configurations, measured unprofiled)",
             "family        pairs  model median/p90 |err|   no change median/p90   repeat floor median/p90"
             "   as profiled median/p90   profiled steps median/p90"]
    groups = sorted({r["family"] for r in rows}) + ["all"]
    for group in groups:
        model, unchanged, floor, as_profiled, steps = [], [], [], [], []
        for r in rows:
            if r["kind"] != "prediction" or group not in ("all", r["family"]):
                continue
            m = float(r["measured_s"])
            model.append(abs(float(r["predicted_s"]) / m - 1))
            unchanged.append(abs(float(r["baseline_s"]) / m - 1))
            if r.get("predicted_as_profiled_s") not in (None, ""):
                as_profiled.append(abs(float(r["predicted_as_profiled_s"]) / m - 1))
            if r.get("predicted_profiled_steps_s") not in (None, ""):
                steps.append(abs(float(r["predicted_profiled_steps_s"]) / m - 1))
            later = measured.get((r["family"], r["configuration"], r["round"] + 1))
            if later is not None:
                floor.append(abs(later / m - 1))
        if not model:
            continue
        lines.append(f"{group:<13} {len(model):5d}  {pct(model):>22}   {pct(unchanged):>20}   "
                     f"{pct(floor) if floor else '-':>22}   {pct(as_profiled) if as_profiled else '-':>20}   "
                     f"{pct(steps) if steps else '-':>20}")
    # The model's reconstruction takes the measured baseline's time by construction; the one
    # given the profiled run's own later steps shows how well those stand for a normal run.
    lines.append("reconstructions (the profiled baseline replayed at its profiled steps' time, against the "
                 "unprofiled baseline run)")
    for group in groups:
        signed = [float(r.get("predicted_profiled_steps_s") or r["predicted_s"]) / float(r["measured_s"]) - 1
                  for r in rows if r["kind"] == "reconstruction" and group in ("all", r["family"])]
        if signed:
            lines.append(f"{group:<13} {len(signed):5d}  median error {100 * statistics.median(signed):+5.1f} %, "
                         f"|err| {pct([abs(v) for v in signed])}")
    lines.append("each machine parameter: the predictions with it, and made again without it (its flag turned off)")
    for key, flags in WITHOUT.items():
        pairs = [r for r in rows if r["kind"] == "prediction" and r.get(f"without_{key}_s") not in (None, "")]
        if not pairs:
            continue
        with_it = [abs(float(r["predicted_s"]) / float(r["measured_s"]) - 1) for r in pairs]
        without = [abs(float(r[f"without_{key}_s"]) / float(r["measured_s"]) - 1) for r in pairs]
        lines.append(f"{key:<18} ({' '.join(flags)}): with {pct(with_it)}, without {pct(without)}")
    baselines = [r for r in rows if r["kind"] == "reconstruction"]
    refused = sum(int(r.get("unprofiled_refused") or 0) for r in baselines)
    if refused:
        lines.append(f"{refused} of {len(baselines)} baselines ran faster unprofiled than their replay's all-reduces "
                     "alone: predicted as profiled (--unprofiled-iteration-ms refused)")
    return "\n".join(lines)


def main(argv):
    try:
        args = parse_args(argv)
    except InputError as error:
        print(f"ddpsim.bench.python_jobs: {error}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    suffix = "-repredicted" if args.repredict else ""
    log = os.path.join(args.out, f"log{suffix}.txt")
    machine = None if args.no_machine else (args.machine or measure_machine(args, log))
    rows = []
    for r in range(args.repeats):
        try:
            rows += (repredict_round if args.repredict else one_round)(args, r, machine, log)
        except InputError as error:
            print(f"ddpsim.bench.python_jobs: {error}", file=sys.stderr)
            return 2
        # Every finished round is kept: a failure later loses nothing already measured.
        with open(os.path.join(args.out, f"pairs{suffix}.csv"), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        print(f"round {r + 1}/{args.repeats} done", file=sys.stderr, flush=True)
    text = table(rows)
    with open(os.path.join(args.out, f"table{suffix}.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
