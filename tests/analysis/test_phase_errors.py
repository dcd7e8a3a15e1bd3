"""simulator/bench/phase_errors.py against a hand-made results folder: a baseline and one
bucket-cap point whose prediction gets the iteration right through two phase errors of
opposite sign, and whose autograd grows with the transfers beside it at a known slope."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from fixtures import SOURCE_DIR, write_phase_trace

SCRIPT = os.path.join(SOURCE_DIR, "simulator", "bench", "phase_errors.py")
FORWARD, OPTIMIZER = 10, 5


def write_trace(folder, autograd, transfer, after, iterations=8):
    """Both ranks alike: forward, then autograd of `autograd` ms with one all-reduce in flight
    from transfer[0] to transfer[1] ms after backward_begin, `after` ms to backward_end, the step."""
    write_phase_trace(folder, FORWARD, autograd, transfer, after, OPTIMIZER, iterations)


class PhaseErrors(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="phase-errors-")
        self.folder = os.path.join(self.tmp.name, "whatif-bucket")
        # Baseline: autograd 40 ms, 20 of them beside the transfer. The point, measured: 46 ms,
        # 40 beside it (autograd = 34 + 0.3 x beside). Predicted: autograd 42 ms with 35 beside,
        # and 4 ms more after the gradients: the iteration comes out exact.
        write_trace(os.path.join(self.folder, "traces", "base-rep0"), 40, (10, 30), 10)
        write_trace(os.path.join(self.folder, "traces", "capB-rep0"), 46, (5, 45), 10)
        write_trace(os.path.join(self.folder, "predictions", "capB-rep0-from-base"), 42, (5, 40), 14)
        lines = ["experiment,point,rep,kind,status,error_pct,trace_dir,predicted_dir,slowdown,delay,delay_dist\n",
                 "whatif-bucket,base,0,reconstruction,ok,0.2,traces/base-rep0,predictions/base-rep0,,,\n",
                 "whatif-bucket,capB,0,prediction,ok,0.0,traces/capB-rep0,predictions/capB-rep0-from-base,,,\n",
                 "whatif-bucket,capB,1,prediction,failed,,traces/capB-rep1,,,,\n"]  # not read
        with open(os.path.join(self.folder, "summary.csv"), "w") as handle:
            handle.write("".join(lines))

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)

    def test_each_phase_predicted_minus_measured_and_the_slope_of_autograd_on_transfers(self):
        out = os.path.join(self.tmp.name, "out.json")
        result = self.run_script(self.folder, "--json", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as handle:
            (experiment,) = json.load(handle)
        self.assertEqual(experiment["experiment"], "whatif-bucket")
        self.assertEqual(list(experiment["points"]), ["capB"])
        for rank in ("0", "1"):
            phases = experiment["points"]["capB"]["ranks"][rank]
            expected = {"iteration": 0, "forward": 0, "autograd": -4, "beside_transfers": -5, "after_grads": 4,
                        "optimizer": 0}
            for phase, value in expected.items():
                self.assertAlmostEqual(phases[phase]["median"], value, places=6, msg=(rank, phase))
                self.assertEqual(phases[phase]["pairs"], 1)
            fit = experiment["autograd_vs_transfers"][rank]
            self.assertAlmostEqual(fit["slope"], 0.3, places=6)
            self.assertAlmostEqual(fit["work_ms"], 34, places=6)
            self.assertEqual((fit["traces"], fit["configurations"]), (2, 2))
        self.assertIn("rank 0: autograd = 34.0 ms + 0.300 x beside_transfers", result.stdout)
        # Each point's own runs as measured, the baseline's too, each run once.
        self.assertEqual(experiment["measured"]["base"]["0"]["autograd"]["median"], 40)
        self.assertEqual(experiment["measured"]["base"]["1"]["beside_transfers"]["median"], 20)
        self.assertEqual(experiment["measured"]["capB"]["0"]["after_grads"]["median"], 10)
        self.assertEqual(experiment["measured"]["capB"]["0"]["iteration"]["pairs"], 1)

    def test_one_configuration_fits_no_slope(self):
        with open(os.path.join(self.folder, "summary.csv")) as handle:
            lines = handle.readlines()
        with open(os.path.join(self.folder, "summary.csv"), "w") as handle:  # the point slowed: not fitted
            handle.write("".join(lines[:2]) + lines[2].replace(",,,\n", ",1=2,,\n"))
        out = os.path.join(self.tmp.name, "out.json")
        result = self.run_script(self.folder, "--json", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as handle:
            (experiment,) = json.load(handle)
        self.assertEqual(experiment["autograd_vs_transfers"], {"0": None, "1": None})
        self.assertNotIn("x beside_transfers", result.stdout)

    def test_sittings_of_one_spec_pool_their_pairs(self):
        import shutil
        second = os.path.join(self.tmp.name, "second", "whatif-bucket")
        shutil.copytree(self.folder, second)
        # The second sitting's prediction misses autograd by -8 ms: pooled median -6 over 2 pairs.
        predicted = os.path.join(second, "predictions", "capB-rep0-from-base")
        shutil.rmtree(predicted)
        write_trace(predicted, 38, (5, 38), 14)
        out = os.path.join(self.tmp.name, "out.json")
        result = self.run_script(self.folder, second, "--json", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as handle:
            first, other, together = json.load(handle)
        self.assertEqual(together["folder"], "all 2 folders")
        self.assertAlmostEqual(other["points"]["capB"]["ranks"]["0"]["autograd"]["median"], -8, places=6)
        autograd = together["points"]["capB"]["ranks"]["0"]["autograd"]
        self.assertEqual(autograd["pairs"], 2)
        self.assertAlmostEqual(autograd["median"], -6, places=6)
        fit = together["autograd_vs_transfers"]["0"]
        self.assertEqual((fit["traces"], fit["folders"]), (4, 2))
        self.assertAlmostEqual(fit["slope"], 0.3, places=6)
        self.assertIn("0.300 x beside_transfers (median of 2 folders' fits", result.stdout)
        self.assertIn("all 2 folders (whatif-bucket)", result.stdout)

    def test_bad_input_is_one_line_naming_the_file(self):
        missing = os.path.join(self.tmp.name, "nowhere")
        result = self.run_script(missing)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn(os.path.join(missing, "summary.csv") + ": expected a ddp-experiment summary", result.stderr)
        result = self.run_script(self.folder, "--json", os.path.join(missing, "out.json"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("--json: expected a file in an existing folder", result.stderr)
        # A predicted trace with too few iterations: named, with what was expected.
        short = os.path.join(self.folder, "predictions", "capB-rep0-from-base")
        for rank in (0, 1):
            os.remove(os.path.join(short, f"rank-{rank}.events.csv"))
        os.rmdir(short)
        write_trace(short, 42, (5, 40), 14, iterations=4)
        result = self.run_script(self.folder)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn("rank-0.events.csv: expected at least 5 complete iterations after the first 2, got 2",
                      result.stderr)
        # A trace folder without any rank's events: named, in one line.
        for rank in (0, 1):
            os.remove(os.path.join(short, f"rank-{rank}.events.csv"))
        result = self.run_script(self.folder)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn(short + ": expected rank-R.events.csv files, got none", result.stderr)


if __name__ == "__main__":
    unittest.main()
