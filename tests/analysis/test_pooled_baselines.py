"""simulator/bench/pooled_baselines.py: its paired comparison against hand-worked answers, and
the specs it refuses to pool (one line, exit 2, nothing copied)."""
import os
import subprocess
import sys
import tempfile
import unittest

from fixtures import SOURCE_DIR, write_results_folder

BENCH = os.path.join(SOURCE_DIR, "simulator", "bench")
sys.path.insert(0, BENCH)
import pooled_baselines  # noqa: E402


def row(experiment, point, rep, error):
    return {"experiment": experiment, "point": point, "rep": str(rep), "variant": "from-base",
            "kind": "prediction", "status": "ok", "error_pct": str(error)}


class PooledBaselines(unittest.TestCase):
    def test_sign_test(self):
        self.assertAlmostEqual(pooled_baselines.sign_test_p(0, 5), 2 / 32)
        self.assertAlmostEqual(pooled_baselines.sign_test_p(5, 5), 2 / 32)
        self.assertAlmostEqual(pooled_baselines.sign_test_p(10, 20), 1.0)
        self.assertAlmostEqual(pooled_baselines.sign_test_p(1, 4), 2 * 5 / 16)

    def test_only_twins_are_compared(self):
        single = {("a", "0", "from-base"): row("x", "a", 0, -10), ("a", "1", "from-base"): row("x", "a", 1, 4),
                  ("b", "0", "from-base"): row("x", "b", 0, 2)}
        pooled = {("a", "0", "from-base"): row("x", "a", 0, 1), ("a", "1", "from-base"): row("x", "a", 1, -2)}
        table = pooled_baselines.compare(single, pooled)
        self.assertEqual(table["x"]["pairs"], 2)
        self.assertEqual(table["x"]["pooled_closer"], 2)
        self.assertAlmostEqual(table["x"]["single_median_abs_pct"], 7)
        self.assertAlmostEqual(table["x"]["pooled_median_abs_pct"], 1.5)
        self.assertAlmostEqual(table["x"]["single_median_pct"], -3)
        self.assertAlmostEqual(table["x"]["sign_test_p"], 0.5)

    def test_stall_rows_compare_their_distributions_too(self):
        single = {("s", str(r), "from-base"): {**row("d", "s", r, e), "ks_distance": str(k)}
                  for r, e, k in ((0, 5, 0.30), (1, -3, 0.10), (2, 1, 0.20))}
        pooled = {key: {**value, "ks_distance": str(k)} for (key, value), k in zip(single.items(), (0.05, 0.15, 0.25))}
        table = pooled_baselines.compare(single, pooled)
        self.assertAlmostEqual(table["d"]["single_median_ks"], 0.20)
        self.assertAlmostEqual(table["d"]["pooled_median_ks"], 0.15)
        self.assertNotIn("single_median_ks", pooled_baselines.compare(
            {("a", "0", "from-base"): row("x", "a", 0, 1)}, {("a", "0", "from-base"): row("x", "a", 0, 2)})["x"])

    def test_a_spec_without_a_baseline_or_already_pooled_is_refused_before_any_copy(self):
        for spec, expected in (("[experiment]\nname = \"x\"\n", "expected a spec with [predict] baseline"),
                               ("[predict]\nbaseline = { bucket_cap_mb = 25 }\npool_baselines = true\n",
                                "got pool_baselines already")):
            with self.subTest(expected=expected), tempfile.TemporaryDirectory() as folder:
                results = write_results_folder(os.path.join(folder, "x"), spec)
                work = os.path.join(folder, "work")
                done = subprocess.run([sys.executable, os.path.join(BENCH, "pooled_baselines.py"), results,
                                       "--work", work], capture_output=True, text=True)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertEqual(done.stderr.count("\n"), 1, done.stderr)
                self.assertIn(expected, done.stderr)
                self.assertFalse(os.path.exists(work))


if __name__ == "__main__":
    unittest.main()
