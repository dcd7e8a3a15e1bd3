"""simulator/bench/slowdown_compute.py against a hand-made results folder whose ranks compute known
amounts around known sleeps."""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

from fixtures import SOURCE_DIR

SCRIPT = os.path.join(SOURCE_DIR, "simulator", "bench", "slowdown_compute.py")
HEADER = "rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message\n"
MS = 1_000_000
# Baseline compute per iteration: forward 10 ms, autograd 20 ms, optimizer 5 ms = 35 ms.
FORWARD, AUTOGRAD, OPTIMIZER = 10, 20, 5
# Per repetition: how much longer rank 1 computes when slowed, and rank 0 beside it.
RANK1_SCALE = [1.1, 1.2, 1.0]
RANK0_SCALE = [0.95, 1.0, 1.05]
SLEEPS = 2  # per iteration, inside the autograd


def write_rank(folder, rank, scale, sleeps):
    rows, t = [], 0
    for iteration in range(8):
        rows.append(f"{rank},{iteration},forward_begin,{t},,,,,,\n")
        t += int(FORWARD * scale * MS)
        rows.append(f"{rank},{iteration},forward_end,{t},,,,,,\n")
        rows.append(f"{rank},{iteration},backward_begin,{t},,,,,,\n")
        step = int(AUTOGRAD * scale * MS) // (sleeps + 1)
        for _ in range(sleeps):  # compute, sleep 7 ms, compute ...
            t += step
            rows.append(f"{rank},{iteration},delay,{t},,,,{7 * MS},slowdown,\n")
            t += 7 * MS
        t += int(AUTOGRAD * scale * MS) - sleeps * step
        rows.append(f"{rank},{iteration},grad_ready,{t},,0,,,,\n")
        rows.append(f"{rank},{iteration},optimizer_begin,{t},,,,,,\n")
        t += int(OPTIMIZER * scale * MS)
        rows.append(f"{rank},{iteration},optimizer_end,{t},,,,,,\n")
        t += 3 * MS
    with open(os.path.join(folder, f"rank-{rank}.events.csv"), "w") as handle:
        handle.write(HEADER + "".join(rows))


class SlowdownCompute(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="slowdown-compute-")
        self.folder = os.path.join(self.tmp.name, "whatif-slowdown")
        lines = ["kind,status,error_pct,trace_dir,replayed_trace,point,slowdown\n"]
        # Each prediction misses by -50 ln(rank 1's compute ratio): r = -1.
        self.errors = [-50 * math.log(scale) for scale in RANK1_SCALE]
        for rep in range(3):
            for name, scales, sleeps in ((f"base-rep{rep}", (1.0, 1.0), 0),
                                         (f"slow1-2-rep{rep}", (RANK0_SCALE[rep], RANK1_SCALE[rep]), SLEEPS)):
                os.makedirs(os.path.join(self.folder, "traces", name))
                write_rank(os.path.join(self.folder, "traces", name), 0, scales[0], 0)
                write_rank(os.path.join(self.folder, "traces", name), 1, scales[1], sleeps)
            lines.append(f"reconstruction,ok,0.1,traces/base-rep{rep},traces/base-rep{rep},base,\n")
            lines.append(f"prediction,ok,{self.errors[rep]},traces/slow1-2-rep{rep},traces/base-rep{rep},"
                         f"slow1-2,1=2\n")
        lines.append("prediction,failed,,traces/slow1-2-rep0,traces/base-rep0,slow1-2,1=2\n")  # not counted
        self.summary = os.path.join(self.folder, "summary.csv")
        with open(self.summary, "w") as handle:
            handle.write("".join(lines))

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)

    def test_each_ranks_compute_against_its_baseline_sleeps_cut_out(self):
        out = os.path.join(self.tmp.name, "out.json")
        result = self.run_script(self.folder, "--json", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as handle:
            (experiment,) = json.load(handle)
        self.assertEqual(experiment["experiment"], "whatif-slowdown")
        pairs = experiment["pairs"]
        self.assertEqual(len(pairs), 3)
        for rep, pair in enumerate(pairs):
            self.assertAlmostEqual(pair["compute_ratio"]["1"], RANK1_SCALE[rep], places=6)
            self.assertAlmostEqual(pair["compute_ratio"]["0"], RANK0_SCALE[rep], places=6)
            self.assertEqual(pair["slowed"], [1])
            # (measured - baseline compute) / sleeps per iteration, in ms.
            self.assertAlmostEqual(pair["extra_ms_per_sleep"], 35 * (RANK1_SCALE[rep] - 1) / SLEEPS, places=5)
        point, total = experiment["rows"]
        self.assertEqual((point["point"], total["point"]), ("slow1-2", "all"))
        self.assertAlmostEqual(total["compute_ratio"]["1"], statistics.median(RANK1_SCALE), places=6)
        self.assertAlmostEqual(total["median_error_pct"], statistics.median(self.errors), places=6)
        self.assertAlmostEqual(total["r"], -1.0, places=6)
        self.assertIsNone(point["r"])
        self.assertIn("1.750", result.stdout)  # rep 0's 35 * 0.1 / 2 ms is the median extra/sleep

    def test_bad_input_is_one_line(self):
        with open(self.summary, "a") as handle:
            handle.write("prediction,ok,1.0,traces/missing-rep0,traces/base-rep0,slow1-2,1=2\n")
        result = self.run_script(self.folder)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn("missing-rep0: expected a run's trace folder", result.stderr)
        with open(self.summary) as handle:
            text = handle.read().replace("slow1-2,1=2\n", "slow1-2,one=2\n")
        with open(self.summary, "w") as handle:
            handle.write(text)
        result = self.run_script(self.folder)
        self.assertEqual(result.returncode, 2)
        self.assertIn("summary.csv: expected a slowdown column like 1=2, got 'one=2'", result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)


if __name__ == "__main__":
    unittest.main()
