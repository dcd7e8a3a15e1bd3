"""runtime/bench/compare.py: the ratio, spread and significance it reports for known inputs."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPARE = os.path.join(ROOT, "runtime", "bench", "compare.py")


def write(directory, name, steps):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump({"rank": 0, "step_seconds": steps}, f)
    return path


class CompareTest(unittest.TestCase):
    def run_compare(self, a_runs, b_runs):
        with tempfile.TemporaryDirectory() as d:
            a = [write(d, f"a{i}.json", s) for i, s in enumerate(a_runs)]
            b = [write(d, f"b{i}.json", s) for i, s in enumerate(b_runs)]
            out = os.path.join(d, "c.json")
            subprocess.run([sys.executable, COMPARE, "--names", "x,y", "--json", out, *a, "--", *b],
                           check=True, capture_output=True)
            with open(out) as f:
                return json.load(f)

    def test_ratio_of_medians_of_repetition_medians(self):
        # Repetition medians: A = 2, 4, 6 ms; B = 1, 2, 3 ms -> ratio 4/2 = 2 and every pair 2.
        r = self.run_compare([[0.002, 0.002, 0.009], [0.004], [0.006, 0.001, 0.007]],
                             [[0.001], [0.002], [0.003]])
        self.assertAlmostEqual(r["ratio_of_medians"], 2.0)
        self.assertAlmostEqual(r["pair_ratio_min"], 2.0)
        self.assertAlmostEqual(r["pair_ratio_max"], 2.0)
        self.assertEqual(r["repetitions"], 3)

    def test_separated_sets_are_significant_and_equal_ones_are_not(self):
        fast = [[0.001 * (1 + i / 100)] for i in range(7)]
        slow = [[0.002 * (1 + i / 100)] for i in range(7)]
        self.assertLess(self.run_compare(slow, fast)["mann_whitney_p"], 0.01)  # scipy: 0.00217
        self.assertGreater(self.run_compare(fast, fast)["mann_whitney_p"], 0.9)

    def test_bad_file_is_one_line_naming_it(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("{}")
            p = subprocess.run([sys.executable, COMPARE, bad, "--", bad], capture_output=True, text=True)
            self.assertNotEqual(p.returncode, 0)
            self.assertEqual(p.stderr.count("\n"), 1)
            self.assertIn(bad, p.stderr)


if __name__ == "__main__":
    unittest.main()
