"""ddpsim.bench.sleep_resume_cost (ddpsim-sleep-resume-cost) with a stand-in ddp-launch whose slowed runs pay a known
resume cost after each sleep: the script must find that cost, and refuse bad input in one line."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from fixtures import write_tools

SCRIPT = ["-m", "ddpsim.bench.sleep_resume_cost"]

# Writes rank 0's events for --iterations N: forward 5 ms, two gradients 4 ms apart, optimizer
# 3 ms; with --slowdown 0=F each of the 4 phases' compute is followed by a sleep of (F-1) times
# it and costs 0.25 ms more (the resume after the sleep before it), the fourth call's 0.5 ms.
FAKE_LAUNCH = textwrap.dedent('''\
    #!{python}
    import os, sys
    args = sys.argv[sys.argv.index("--") + 1:]
    trace = args[args.index("--trace-dir") + 1]
    iterations = int(args[args.index("--iterations") + 1])
    factor = float(args[args.index("--slowdown") + 1].split("=")[1]) if "--slowdown" in args else 1.0
    count_file = os.path.join(os.path.dirname(trace), "calls")
    calls = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1
    open(count_file, "w").write(str(calls))
    resume = (0.5 if calls == 4 else 0.25) * 1e6 if factor > 1 else 0
    os.makedirs(trace)
    rows, t = ["rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message"], 0
    def add(i, event, dur="", kind=""):
        rows.append(f"0,{{i}},{{event}},{{int(t)}},,,,{{dur}},{{kind}},")
    def compute(i, ms):
        global t
        t += ms * 1e6 + resume
        if factor > 1:
            sleep = (factor - 1) * (ms * 1e6 + resume)
            add(i, "delay", int(sleep), "slowdown")
            t += sleep
    for i in range(iterations):
        add(i, "iteration_begin"); add(i, "forward_begin"); compute(i, 5); add(i, "forward_end")
        add(i, "backward_begin")
        for g in range(2):
            compute(i, 4); add(i, "grad_ready")
        add(i, "backward_end"); add(i, "optimizer_begin"); compute(i, 3); add(i, "optimizer_end"); add(i, "iteration_end")
    open(os.path.join(trace, "rank-0.events.csv"), "w").write("\\n".join(rows) + "\\n")
    ''').format(python=sys.executable)


class SleepResumeCost(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="sleep-resume-")
        self.bin = os.path.join(self.tmp.name, "bin")
        write_tools(self.bin, {"ddp-launch": FAKE_LAUNCH, "ddp-train": "#!/bin/sh\nexit 0\n"})
        self.out = os.path.join(self.tmp.name, "out.json")

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *flags):
        return subprocess.run([sys.executable, *SCRIPT, "--out", self.out, "--bin-dir", self.bin,
                               "--keep", os.path.join(self.tmp.name, "traces"), *flags, "--", "--model", "mlp"],
                              capture_output=True, text=True, timeout=120)

    def test_finds_the_cost_per_sleep_as_the_median_of_the_pairs(self):
        result = self.run_script("--repetitions", "3", "--iterations", "10", "--factor", "2")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(self.out) as handle:
            numbers = json.load(handle)
        costs = [pair["resume_cost_ms"] for pair in numbers["pairs"]]
        # Calls A B A B A B: the second pair's B (call 4) pays 0.5 ms per sleep, the others 0.25.
        self.assertEqual(len(costs), 3)
        for cost, expected in zip(costs, (0.25, 0.5, 0.25)):
            self.assertAlmostEqual(cost, expected, places=6)
        self.assertAlmostEqual(numbers["resume_cost_ms_median"], 0.25, places=6)
        self.assertAlmostEqual(numbers["pairs"][0]["compute_ms_A"], 16, places=6)
        self.assertEqual(numbers["pairs"][0]["sleeps_per_iteration"], 4)

    def test_bad_input_is_one_line_and_writes_nothing(self):
        for flags, needle in ((["--factor", "1"], "--factor: expected a slowdown > 1"),
                              (["--iterations", "3"], "--iterations"),
                              (["--bin-dir", self.tmp.name], "--bin-dir: expected ddp-launch")):
            result = self.run_script(*flags)
            self.assertEqual(result.returncode, 2, flags)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
            self.assertIn(needle, result.stderr)
            self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    unittest.main()
