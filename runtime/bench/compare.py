#!/usr/bin/env python3
"""Compares two sets of benchmark repetitions, as google/benchmark's tools/compare.py does.

Each input file is one repetition: the JSON that `ddp-train --step-times` (and the Python peer's
--step-times) writes, {"rank": R, "step_seconds": [...]}. A repetition is summarised by its median
step; the two sets are compared by the ratio of the medians of those medians, its spread over the
interleaved pairs (A_i / B_i), and a two-sided Mann-Whitney U test on the repetition medians (no
assumption of normality: timings on a shared machine are not normal).

    compare.py --names A,B --json OUT.json A-1.json A-2.json ... -- B-1.json B-2.json ...

Prints one table and writes the same numbers as JSON (--json). Standard library only.
"""
import argparse
import json
import math
import statistics
import sys


def load_medians(paths):
    medians = []
    for path in paths:
        try:
            with open(path) as f:
                steps = json.load(f)["step_seconds"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            sys.exit(f"compare.py: {path}: expected step-times JSON with step_seconds, got {error}")
        if not steps:
            sys.exit(f"compare.py: {path}: expected at least one step, got none")
        medians.append(statistics.median(steps))
    return medians


def mann_whitney_p(a, b):
    """Two-sided p-value of the Mann-Whitney U test (normal approximation, tie-corrected)."""
    n1, n2 = len(a), len(b)
    pooled = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    ranks = [0.0] * len(pooled)
    tie_term = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        tie_term += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, group) in zip(ranks, pooled) if group == 0)
    u = r1 - n1 * (n1 + 1) / 2
    mean = n1 * n2 / 2
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (abs(u - mean) - 0.5) / math.sqrt(var)  # continuity correction
    return max(0.0, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


def summarise(name_a, name_b, a, b):
    pairs = [x / y for x, y in zip(a, b)]
    ma, mb = statistics.median(a), statistics.median(b)
    return {
        "a": {"name": name_a, "repetition_median_ms": [x * 1e3 for x in a], "median_ms": ma * 1e3},
        "b": {"name": name_b, "repetition_median_ms": [x * 1e3 for x in b], "median_ms": mb * 1e3},
        "ratio_of_medians": ma / mb,
        "pair_ratios": pairs,
        "pair_ratio_min": min(pairs),
        "pair_ratio_max": max(pairs),
        "repetitions": min(len(a), len(b)),
        "mann_whitney_p": mann_whitney_p(a, b),
    }


def main(argv):
    if "--" not in argv:
        sys.exit("compare.py: expected FILES_A -- FILES_B, got no '--'")
    split = argv.index("--")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", default="A,B", help="NAME_A,NAME_B")
    parser.add_argument("--json", help="also write the comparison here")
    parser.add_argument("files_a", nargs="+")
    args = parser.parse_args(argv[:split])
    files_b = argv[split + 1:]
    if not files_b:
        sys.exit("compare.py: expected at least one file after '--', got none")
    name_a, _, name_b = args.names.partition(",")
    result = summarise(name_a, name_b or "B", load_medians(args.files_a), load_medians(files_b))
    a, b = result["a"], result["b"]
    print(f"{'':>4}  {a['name'] + ' ms':>14}  {b['name'] + ' ms':>14}  {'ratio':>7}")
    for i, (x, y) in enumerate(zip(a["repetition_median_ms"], b["repetition_median_ms"]), 1):
        print(f"{i:>4}  {x:>14.3f}  {y:>14.3f}  {x / y:>7.4f}")
    print(f"median {a['name']} {a['median_ms']:.3f} ms, {b['name']} {b['median_ms']:.3f} ms: "
          f"ratio {result['ratio_of_medians']:.4f} (pairs {result['pair_ratio_min']:.4f}.."
          f"{result['pair_ratio_max']:.4f}, n={result['repetitions']}, "
          f"Mann-Whitney p={result['mann_whitney_p']:.3g})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
