"""simulator/bench/run_drift.py against a hand-made results folder with known forward passes."""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

from fixtures import SOURCE_DIR

SCRIPT = os.path.join(SOURCE_DIR, "simulator", "bench", "run_drift.py")
HEADER = "rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message\n"
MS = 1_000_000
# Rank 0's forward pass per run (ms), and the order the runs started in.
FORWARD = {"base-rep0": 10, "x-rep0": 20, "base-rep1": 11, "x-rep1": 21, "base-rep2": 12, "x-rep2": 25}


def write_run(folder, name, start_ns, forward):
    """Iterations 0..3; iteration 0's forward pass is 5x longer (it is skipped)."""
    os.makedirs(os.path.join(folder, "traces", name), exist_ok=True)
    rows, t = [], start_ns
    for iteration in range(4):
        length = forward * MS * (5 if iteration == 0 else 1)
        rows += [f"0,{iteration},forward_begin,{t},,,,,,\n", f"0,{iteration},forward_end,{t + length},,,,,,\n"]
        t += length + 3 * MS
    with open(os.path.join(folder, "traces", name, "rank-0.events.csv"), "w") as handle:
        handle.write(HEADER + "".join(rows))


class RunDrift(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="run-drift-")
        self.folder = os.path.join(self.tmp.name, "whatif-x")
        for index, (name, forward) in enumerate(FORWARD.items()):
            write_run(self.folder, name, index * 1000 * MS, forward)
        # Each x run predicted from its repetition's base run, error = 0.5 x the speed change + 3.
        self.changes = [100 * (FORWARD[f"base-rep{r}"] / FORWARD[f"x-rep{r}"] - 1) for r in range(3)]
        lines = ["kind,status,error_pct,trace_dir,replayed_trace\n"]
        for rep, change in enumerate(self.changes):
            lines.append(f"reconstruction,ok,0.1,traces/base-rep{rep},traces/base-rep{rep}\n")
            lines.append(f"prediction,ok,{0.5 * change + 3},traces/x-rep{rep},traces/base-rep{rep}\n")
        lines.append("prediction,prediction_error,,traces/x-rep0,traces/base-rep0\n")  # not counted
        with open(os.path.join(self.folder, "summary.csv"), "w") as handle:
            handle.write("".join(lines))

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)

    def test_correlates_each_error_with_the_speed_change_and_measures_the_runs_drift(self):
        out = os.path.join(self.tmp.name, "drift.json")
        result = self.run_script(self.folder, "--json", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as handle:
            (drift,) = json.load(handle)
        self.assertEqual(drift["pairs"], 3)
        self.assertEqual(drift["runs"], 6)
        for got, expected in zip(drift["speed_change_pct"], self.changes):
            self.assertAlmostEqual(got, expected, places=9)
        self.assertAlmostEqual(drift["r"], 1.0, places=9)  # errors are a line of the changes
        self.assertAlmostEqual(drift["median_abs_error_pct"], abs(0.5 * sorted(self.changes)[1] + 3), places=9)
        # In start order, each run's log forward / its point's median forward.
        medians = {"base": statistics.median([10, 11, 12]), "x": statistics.median([20, 21, 25])}
        speed = [math.log(f / medians[name.split("-")[0]]) for name, f in FORWARD.items()]
        self.assertAlmostEqual(drift["spread_pct"], 100 * statistics.pstdev(speed), places=9)
        self.assertAlmostEqual(drift["lag1"], statistics.correlation(speed[:-1], speed[1:]), places=9)
        self.assertIn("whatif-x", result.stdout)
        self.assertIn("+1.00", result.stdout)

    def test_bad_input_is_one_line_and_exit_2(self):
        missing = os.path.join(self.tmp.name, "nowhere")
        result = self.run_script(missing)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn(os.path.join(missing, "summary.csv") + ": expected a ddp-experiment summary", result.stderr)
        os.remove(os.path.join(self.folder, "traces", "base-rep1", "rank-0.events.csv"))
        result = self.run_script(self.folder)
        self.assertEqual(result.returncode, 2)
        self.assertIn("rank-0.events.csv: expected a readable rank events CSV", result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        # A summary naming a run whose trace folder is gone.
        with open(os.path.join(self.folder, "summary.csv"), "a") as handle:
            handle.write("prediction,ok,1.0,traces/y-rep0,traces/base-rep0\n")
        write_run(self.folder, "base-rep1", 0, 10)  # the rank-0 file removed above, back
        result = self.run_script(self.folder)
        self.assertEqual(result.returncode, 2)
        self.assertIn("summary.csv: expected traces of y-rep0 and base-rep0 in", result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)


if __name__ == "__main__":
    unittest.main()
