"""simulator/bench/speed_floor.py against hand-made results folders: runs of a baseline and of
one what-if point, one of them on a machine at half speed, with known phases."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

from fixtures import SOURCE_DIR, write_phase_trace

SCRIPT = os.path.join(SOURCE_DIR, "simulator", "bench", "speed_floor.py")
HEADER = "rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message\n"


def write_trace(folder, forward, autograd, after, optimizer):
    """Both ranks alike: an all-reduce beside autograd's second half and half of `after`."""
    write_phase_trace(folder, forward, autograd, (autograd / 2, autograd + after / 2), after, optimizer)


# (forward, autograd, after, optimizer) ms. Run 1 of each point ran on a machine at half speed:
# its compute doubled, its communication (after) not.
BASE = [(10, 40, 10, 5), (20, 80, 10, 10), (10, 40, 10, 5)]
X = [(10, 50, 5, 5), (20, 100, 5, 10), (10, 50, 7, 5)]
PREDICTED = (10, 50, 5, 5)  # the model's x at the baseline's (normal) speed: 70 ms


def iteration(phases):
    return sum(phases)


def share(phases):
    forward, autograd, _, optimizer = phases
    return (forward + autograd + optimizer) / iteration(phases)


def write_folder(folder):
    lines = ["experiment,point,rep,kind,status,error_pct,measured_iter_s,predicted_iter_s,trace_dir,predicted_dir\n"]
    for point, runs in (("base", BASE), ("x", X)):
        for rep, phases in enumerate(runs):
            write_trace(os.path.join(folder, "traces", f"{point}-rep{rep}"), *phases)
            measured = iteration(phases) / 1000
            lines.append(f"whatif-x,{point},{rep},reconstruction,ok,0.5,{measured},{measured},"
                         f"traces/{point}-rep{rep},predictions/{point}-rep{rep}\n")
    for rep, phases in enumerate(X):
        write_trace(os.path.join(folder, "predictions", f"x-rep{rep}-from-base"), *PREDICTED)
        measured, predicted = iteration(phases) / 1000, iteration(PREDICTED) / 1000
        lines.append(f"whatif-x,x,{rep},prediction,ok,{100 * (predicted / measured - 1)},{measured},{predicted},"
                     f"traces/x-rep{rep},predictions/x-rep{rep}-from-base\n")
    lines.append("whatif-x,x,3,prediction,failed,,,,traces/x-rep3,\n")  # not read
    with open(os.path.join(folder, "summary.csv"), "w") as handle:
        handle.write("".join(lines))


def floor_errors(runs):
    """Each run predicted by the median of its point's others: (error %, error % at its speed)."""
    result = []
    for index, run in enumerate(runs):
        others = runs[:index] + runs[index + 1:]
        predicted = statistics.median(iteration(o) for o in others)
        gauge = run[0] / statistics.median(o[0] for o in others)
        stretched = predicted * (1 + (gauge - 1) * statistics.median(share(o) for o in others))
        result.append((100 * (predicted / iteration(run) - 1), 100 * (stretched / iteration(run) - 1)))
    return result


class SpeedFloor(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="speed-floor-")
        self.folders = [os.path.join(self.tmp.name, sitting, "whatif-x") for sitting in ("a", "b")]
        for folder in self.folders:
            write_folder(folder)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)

    def test_model_and_floor_plain_and_at_the_measured_speed(self):
        out = os.path.join(self.tmp.name, "out.json")
        result = self.run_script(*self.folders, "--json", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as handle:
            first, second, pooled = json.load(handle)
        self.assertEqual(first["folder"], self.folders[0])
        self.assertEqual(pooled["folder"], "all 2 folders")
        # The model: exact on run 0, -48 % on the slow run 1 that the speed explains whole
        # (gauge 20 / 10, share 65 / 70: 70 x (1 + 65/70) = 135 ms), -2.8 % on run 2 that it
        # does not (its all-reduces took 2 ms more; gauge 1).
        plain = [abs(100 * (70 / iteration(run) - 1)) for run in X]
        model = first["model"]
        self.assertEqual(model["n"], 3)
        self.assertAlmostEqual(model["median"], sorted(plain)[1], places=6)
        self.assertAlmostEqual(model["at_speed_median"], 0, places=6)  # |at speed|: 0, 0, 2.78
        self.assertAlmostEqual(model["at_speed_p90"], 0.8 * 100 * (1 - 70 / 72), places=6)
        # The floor: the six runs, each from its point's other two.
        floor = floor_errors(BASE) + floor_errors(X)
        self.assertEqual(first["floor"]["n"], 6)
        self.assertAlmostEqual(first["floor"]["median"], statistics.median(abs(e) for e, _ in floor), places=6)
        self.assertAlmostEqual(first["floor"]["at_speed_median"], statistics.median(abs(e) for _, e in floor),
                               places=6)
        self.assertLess(first["floor"]["at_speed_median"], first["floor"]["median"])  # the gauge helps here
        # Two sittings of one spec: their pairs together.
        self.assertEqual(pooled["model"]["n"], 6)
        self.assertEqual(pooled["floor"]["n"], 12)
        self.assertAlmostEqual(pooled["model"]["median"], model["median"], places=6)
        self.assertIn("all 2 folders", result.stdout)

    def test_bad_input_is_one_line_and_exit_2(self):
        cases = []
        os.remove(os.path.join(self.folders[1], "predictions", "x-rep1-from-base", "rank-0.events.csv"))
        with open(os.path.join(self.folders[1], "predictions", "x-rep1-from-base", "rank-1.events.csv"), "w") as h:
            h.write(HEADER)  # no iteration
        cases.append((self.folders[1], "x-rep1-from-base"))
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(empty)
        with open(os.path.join(empty, "summary.csv"), "w") as handle:
            handle.write("experiment,point\nwhatif-x,x\n")
        cases.append((empty, "expected columns"))
        for folder, message in cases:
            result = self.run_script(folder)
            self.assertEqual(result.returncode, 2, result.stdout)
            self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
            self.assertTrue(result.stderr.startswith("speed_floor.py: "), result.stderr)
            self.assertIn(message, result.stderr)


if __name__ == "__main__":
    unittest.main()
