"""simulator/bench/run_length_noise.py with stand-in ddp-launch and ddp-trace whose runs' medians
swing by a known amount that depends on the run's length: the script must report each length's
spread, keep every run, and refuse bad input in one line."""
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from fixtures import SOURCE_DIR, write_tools

SCRIPT = os.path.join(SOURCE_DIR, "simulator", "bench", "run_length_noise.py")

# ddp-launch writes the run's --iterations and a call count into its trace folder; ddp-trace
# answers a median of 100 ms times 1.10 or 1/1.10 in turn for 30-iteration runs and 1.02 or
# 1/1.02 for longer ones (the i-th run of a length: up on even i, down on odd).
FAKE_LAUNCH = textwrap.dedent('''\
    #!{python}
    import os, sys
    args = sys.argv[sys.argv.index("--") + 1:]
    trace = args[args.index("--trace-dir") + 1]
    iterations = int(args[args.index("--iterations") + 1])
    count_file = os.path.join(os.path.dirname(trace), f"calls-{{iterations}}")
    calls = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1
    open(count_file, "w").write(str(calls))
    os.makedirs(trace)
    open(os.path.join(trace, "run"), "w").write(f"{{iterations}} {{calls}}")
    ''').format(python=sys.executable)
FAKE_TRACE = textwrap.dedent('''\
    #!{python}
    import json, os, sys
    iterations, calls = map(int, open(os.path.join(sys.argv[-1], "run")).read().split())
    swing = 1.10 if iterations == 30 else 1.02
    print(json.dumps({{"median_iteration_s": 0.1 * (swing if calls % 2 else 1 / swing)}}))
    ''').format(python=sys.executable)


class RunLengthNoise(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="run-length-")
        self.bin = os.path.join(self.tmp.name, "bin")
        write_tools(self.bin, {"ddp-launch": FAKE_LAUNCH, "ddp-train": "#!/bin/sh\nexit 0\n", "ddp-trace": FAKE_TRACE})
        self.out = os.path.join(self.tmp.name, "noise.json")

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *flags):
        return subprocess.run([sys.executable, SCRIPT, "--out", self.out, "--bin-dir", self.bin,
                               "--keep", os.path.join(self.tmp.name, "traces"), *flags, "--", "--model", "mlp"],
                              capture_output=True, text=True)

    def test_reports_each_lengths_spread(self):
        result = self.run_script("--rounds", "4", "--lengths", "30,100")
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.load(open(self.out))
        self.assertEqual(report["lengths"], [30, 100])
        self.assertEqual([r["iterations"] for r in report["runs"]], [30, 100] * 4)
        short, long = report["by_length"]["30"], report["by_length"]["100"]
        self.assertEqual(short["runs"], 4)
        # Medians 0.1 * 1.1^(+-1): the centre is 0.1 and every run deviates by log(1.1).
        self.assertAlmostEqual(short["median_s"], 0.1, places=9)
        self.assertAlmostEqual(short["median_abs_dev_pct"], 100 * math.log(1.10), places=6)
        self.assertAlmostEqual(long["p90_abs_dev_pct"], 100 * math.log(1.02), places=6)
        # sd of four logs +-a about 0: a * sqrt(4/3).
        self.assertAlmostEqual(short["sd_log_pct"], 100 * math.log(1.10) * math.sqrt(4 / 3), places=6)
        self.assertLess(long["sd_log_pct"], short["sd_log_pct"] / 4)

    def test_refuses_bad_input_in_one_line(self):
        cases = [
            (["--lengths", "30,x"], "--lengths: expected distinct iteration counts >= 4"),
            (["--lengths", "30,30"], "--lengths: expected distinct iteration counts >= 4"),
            (["--rounds", "1"], "--rounds: expected >= 2"),
            (["--world-size", "0"], "--world-size >= 1, got 10 and 0"),
        ]
        for flags, message in cases:
            with self.subTest(flags=flags):
                result = self.run_script(*flags)
                self.assertEqual(result.returncode, 2)
                self.assertIn(message, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertFalse(os.path.exists(self.out))
        result = subprocess.run([sys.executable, SCRIPT, "--out", self.out, "--bin-dir", self.tmp.name, "--", "--x"],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--bin-dir: expected ddp-launch in", result.stderr)
        result = subprocess.run([sys.executable, SCRIPT, "--out", self.out, "--bin-dir", self.bin, "--",
                                 "--iterations", "50"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr, "run_length_noise.py: --iterations: expected only in --lengths, "
                                        "not among ddp-train's flags\n")
        self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    unittest.main()
