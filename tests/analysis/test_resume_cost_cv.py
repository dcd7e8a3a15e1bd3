"""simulator/bench/resume_cost_cv.py: errors linear in the resume cost, the cost that zeroes the
pooled bias, leave-one-sitting-out worked by hand, and one-line refusals before any copy."""
import os
import subprocess
import sys
import tempfile
import unittest

from fixtures import SOURCE_DIR, write_results_folder

BENCH = os.path.join(SOURCE_DIR, "simulator", "bench")
sys.path.insert(0, BENCH)
import resume_cost_cv  # noqa: E402

HIGH = 0.0004
SPEC = ('[predict]\nbaseline = { slowdown = "" }\n'
        'replay_args = ["--core-sharing", "paced", "--sleep-resume-cost", "0.0001", "--runs", "21"]\n')


def sitting(at_zero, at_high):
    """Two pairs with these errors (%) at cost 0 and at HIGH."""
    return ({"p1": at_zero, "p2": at_zero}, {"p1": at_high, "p2": at_high})


class ResumeCostCv(unittest.TestCase):
    def test_a_pairs_error_is_linear_in_the_cost(self):
        low, high = {"a": -4.0, "b": 1.0}, {"a": 4.0, "b": 1.0}
        at = resume_cost_cv.at_cost(low, high, HIGH, 0.0001)
        self.assertAlmostEqual(at["a"], -2.0)
        self.assertAlmostEqual(at["b"], 1.0)

    def test_the_fitted_cost_zeroes_the_pooled_median_signed_error(self):
        # -3, -2, -1 % at 0 and 1, 2, 3 % at 0.4 ms: the median crosses zero at 0.2 ms.
        pairs = ({"a": -3.0, "b": -2.0, "c": -1.0}, {"a": 1.0, "b": 2.0, "c": 3.0})
        self.assertAlmostEqual(resume_cost_cv.fitted_cost([pairs, pairs], HIGH), 0.0002)

    def test_each_sitting_is_predicted_with_the_cost_the_others_fit(self):
        # Error = e0 + 10 % per ms of cost. A crosses zero at 0.2 ms, B at 0.4, C at 0.3; the spec
        # charges 0.1 ms. Without A: B and C's pooled median -3.5 + 10 c is zero at 0.35 ms, where
        # A is +1.5 % (the spec's cost: -1 %), so no pair comes closer. Without B: 0.25 ms, B
        # -1.5 % (spec -3 %). Without C: 0.3 ms, C 0 % (spec -2 %).
        errors = {"A": sitting(-2.0, 2.0), "B": sitting(-4.0, 0.0), "C": sitting(-3.0, 1.0)}
        rows, total = resume_cost_cv.cross_validate(errors, HIGH, 0.0001)
        by_name = {r["sitting"]: r for r in rows}
        for name, cost_ms, spec, fitted, closer in (("A", 0.35, -1.0, 1.5, 0), ("B", 0.25, -3.0, -1.5, 2),
                                                    ("C", 0.30, -2.0, 0.0, 2)):
            row = by_name[name]
            self.assertAlmostEqual(row["fitted_cost_s"] * 1e3, cost_ms, msg=name)
            self.assertAlmostEqual(row["spec_median_pct"], spec, msg=name)
            self.assertAlmostEqual(row["fitted_median_pct"], fitted, msg=name)
            self.assertEqual(row["closer"], closer, name)
        self.assertEqual((total["sittings"], total["sittings_closer"]), (3, 2))
        self.assertEqual((total["pairs"], total["closer"]), (6, 4))
        self.assertAlmostEqual(total["fitted_median_abs_pct"], 1.5)
        self.assertAlmostEqual(total["spec_median_abs_pct"], 2.0)
        # All three: the median of -2, -2, -3, -3, -4, -4 plus 10 c is zero at 0.3 ms.
        self.assertAlmostEqual(total["cost_fitted_on_all_s"] * 1e3, 0.3)

    def test_bad_input_is_one_line_and_nothing_is_copied(self):
        for spec, folders, extra, expected in (
                ('[predict]\nreplay_args = ["--runs", "21"]\n', 3, [],
                 'expected a spec with one "--sleep-resume-cost" in its replay_args, got 0'),
                (SPEC, 2, [], "expected three sittings or more to leave one out, got 2"),
                (SPEC, 3, ["--high", "0"], "--high: expected a cost > 0 s, got 0.0")):
            with self.subTest(expected=expected), tempfile.TemporaryDirectory() as root:
                spec_path = os.path.join(root, "spec.toml")
                with open(spec_path, "w") as handle:
                    handle.write(spec)
                paths = [write_results_folder(os.path.join(root, f"s{i}"), SPEC) for i in range(folders)]
                work = os.path.join(root, "work")
                done = subprocess.run([sys.executable, os.path.join(BENCH, "resume_cost_cv.py"), "--spec", spec_path,
                                       *paths, "--work", work, *extra], capture_output=True, text=True)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertEqual(done.stderr.count("\n"), 1, done.stderr)
                self.assertTrue(done.stderr.startswith("resume_cost_cv.py: "), done.stderr)
                self.assertIn(expected, done.stderr)
                self.assertFalse(os.path.exists(work))


if __name__ == "__main__":
    unittest.main()
