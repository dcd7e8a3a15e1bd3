"""Tables of the [advice] experiments (experiments/advice-*.toml): did following `ddp-sim advise`
work? Each reads the experiment's advice.csv (ddp-experiment's rows, one per job) and prints one
table; --csv writes the same table as CSV.

  timeout     per repetition: the advised timeout, the runs that followed it (10 x the recorded
              iterations) and how many died of a false timeout (goal 0), and the hung runs:
              detected or not, the measured time from the hang to its detection (the first
              failure event of any rank minus the hung rank's stall event) against the time
              advise says a hang is detected within (and the time its replay predicts).
  bucket      per own cap: the advice (change to X, or keep), the predicted gain of the compared
              cap over the own one and its interval, the measured gain (1 - median of the compared
              cap's run medians / the own cap's) with a 90 % bootstrap interval (runs resampled,
              10,000 draws, seed 1) and the two-sided exact Mann-Whitney p of the two caps' run
              medians. A change holds when the measured gain lies in the predicted interval; a
              "keep" holds when the compared cap is not measurably faster (p >= 0.05 or a gain <= 0),
              and its difference is "within the noise" when p >= 0.05.
  stragglers  the ranks slowed and named per run; precision and recall over every run; recall per
              slowdown factor, and the smallest factor from which every larger one is named in
              >= 90 % of its cases.

Usage:
  python -m ddpsim.bench.advice timeout results/advice-timeout/advice.csv [--csv OUT.csv]
  python -m ddpsim.bench.advice bucket results/advice-bucket/advice.csv [--csv OUT.csv] [--readvise BIN]
  python -m ddpsim.bench.advice stragglers results/advice-stragglers/advice.csv [--csv OUT.csv]
--readvise BIN (bucket) weighs another build's advice on a finished run: each own cap's baseline is
advised again with BIN/ddp-sim advise (its --repeats and the run's machine.json, as the spec did),
and checked against the same measured runs; an advice comparing a cap the run did not measure is
a one-line error.
Standard library only.
"""
import argparse
import csv
import itertools
import json
import math
import os
import random
import statistics
import subprocess
import sys

from ddpsim import InputError

KINDS = ("timeout", "bucket", "stragglers")
RELIABLE = 0.9  # the recall a factor needs to count as named reliably


def read_rows(path, kind):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as error:
        raise InputError(path, "a readable advice.csv (ddp-experiment run experiments/advice-*.toml)",
                         error.strerror) from None
    if not rows or "kind" not in rows[0] or "role" not in rows[0]:
        raise InputError(path, "advice.csv rows with kind and role columns", "none")
    kinds = {r["kind"] for r in rows}
    if kinds != {kind}:
        raise InputError(path, f"rows of kind {kind}", ", ".join(sorted(kinds)))
    return rows


def number(text):
    return float(text) if text not in ("", None) else float("nan")


def ranks(text):
    return {int(r) for r in text.split(";") if r != ""}


# --- timeout ---------------------------------------------------------------------------------

def timeout_table(rows):
    out = []
    for rep in sorted({int(r["rep"]) for r in rows}):
        mine = [r for r in rows if int(r["rep"]) == rep]
        base = next((r for r in mine if r["role"] == "baseline"), None)
        follow = [r for r in mine if r["role"] == "follow" and r["status"] != "error"]
        hangs = [r for r in mine if r["role"] == "hang" and r["status"] != "error"]
        broken = [r for r in mine if r["status"] == "error"]
        detect = [number(r["measured_detect_s"]) for r in hangs]
        advised_detect = number(base["advised_detect_s"]) if base else float("nan")
        out.append({
            "rep": rep,
            "baseline_iterations": base["iterations"] if base else "",
            "advised_timeout_s": number(base["advised_timeout_s"]) if base else float("nan"),
            "follow_runs": len(follow),
            "follow_iterations": sum(int(r["complete_iterations"] or 0) for r in follow),
            "planned_iterations": sum(int(r["iterations"]) for r in follow),
            "false_timeouts": sum(r["status"] == "failed" for r in follow),
            "hang_runs": len(hangs),
            "hangs_detected": sum(r["status"] == "failed" for r in hangs),
            "measured_detect_s": max(detect) if detect else float("nan"),
            "advised_detect_s": advised_detect,
            "replayed_detect_s": number(base.get("replayed_detect_s", "")) if base else float("nan"),
            # None: no hung run of this repetition was measured (or none recorded its stall).
            "within_advised": (all(d <= advised_detect for d in detect) if detect and all(d == d for d in detect)
                               else (False if hangs else None)),
            "broken": len(broken),
            "first_failure": next((r["failure"] for r in follow if r["status"] == "failed"), ""),
        })
    return out


def timeout_text(table):
    lines = ["rep  advised timeout s  followed runs  iterations run/planned  false timeouts  "
             "hangs detected  detect: measured s  advised s  replayed s  within"]
    for t in table:
        lines.append(f"{t['rep']:3d}  {t['advised_timeout_s']:17.3f}  {t['follow_runs']:13d}  "
                     f"{t['follow_iterations']:>11d}/{t['planned_iterations']:<10d}  {t['false_timeouts']:14d}  "
                     f"{t['hangs_detected']:>6d}/{t['hang_runs']:<7d}  {t['measured_detect_s']:18.3f}  "
                     f"{t['advised_detect_s']:9.3f}  {t['replayed_detect_s']:10.3f}  "
                     f"{ {True: 'yes', False: 'NO', None: '-'}[t['within_advised']]}")
    runs = sum(t["follow_runs"] for t in table)
    false = sum(t["false_timeouts"] for t in table)
    hangs = sum(t["hang_runs"] for t in table)
    within = sum(t["within_advised"] is True for t in table if t["hang_runs"])
    lines.append(f"false timeouts: {false} of {runs} followed runs (goal 0); hangs detected within the "
                 f"advised time: {within} of {sum(1 for t in table if t['hang_runs'])} repetitions "
                 f"({hangs} hung runs); broken jobs: {sum(t['broken'] for t in table)}")
    for t in table:
        if t["first_failure"]:
            lines.append(f"rep {t['rep']}: first false timeout: {t['first_failure'][:160]}")
    return "\n".join(lines)


# --- bucket ----------------------------------------------------------------------------------

def mann_whitney_p(a, b):
    """Two-sided p of the Mann-Whitney U of samples a and b: exact (every split of the pooled
    ranks) up to 200,000 splits, the normal approximation beyond; NaN for an empty sample."""
    if not a or not b:
        return float("nan")
    pooled = sorted(a + b)

    def rank(v):  # mid-ranks for ties
        first = pooled.index(v)
        last = len(pooled) - 1 - pooled[::-1].index(v)
        return (first + last) / 2 + 1

    ranks_all = [rank(v) for v in a + b]
    n1, n2 = len(a), len(b)
    mean_u = n1 * n2 / 2

    def u_of(rank_sum):
        return rank_sum - n1 * (n1 + 1) / 2

    observed = abs(u_of(sum(ranks_all[:n1])) - mean_u)
    if math.comb(n1 + n2, n1) <= 200_000:
        extreme = total = 0
        for chosen in itertools.combinations(range(n1 + n2), n1):
            total += 1
            extreme += abs(u_of(sum(ranks_all[i] for i in chosen)) - mean_u) >= observed - 1e-9
        return extreme / total
    sd = math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    z = observed / sd
    return math.erfc(z / math.sqrt(2))


def gain(own, other):
    return 1 - statistics.median(other) / statistics.median(own)


def bootstrap_gain(own, other, draws=10_000, seed=1):
    """90 % percentile interval of gain(), each sample's runs resampled with replacement."""
    rng = random.Random(seed)
    values = sorted(gain(rng.choices(own, k=len(own)), rng.choices(other, k=len(other))) for _ in range(draws))
    return values[int(0.05 * draws)], values[int(0.95 * draws) - 1]


def bucket_table(rows):
    out = []
    for case in sorted({r["case"] for r in rows}, key=lambda c: number(c.removeprefix("cap"))):
        mine = [r for r in rows if r["case"] == case]
        base = next((r for r in mine if r["role"] == "baseline"), None)
        own = [number(r["median_iteration_s"]) for r in mine if r["role"] == "own" and r["status"] == "ok"]
        other = [number(r["median_iteration_s"]) for r in mine if r["role"] == "other" and r["status"] == "ok"]
        ref = base or (mine[0] if mine else {})
        keep = ref.get("keep") == "true"
        t = {"case": case, "own_cap_mb": number(ref.get("own_cap_mb", "")),
             "advice": "keep" if keep else f"change to {ref.get('advised_cap_mb', '')}",
             "compared_cap_mb": number(ref.get("compared_cap_mb", "")),
             "predicted_gain": number(ref.get("predicted_gain", "")),
             "predicted_gain_lo": number(ref.get("predicted_gain_lo", "")),
             "predicted_gain_hi": number(ref.get("predicted_gain_hi", "")),
             "pairs": min(len(own), len(other)),
             "own_median_s": statistics.median(own) if own else float("nan"),
             "other_median_s": statistics.median(other) if other else float("nan")}
        if own and other:
            t["measured_gain"] = gain(own, other)
            t["measured_gain_lo"], t["measured_gain_hi"] = bootstrap_gain(own, other)
            t["mann_whitney_p"] = mann_whitney_p(own, other)
        else:
            t["measured_gain"] = t["measured_gain_lo"] = t["measured_gain_hi"] = t["mann_whitney_p"] = float("nan")
        t["within_noise"] = t["mann_whitney_p"] >= 0.05
        t["inside_predicted"] = t["predicted_gain_lo"] <= t["measured_gain"] <= t["predicted_gain_hi"]
        if keep:
            t["holds"] = t["within_noise"] or t["measured_gain"] <= 0
        else:
            t["holds"] = t["inside_predicted"]
        out.append(t)
    return out


def compared_answer(bucket):
    """(advised cap, keep, compared cap, gain, interval) from advise --json's bucket section, as
    ddp-experiment reads it (experiments/src/advice_read.cpp): the advised cap, or with "keep"
    the fastest cap that buckets the gradients otherwise; the candidate's gain and its interval
    widened by the drift between runs."""
    own, keep = bucket["own"], bucket.get("keep", True)
    advised = bucket.get("recommended_bucket_cap_mb")
    other = None
    for c in bucket.get("candidates", []):
        if not keep and advised is not None:
            if c["bucket_cap_mb"] == advised:
                other = c
        elif c["bucket_cap_mb"] != own["bucket_cap_mb"] and not (c.get("buckets", 0) > 0 and
                                                                 c.get("buckets") == own.get("buckets")):
            if other is None or c["median_iteration_s"] < other["median_iteration_s"]:
                other = c
    if other is None:
        return advised, keep, None, float("nan"), (float("nan"), float("nan"))
    interval = other.get("drift_gain_interval") or other.get("gain_interval")
    return advised, keep, other["bucket_cap_mb"], other.get("gain", float("nan")), tuple(interval)


def readvise(rows, advice_csv, bin_dir):
    """The rows with each case's advice given again by bin_dir's ddp-sim (see the usage)."""
    folder = os.path.dirname(os.path.abspath(advice_csv))
    machine = os.path.join(folder, "machine.json")
    out = [dict(r) for r in rows]
    for case in sorted({r["case"] for r in rows}):
        base = next((r for r in rows if r["case"] == case and r["role"] == "baseline"), None)
        if base is None:
            raise InputError(advice_csv, f"a baseline row for {case}", "none")
        repeats = [r["run"] for r in rows if r["case"] == case and r["role"] == "baseline_repeat"]
        answer = os.path.join(folder, "advice", f"{base['run']}-readvised.json")
        command = [os.path.join(bin_dir, "ddp-sim"), "advise", os.path.join(folder, "traces", base["run"]),
                   "--json", answer] + (["--repeats"] + [os.path.join(folder, "traces", r) for r in repeats]
                                        if repeats else []) + (["--machine", machine] if os.path.isfile(machine) else [])
        if subprocess.call(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) != 0:
            raise InputError("--readvise", f"a ddp-sim that advises {base['run']}", " ".join(command))
        with open(answer) as f:
            advised, keep, compared, gain_value, (low, high) = compared_answer(json.load(f)["bucket"])
        if compared is None or compared != number(base.get("compared_cap_mb", "")):
            raise InputError("--readvise", f"an advice for {case} compared with the cap the run measured "
                             f"({base.get('compared_cap_mb', '')})", f"cap {compared}")
        for r in out:
            if r["case"] == case:
                r.update({"advised_cap_mb": "" if advised is None else f"{advised:g}", "keep": str(keep).lower(),
                          "predicted_gain": gain_value, "predicted_gain_lo": low, "predicted_gain_hi": high})
    return out


def pct(v):
    return f"{100 * v:+.1f}%" if v == v else "-"


def bucket_text(table):
    lines = ["own cap  advice          compared  predicted gain [interval]        pairs  own ms   other ms  "
             "measured gain [90% bootstrap]    MW p   in predicted  within noise  holds"]
    for t in table:
        lines.append(
            f"{t['own_cap_mb']:7g}  {t['advice']:<14}  {t['compared_cap_mb']:8g}  "
            f"{pct(t['predicted_gain']):>7} [{pct(t['predicted_gain_lo'])}, {pct(t['predicted_gain_hi'])}]"
            f"{'':<6}  {t['pairs']:5d}  {1e3 * t['own_median_s']:7.2f}  {1e3 * t['other_median_s']:7.2f}  "
            f"{pct(t['measured_gain']):>7} [{pct(t['measured_gain_lo'])}, {pct(t['measured_gain_hi'])}]"
            f"{'':<4}  {t['mann_whitney_p']:5.3f}  {'yes' if t['inside_predicted'] else 'no':<12}  "
            f"{'yes' if t['within_noise'] else 'no':<12}  "
            f"{'yes' if t['holds'] else 'NO'}")
    lines.append(f"advice that held: {sum(t['holds'] for t in table)} of {len(table)}")
    return "\n".join(lines)


# --- stragglers ------------------------------------------------------------------------------

def factors_of(slowdown, world_size):
    """{rank: factor} of a slowdown column ("1=1.5 3=2"), factors > 1 only."""
    out = {}
    for flag in slowdown.split():
        rank, _, factor = flag.partition("=")
        f = float(factor)
        if f > 1:
            for r in (range(world_size) if rank == "all" else [int(rank)]):
                out[r] = f
    return out


def stragglers_table(rows):
    runs = [r for r in rows if r["status"] == "ok"]
    tp = fp = fn = 0
    by_factor = {}
    per_run = []
    for r in runs:
        slowed = factors_of(r["slowdown"], int(r["world_size"]))
        named = ranks(r["named_ranks"])
        tp += len(named & slowed.keys())
        fp += len(named - slowed.keys())
        fn += len(slowed.keys() - named)
        for rank, f in slowed.items():
            by_factor.setdefault(f, []).append(rank in named)
        per_run.append({"run": r["run"], "slowdown": r["slowdown"], "slowed": ";".join(map(str, sorted(slowed))),
                        "named": r["named_ranks"], "right": named == set(slowed)})
    recall = {f: sum(v) / len(v) for f, v in sorted(by_factor.items())}
    smallest = None
    for f in sorted(recall, reverse=True):
        if recall[f] < RELIABLE:
            break
        smallest = f
    return {"runs": len(runs), "broken": len(rows) - len(runs), "tp": tp, "fp": fp, "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else float("nan"),
            "recall": tp / (tp + fn) if tp + fn else float("nan"),
            "recall_by_factor": recall, "cases_by_factor": {f: len(v) for f, v in by_factor.items()},
            "smallest_reliable_factor": smallest, "per_run": per_run,
            "runs_right": sum(p["right"] for p in per_run)}


def stragglers_rows(t):
    """The table as CSV rows: one per factor, then the totals."""
    rows = [{"factor": f, "cases": t["cases_by_factor"][f], "recall": t["recall_by_factor"][f]}
            for f in t["recall_by_factor"]]
    rows.append({"factor": "all", "cases": t["tp"] + t["fn"], "recall": t["recall"], "precision": t["precision"],
                 "runs": t["runs"], "false_positives": t["fp"],
                 "smallest_reliable_factor": t["smallest_reliable_factor"] or ""})
    return rows


def stragglers_text(t):
    lines = ["factor  slowed ranks  named  recall"]
    for f, r in t["recall_by_factor"].items():
        cases = t["cases_by_factor"][f]
        lines.append(f"{f:6g}  {cases:12d}  {round(r * cases):5d}  {r:6.2f}")
    smallest = t["smallest_reliable_factor"]
    lines.append(f"over {t['runs']} runs ({t['broken']} broken): precision {t['precision']:.2f} "
                 f"({t['tp']} named right, {t['fp']} named unslowed), recall {t['recall']:.2f} "
                 f"({t['fn']} slowed ranks not named); runs named exactly right {t['runs_right']}/{t['runs']}")
    lines.append("smallest factor named reliably (recall >= 0.9 there and at every larger factor): " +
                 (f"{smallest:g}" if smallest else "none"))
    return "\n".join(lines)


def write_csv(path, rows):
    fields = list(dict.fromkeys(k for row in rows for k in row))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ddpsim.bench.advice", description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=KINDS)
    ap.add_argument("advice_csv")
    ap.add_argument("--csv", help="also write the table as CSV here")
    ap.add_argument("--readvise", metavar="BIN", help="bucket: advise each baseline again with BIN/ddp-sim")
    args = ap.parse_args(argv)
    try:
        rows = read_rows(args.advice_csv, args.kind)
        if args.readvise:
            if args.kind != "bucket":
                raise InputError("--readvise", "the bucket table", args.kind)
            rows = readvise(rows, args.advice_csv, args.readvise)
    except InputError as error:
        print(f"ddpsim.bench.advice: {error}", file=sys.stderr)
        return 2
    if args.kind == "timeout":
        table = timeout_table(rows)
        text, csv_rows = timeout_text(table), table
    elif args.kind == "bucket":
        table = bucket_table(rows)
        text, csv_rows = bucket_text(table), table
    else:
        table = stragglers_table(rows)
        text, csv_rows = stragglers_text(table), stragglers_rows(table)
    print(text)
    if args.csv:
        write_csv(args.csv, csv_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
