"""The bench scripts that read ddp-experiment results folders (simulator/bench/results_folder.py):
bad input is one line on stderr naming the file or flag, exit 2, before any work."""
import os
import subprocess
import sys
import tempfile
import unittest

from fixtures import SOURCE_DIR

BENCH = os.path.join(SOURCE_DIR, "simulator", "bench")
# Each script, and what it says of an empty folder (no summary.csv, no traces/).
EMPTY_FOLDER = {"run_drift.py": "summary.csv: expected a ddp-experiment summary",
                "transfer_whatif.py": "summary.csv: expected a ddp-experiment summary",
                "straggler_naming.py": "expected a ddp-experiment results folder with traces/",
                "pooled_baselines.py": "summary.csv: expected a ddp-experiment summary",
                "advise_pooled.py": "summary.csv: expected a ddp-experiment summary"}


class ResultsFolderScripts(unittest.TestCase):
    def run_script(self, script, *args):
        return subprocess.run([sys.executable, os.path.join(BENCH, script), *args], capture_output=True, text=True)

    def assert_one_line(self, done, script, expected):
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertEqual(done.stderr.count("\n"), 1, done.stderr)
        self.assertTrue(done.stderr.startswith(script + ": "), done.stderr)
        self.assertIn(expected, done.stderr)

    def test_an_empty_folder(self):
        with tempfile.TemporaryDirectory() as folder:
            for script, expected in EMPTY_FOLDER.items():
                with self.subTest(script=script):
                    self.assert_one_line(self.run_script(script, folder), script, expected)

    def test_a_json_file_in_a_missing_folder_is_refused_before_any_work(self):
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "missing", "out.json")
            for script in EMPTY_FOLDER:
                with self.subTest(script=script):
                    self.assert_one_line(self.run_script(script, folder, "--json", out), script,
                                         f"--json: expected a file in an existing folder, got {out}")

    def test_a_summary_without_the_columns_it_needs(self):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "summary.csv"), "w") as handle:
                handle.write("kind,status\nprediction,ok\n")
            done = self.run_script("transfer_whatif.py", folder)
            self.assert_one_line(done, "transfer_whatif.py", "expected columns kind, predicted_dir, status, trace_dir, "
                                                             "got kind, status")

    def test_a_bucket_folder_without_the_advised_baseline(self):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "summary.csv"), "w") as handle:
                handle.write("kind,point,rep,measured_iter_s,trace_dir\n"
                             "reconstruction,cap1,0,0.2,traces/cap1-rep0\n")
            done = self.run_script("advise_pooled.py", folder, "--baseline", "cap25")
            self.assert_one_line(done, "advise_pooled.py", "expected measured runs of --baseline cap25, got points cap1")

    def test_a_bucket_folder_with_one_baseline_trace_has_nothing_to_pool(self):
        with tempfile.TemporaryDirectory() as folder:
            os.makedirs(os.path.join(folder, "traces", "cap25-rep0"))
            with open(os.path.join(folder, "summary.csv"), "w") as handle:
                handle.write("kind,point,rep,measured_iter_s,trace_dir\n"
                             "reconstruction,cap25,0,0.2,traces/cap25-rep0\n"
                             "reconstruction,cap25,1,0.2,traces/cap25-rep1\n")
            done = self.run_script("advise_pooled.py", folder)
            self.assert_one_line(done, "advise_pooled.py", "expected at least 2 baseline traces (cap25-repR) to pool, got 1")


if __name__ == "__main__":
    unittest.main()
