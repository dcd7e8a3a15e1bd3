"""ddpsim-compare: two sets of interleaved benchmark repetitions, as google/benchmark's tools/compare.py.

  ddpsim-compare A.json B.json [--json OUT.json]      (or python -m ddpsim.compare)

A.json and B.json: {"name": "traced", "repetitions": [R1, R2, ...]}. Repetition i of A ran next to
repetition i of B (the benchmarks interleave A B B A ...), so the two share the machine's state and
are compared as a pair. A repetition is a time in seconds, or an object with "step_seconds" (what
`ddp-train --step-times` and runtime/peer/python_ddp.py write), summarised by its median step.

Reports the ratio A_i / B_i of each pair: its median, interquartile range and min-max, and two
exact two-sided paired tests of "A and B take the same time": the Wilcoxon signed-rank test on
log(A_i / B_i) (ties get average ranks, equal pairs are dropped) and the sign test. Neither p can go
below 2 * 0.5**n with n unequal pairs, so fewer than 6 pairs never reach p < 0.05; the table says
so. Prints a short table; --json writes the same numbers. Bad input: one line on stderr, exit 2.
Standard library only: runs under any python3 where ddpsim is installed (pip install --no-deps -e .).
"""
import argparse
import json
import math
import os
import statistics
import sys

from ddpsim.input_error import InputError
from ddpsim.stats import median_iqr


def repetition_seconds(repetition):
    """One repetition's time: the number itself, or the median of its step_seconds."""
    if isinstance(repetition, dict) and "step_seconds" in repetition:
        repetition = repetition["step_seconds"]
        if not isinstance(repetition, list) or not repetition:
            raise ValueError("an empty or non-list step_seconds")
        repetition = statistics.median(repetition)
    if isinstance(repetition, bool) or not isinstance(repetition, (int, float)):
        raise ValueError(f"{json.dumps(repetition)[:40]}")
    if not (math.isfinite(repetition) and repetition > 0):
        raise ValueError(f"{repetition}")
    return float(repetition)


def load(path):
    """(name, [seconds per repetition]) of one side's repetitions file."""
    expected = '{"name": ..., "repetitions": [...]} JSON'
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as error:
        raise InputError(path, "a readable file", error.strerror or str(error)) from None
    except (ValueError, RecursionError) as error:  # RecursionError: nested too deep
        raise InputError(path, expected, str(error)) from None
    if not isinstance(data, dict) or not isinstance(data.get("repetitions"), list):
        raise InputError(path, expected, "no repetitions list")
    if not data["repetitions"]:
        raise InputError(path, "at least one repetition", "none")
    seconds = []
    for i, repetition in enumerate(data["repetitions"], 1):
        try:
            seconds.append(repetition_seconds(repetition))
        except (ValueError, TypeError) as error:
            raise InputError(path, f"repetition {i} a positive time in seconds or step_seconds",
                             str(error)) from None
    return str(data.get("name") or os.path.basename(path)), seconds


def sign_test_p(differences):
    """Exact two-sided sign test: how likely a split of the nonzero signs this uneven is by chance."""
    signs = [d > 0 for d in differences if d != 0]
    n = len(signs)
    fewer = min(sum(signs), n - sum(signs))
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(fewer + 1)) / 2 ** n)


def wilcoxon_p(differences):
    """Exact two-sided Wilcoxon signed-rank test (zeros dropped, average ranks for ties).

    Under "no difference" each nonzero difference is positive or negative with probability 1/2
    independently, so the sum of the positive ones' ranks is distributed as the sum of a random
    subset of the ranks: counted exactly over all 2**n subsets by dynamic programming, with ranks
    doubled so that tied (half-integer) ranks stay integers."""
    nonzero = sorted((abs(d), d > 0) for d in differences if d != 0)
    n = len(nonzero)
    doubled = [0] * n  # twice the average rank of each |d|
    i = 0
    while i < n:
        j = i
        while j + 1 < n and nonzero[j + 1][0] == nonzero[i][0]:
            j += 1
        for k in range(i, j + 1):
            doubled[k] = i + j + 2
        i = j + 1
    counts = [1] + [0] * sum(doubled)  # counts[s]: subsets whose doubled ranks sum to s
    for rank in doubled:
        counts = [c + (counts[s - rank] if s >= rank else 0) for s, c in enumerate(counts)]
    observed = sum(rank for rank, (_, positive) in zip(doubled, nonzero) if positive)
    tail = min(sum(counts[:observed + 1]), sum(counts[observed:]))
    return min(1.0, 2 * tail / 2 ** n)


def compare(a, b):
    """The comparison of repetitions a[i] (seconds) with b[i]: a dict, as --json writes it."""
    ratios = [x / y for x, y in zip(a, b)]
    logs = [math.log(r) for r in ratios]
    median, q1, q3, n = median_iqr(ratios)
    unequal = sum(1 for r in logs if r != 0)
    return {
        "pairs": n,
        "ratio": {"median": median, "q1": q1, "q3": q3, "min": min(ratios), "max": max(ratios)},
        "pair_ratios": ratios,
        "a_slower": sum(1 for r in logs if r > 0),
        "a_faster": sum(1 for r in logs if r < 0),
        "wilcoxon_p": wilcoxon_p(logs),
        "sign_test_p": sign_test_p(logs),
        "min_attainable_p": min(1.0, 2 * 0.5 ** unequal),
    }


def compare_files(path_a, path_b):
    """compare() of two repetitions files, with each side's name, repetitions and median."""
    (name_a, a), (name_b, b) = load(path_a), load(path_b)
    if len(a) != len(b):
        raise InputError(path_b, f"{len(a)} repetitions, one per repetition of {path_a}", len(b))
    sides = {key: {"name": name, "file": path, "seconds": values, "median_s": statistics.median(values)}
             for key, name, path, values in (("a", name_a, path_a, a), ("b", name_b, path_b, b))}
    return {**sides, **compare(a, b)}


def table(result):
    """The comparison as a few lines of text: one per pair, then the ratio and the tests."""
    a, b, ratio = result["a"], result["b"], result["ratio"]
    width = max(len(a["name"]), len(b["name"])) + 3
    lines = [f"{'pair':>4}  {a['name'] + ' ms':>{width}}  {b['name'] + ' ms':>{width}}  {'ratio':>7}"]
    for i, (x, y, r) in enumerate(zip(a["seconds"], b["seconds"], result["pair_ratios"]), 1):
        lines.append(f"{i:>4}  {x * 1e3:>{width}.3f}  {y * 1e3:>{width}.3f}  {r:>7.4f}")
    lines.append(f"median {a['name']} {a['median_s'] * 1e3:.3f} ms, {b['name']} {b['median_s'] * 1e3:.3f} ms")
    lines.append(f"ratio {a['name']}/{b['name']}: median {ratio['median']:.4f}, IQR {ratio['q1']:.4f}-"
                 f"{ratio['q3']:.4f}, range {ratio['min']:.4f}-{ratio['max']:.4f} ({result['pairs']} pairs:"
                 f" {result['a_slower']} above 1, {result['a_faster']} below)")
    lines.append(f"Wilcoxon signed-rank p = {result['wilcoxon_p']:.3g}, sign test p = "
                 f"{result['sign_test_p']:.3g} (exact, two-sided; these pairs cannot go below "
                 f"p = {result['min_attainable_p']:.3g})")
    return "\n".join(lines)


class Parser(argparse.ArgumentParser):
    """argparse with every usage error on one line (exit 2), as the other ddpsim tools."""

    def error(self, message):
        print(f"ddpsim-compare: {message}", file=sys.stderr)
        sys.exit(2)


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    parser = Parser(prog="ddpsim-compare", description=__doc__.splitlines()[0])
    parser.add_argument("a", metavar="A.json", help="repetitions of A (numerator of the ratios)")
    parser.add_argument("b", metavar="B.json", help="repetitions of B, interleaved with A's")
    parser.add_argument("--json", metavar="OUT.json", help="also write the comparison here")
    args = parser.parse_args(argv)
    try:
        result = compare_files(args.a, args.b)
        if args.json:
            try:
                with open(args.json, "w") as f:
                    json.dump(result, f, indent=1)
                    f.write("\n")
            except OSError as error:
                raise InputError(args.json, "a writable file", error.strerror or str(error)) from None
    except InputError as error:
        print(error, file=sys.stderr)
        return 2
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
