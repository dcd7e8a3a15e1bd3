"""simulator/bench/resume_cost_repredict.py: the resume cost it charges (a hand-worked fraction of
sleep_resume_cost.py's median), the spec it writes, and its one-line refusals before any copy."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from fixtures import SOURCE_DIR, write_results_folder

BENCH = os.path.join(SOURCE_DIR, "simulator", "bench")
sys.path.insert(0, BENCH)
import resume_cost_repredict  # noqa: E402

SPEC = ('[predict]\nbaseline = { slowdown = "" }\n'
        'replay_args = ["--core-sharing", "paced", "--sleep-resume-cost", "0.00008", "--runs", "21"]\n')


def results_folder(root, spec):
    return write_results_folder(os.path.join(root, "whatif-slowdown"), spec)


class ResumeCostRepredict(unittest.TestCase):
    def test_the_cost_is_the_fraction_of_the_median_in_seconds(self):
        with tempfile.TemporaryDirectory() as root:
            path = os.path.join(root, "resume.json")
            with open(path, "w") as handle:
                json.dump({"resume_cost_ms_median": 0.4, "pairs": []}, handle)
            self.assertAlmostEqual(resume_cost_repredict.resume_cost_s(path, 0.5), 0.0002)
            self.assertAlmostEqual(resume_cost_repredict.resume_cost_s(path, 1.0), 0.0004)

    def test_the_spec_gets_the_measured_cost_and_nothing_else_changes(self):
        with tempfile.TemporaryDirectory() as root:
            text = resume_cost_repredict.measured_spec(results_folder(root, SPEC), 0.000224)
            self.assertEqual(text, SPEC.replace('"0.00008"', '"0.000224"'))

    def test_bad_input_is_one_line_and_nothing_is_copied(self):
        for spec, resume, expected in (
                ('[predict]\nreplay_args = ["--runs", "21"]\n', {"resume_cost_ms_median": 0.4},
                 'expected a spec with one "--sleep-resume-cost" in its replay_args, got 0'),
                (SPEC, {"pairs": []}, "expected sleep_resume_cost.py's JSON with resume_cost_ms_median"),
                (SPEC, {"resume_cost_ms_median": -0.1}, "expected a resume cost >= 0 ms, got -0.1")):
            with self.subTest(expected=expected), tempfile.TemporaryDirectory() as root:
                folder = results_folder(root, spec)
                path = os.path.join(root, "resume.json")
                with open(path, "w") as handle:
                    json.dump(resume, handle)
                work = os.path.join(root, "work")
                done = subprocess.run([sys.executable, os.path.join(BENCH, "resume_cost_repredict.py"), folder,
                                       "--resume-json", path, "--work", work], capture_output=True, text=True)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertEqual(done.stderr.count("\n"), 1, done.stderr)
                self.assertTrue(done.stderr.startswith("resume_cost_repredict.py: "), done.stderr)
                self.assertIn(expected, done.stderr)
                self.assertFalse(os.path.exists(work))

    def test_a_fraction_outside_0_1_is_refused(self):
        with tempfile.TemporaryDirectory() as root:
            folder = results_folder(root, SPEC)
            path = os.path.join(root, "resume.json")
            with open(path, "w") as handle:
                json.dump({"resume_cost_ms_median": 0.4}, handle)
            done = subprocess.run([sys.executable, os.path.join(BENCH, "resume_cost_repredict.py"), folder,
                                   "--resume-json", path, "--fraction", "0", "--work", os.path.join(root, "w")],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertEqual(done.stderr, "resume_cost_repredict.py: --fraction: expected a fraction in (0, 1], got 0.0\n")


if __name__ == "__main__":
    unittest.main()
