"""ddpsim.compare (ddpsim-compare; issue #14): the ratio, spread and exact paired tests it reports, against
answers worked out by hand, and its one-line errors."""
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import unittest


from ddpsim import compare, stats

try:
    from scipy import stats as scipy_stats
except ImportError:
    scipy_stats = None


class ExactTests(unittest.TestCase):
    def test_all_pairs_one_way_give_the_smallest_p_two_halves_to_the_n(self):
        # Only "all +" and "all -" are that extreme: p = 2 * 0.5**n for both tests.
        for n in range(1, 11):
            for sign in (1, -1):
                differences = [sign * (i + 1) for i in range(n)]
                self.assertAlmostEqual(compare.sign_test_p(differences), min(1, 2 * 0.5 ** n))
                self.assertAlmostEqual(compare.wilcoxon_p(differences), min(1, 2 * 0.5 ** n))

    def test_one_small_positive_among_four(self):
        # Ranks 1..4, only rank 1 positive: W+ = 1. Subsets of {1,2,3,4} summing to <= 1: {} and
        # {1}, so P(W+ <= 1) = 2/16 and p = 4/16. Sign test: 1 of 4, 2 * (C(4,0) + C(4,1)) / 16.
        differences = [0.1, -0.2, -0.3, -0.4]
        self.assertAlmostEqual(compare.wilcoxon_p(differences), 4 / 16)
        self.assertAlmostEqual(compare.sign_test_p(differences), 10 / 16)

    def test_one_large_positive_among_four_weighs_more_than_the_sign(self):
        # Only rank 4 positive: W+ = 4; subsets summing to <= 4: {}, 1, 2, 3, 4, 1+2, 1+3 -> 7/16,
        # and >= 4 is 11/16, so p = 14/16. The sign test does not see magnitudes: 10/16 again.
        differences = [-0.1, -0.2, -0.3, 0.4]
        self.assertAlmostEqual(compare.wilcoxon_p(differences), 14 / 16)
        self.assertAlmostEqual(compare.sign_test_p(differences), 10 / 16)

    def test_balanced_signs_and_ties(self):
        self.assertEqual(compare.sign_test_p([1, -1, 2, -2]), 1.0)
        # |d| tied: ranks 1.5 and 1.5; W+ is 0, 1.5 or 3 with 1/4, 2/4, 1/4: both tails 3/4.
        self.assertEqual(compare.wilcoxon_p([1, -1]), 1.0)
        # Three tied and all positive is still the one extreme arrangement of eight.
        self.assertAlmostEqual(compare.wilcoxon_p([2, 2, 2]), 2 / 8)
        # 1, -2, 2, 3: ranks 1, 2.5, 2.5, 4 (doubled 2, 5, 5, 8), W+ doubled = 2 + 5 + 8 = 15. Of the
        # 16 subsets of {2, 5, 5, 8}, four sum to >= 15 (15, 15, 18, 20): p = 2 * 4/16. Ranks
        # 1, 2, 3, 4 without averaging would give W+ = 1 + 3 + 4 = 8 and p = 2 * 3/16 instead.
        self.assertAlmostEqual(compare.wilcoxon_p([1, -2, 2, 3]), 8 / 16)

    def test_equal_pairs_are_dropped(self):
        self.assertAlmostEqual(compare.wilcoxon_p([0, 0, 1, 2, 3]), 2 / 8)
        self.assertAlmostEqual(compare.sign_test_p([0, 0, 1, 2, 3]), 2 / 8)
        self.assertEqual(compare.wilcoxon_p([0, 0]), 1.0)
        self.assertEqual(compare.sign_test_p([]), 1.0)

    @unittest.skipIf(scipy_stats is None, "scipy is not installed (it is not a dependency)")
    def test_agrees_with_scipy_without_ties(self):
        rng = random.Random(14)
        for _ in range(200):
            differences = [rng.choice((-1, 1)) * rng.uniform(0.01, 1) for _ in range(rng.randint(1, 14))]
            self.assertAlmostEqual(compare.wilcoxon_p(differences),
                                   scipy_stats.wilcoxon(differences, method="exact").pvalue)
            positive = sum(d > 0 for d in differences)
            self.assertAlmostEqual(compare.sign_test_p(differences),
                                   scipy_stats.binomtest(positive, len(differences)).pvalue)


class Comparison(unittest.TestCase):
    def test_ratio_spread_of_known_pairs(self):
        # Ratios 1, 2, 3, 4, 5 (in another order): median 3; numpy's linear quartiles of five
        # values are the 2nd and 4th: 2 and 4.
        r = compare.compare([3.0, 1.0, 5.0, 2.0, 4.0], [1.0] * 5)
        self.assertEqual(r["pairs"], 5)
        self.assertEqual(r["ratio"], {"median": 3.0, "q1": 2.0, "q3": 4.0, "min": 1.0, "max": 5.0})
        self.assertEqual((r["a_slower"], r["a_faster"]), (4, 0))
        # The ratio-1 pair is dropped: four pairs all one way.
        self.assertAlmostEqual(r["wilcoxon_p"], 2 * 0.5 ** 4)
        self.assertAlmostEqual(r["min_attainable_p"], 2 * 0.5 ** 4)

    def test_the_test_is_on_ratios_so_scale_does_not_matter(self):
        a, b = [0.012, 0.020, 0.031, 0.009], [0.010, 0.021, 0.030, 0.010]
        r, scaled = compare.compare(a, b), compare.compare([x * 1e3 for x in a], [y * 1e3 for y in b])
        self.assertAlmostEqual(r["wilcoxon_p"], scaled["wilcoxon_p"])
        self.assertAlmostEqual(r["ratio"]["median"], scaled["ratio"]["median"])


def write(directory, name, data):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(data if isinstance(data, str) else json.dumps(data))
    return path


class Cli(unittest.TestCase):
    def run_cli(self, *args):
        return subprocess.run([sys.executable, "-m", "ddpsim.compare", *args], capture_output=True, text=True)

    def test_step_times_repetitions_and_json_out(self):
        with tempfile.TemporaryDirectory() as d:
            # Repetition medians A: 2, 4, 6 ms; B: 1, 2, 3 ms. Every pair is 2.
            a = write(d, "a.json", {"name": "x", "repetitions": [
                {"rank": 0, "step_seconds": [0.002, 0.002, 0.009]}, {"step_seconds": [0.004]},
                {"step_seconds": [0.006, 0.001, 0.007]}]})
            b = write(d, "b.json", {"name": "y", "repetitions": [0.001, 0.002, 0.003]})
            out = os.path.join(d, "c.json")
            p = self.run_cli(a, b, "--json", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                r = json.load(f)
        self.assertEqual((r["a"]["name"], r["b"]["name"]), ("x", "y"))
        self.assertAlmostEqual(r["a"]["median_s"], 0.004)
        for key in ("median", "q1", "q3", "min", "max"):
            self.assertAlmostEqual(r["ratio"][key], 2.0)
        self.assertAlmostEqual(r["sign_test_p"], 0.25)
        self.assertIn("ratio x/y: median 2.0000", p.stdout)
        self.assertIn("cannot go below p = 0.25", p.stdout)

    def test_bad_inputs_are_one_line_naming_the_file_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            good = write(d, "good.json", {"repetitions": [0.1, 0.2]})
            rows = [(write(d, "empty.json", "{}"), "no repetitions list"),
                    (write(d, "text.json", "traced 1.2 ms"), "JSON"),
                    (write(d, "deep.json", "[" * 100000 + "]" * 100000), "JSON"),
                    (os.path.join(d, "missing.json"), "a readable file"),
                    (write(d, "none.json", {"repetitions": []}), "at least one repetition"),
                    (write(d, "short.json", {"repetitions": [0.1]}), "2 repetitions"),
                    (write(d, "negative.json", {"repetitions": [0.1, -1]}), "repetition 2"),
                    (write(d, "nan.json", '{"repetitions": [0.1, NaN]}'), "repetition 2"),
                    (write(d, "steps.json", {"repetitions": [0.1, {"step_seconds": []}]}), "step_seconds")]
            for bad, expected in rows:
                with self.subTest(bad=os.path.basename(bad)):
                    p = self.run_cli(good, bad)
                    self.assertEqual(p.returncode, 2)
                    self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
                    self.assertIn(bad, p.stderr)
                    self.assertIn(expected, p.stderr)
            p = self.run_cli(good)
            self.assertEqual((p.returncode, p.stderr.count("\n")), (2, 1))



class RelativeErrorTest(unittest.TestCase):
    """stats.relative_error: the Python twin of trace::relative_error."""

    def test_signed_fraction_of_the_measurement_and_nan_without_one(self):
        self.assertAlmostEqual(stats.relative_error(1.1, 1.0), 0.1)
        self.assertAlmostEqual(stats.relative_error(0.75, 1.0), -0.25)
        self.assertTrue(math.isnan(stats.relative_error(1.0, 0.0)))

if __name__ == "__main__":
    unittest.main()
