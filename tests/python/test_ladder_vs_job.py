"""ddpsim.bench.ladder_vs_job against the fixture trace, whose all-reduces take a known time."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from fixtures import PARAMETERS, write_tools, write_trace

from ddpsim.bench.ladder_vs_job import against_ladder, bucket_transfers
from ddpsim.input_error import InputError

# The fixture's layout from iteration 1: buckets [5, 4, 3], [2, 1], [0], in bytes.
SIZES = [sum(PARAMETERS[p][1] * 4 for p in bucket) for bucket in ([5, 4, 3], [2, 1], [0])]


# A stand-in launcher: the program after "--" is ddp-train (the fixture trace copied to its
# --trace-dir; exit 3 where the file FAIL exists beside it) or ddp-machine-profile (a profile whose
# ladder takes 1 ns per byte at each --sizes rung, or only at 4 KiB where NARROW exists). Each
# call's arguments are appended to CALLS.
FAKE_LAUNCH = textwrap.dedent('''\
    #!{python}
    import json, os, shutil, sys
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "CALLS"), "a") as calls:
        calls.write(" ".join(sys.argv[1:]) + "\\n")
    args = sys.argv[sys.argv.index("--") + 1:]
    if args[0].endswith("ddp-train"):
        if os.path.exists(os.path.join(here, "FAIL")):
            sys.exit(3)
        shutil.copytree({template!r}, args[args.index("--trace-dir") + 1])
    else:
        sizes = [4096] if os.path.exists(os.path.join(here, "NARROW")) else [int(x) for x in args[args.index("--sizes") + 1].split(",")]
        ladder = [{{"bytes": b, "one": {{"median_s": b * 1e-9}}}} for b in sizes]
        json.dump({{"allreduce": {{"ladder": ladder}}}}, open(args[args.index("--out") + 1], "w"))
    ''')


def fixture_transfer_ms(size):
    """write_trace: a bucket ends 1.5 ns per byte + 40 us after the last rank began it."""
    return (size * 1.5 + 40_000) / 1e6


class LadderVsJob(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ladder-vs-job-")
        self.trace = os.path.join(self.tmp.name, "trace")
        write_trace(self.trace, world_size=2, iterations=6)

    def tearDown(self):
        self.tmp.cleanup()

    def test_each_bucket_is_timed_from_the_last_rank_to_begin_it(self):
        transfers = bucket_transfers(self.trace)
        self.assertEqual(sorted(transfers), [0, 1, 2])
        for bucket, size in enumerate(SIZES):
            self.assertEqual(transfers[bucket]["bytes"], size)
            self.assertAlmostEqual(transfers[bucket]["transfer_ms"], fixture_transfer_ms(size), places=6)
            self.assertEqual(transfers[bucket]["iterations"], 4)  # iterations 2..5
        # The first two buckets launch while autograd still computes the later ones; the last after it.
        self.assertEqual([transfers[b]["during_autograd"] for b in range(3)], [1.0, 1.0, 0.0])

    def test_a_bucket_queued_behind_another_is_timed_from_the_others_end(self):
        # Iteration 2 only: bucket 0 launched at 100 us on both ranks, bucket 1 at 300 and 350 us
        # while bucket 0 still runs (to 1000 us); bucket 1 ends at 1500 us: 0.9 and 0.5 ms.
        queued = os.path.join(self.tmp.name, "queued")
        write_trace(queued, world_size=2, iterations=1)
        for rank, bucket_1_begin in ((0, 300_000), (1, 350_000)):
            rows = [(2, "iteration_begin", 0, ""), (2, "grad_ready", 100_000, ""), (2, "allreduce_begin", 100_000, 0),
                    (2, "grad_ready", 300_000, ""), (2, "allreduce_begin", bucket_1_begin, 1),
                    (2, "allreduce_end", 1_000_000, 0), (2, "allreduce_end", 1_500_000, 1),
                    (2, "iteration_end", 1_600_000, "")]
            with open(os.path.join(queued, f"rank-{rank}.events.csv"), "w") as handle:
                handle.write("rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message\n")
                for iteration, event, t_ns, bucket in rows:
                    size = "" if bucket == "" else 4096
                    handle.write(f"{rank},{iteration},{event},{t_ns},{bucket},,{size},,,\n")
        transfers = bucket_transfers(queued)
        self.assertAlmostEqual(transfers[0]["transfer_ms"], 0.9)
        self.assertAlmostEqual(transfers[1]["transfer_ms"], 0.5)
        self.assertEqual([transfers[0]["during_autograd"], transfers[1]["during_autograd"]], [1.0, 0.0])

    def test_the_ratio_is_the_jobs_time_over_the_rung_of_its_size(self):
        transfers = bucket_transfers(self.trace)
        ladder = [{"bytes": size, "one": {"median_s": 1e-3 * (b + 1)}} for b, size in enumerate(SIZES)]
        ladder.append({"bytes": 1 << 30, "one": {"median_s": 1.0}})  # a rung no bucket has
        rows = against_ladder(transfers, {"allreduce": {"ladder": ladder}}, "machine.json")
        self.assertEqual([row["bucket"] for row in rows], [0, 1, 2])
        for b, row in enumerate(rows):
            self.assertAlmostEqual(row["ladder_ms"], b + 1.0)
            self.assertAlmostEqual(row["ratio"], fixture_transfer_ms(SIZES[b]) / (b + 1.0))

    def test_a_bucket_without_its_rung_is_refused_naming_the_profile(self):
        ladder = [{"bytes": SIZES[0], "one": {"median_s": 1e-3}}]
        with self.assertRaises(InputError) as caught:
            against_ladder(bucket_transfers(self.trace), {"allreduce": {"ladder": ladder}}, "machine.json")
        self.assertEqual(str(caught.exception), f"machine.json: expected a ladder rung of {SIZES[1]} bytes (bucket 1)")

    def test_a_trace_of_one_rank_per_bucket_without_peers_still_times_it(self):
        one = os.path.join(self.tmp.name, "one")
        write_trace(one, world_size=1, iterations=4)
        self.assertEqual(sorted(bucket_transfers(one)), [0, 1, 2])

    def test_a_trace_without_warm_iterations_is_refused(self):
        short_run = os.path.join(self.tmp.name, "short")
        write_trace(short_run, world_size=2, iterations=2)
        with self.assertRaises(InputError) as caught:
            bucket_transfers(short_run)
        self.assertEqual(str(caught.exception),
                         f"{short_run}: expected all-reduces joined by all 2 ranks from iteration 2 on, got none")

    def run_tool(self, *flags):
        self.bin = os.path.join(self.tmp.name, "bin")
        write_tools(self.bin, {"ddp-launch": FAKE_LAUNCH.format(python=sys.executable, template=self.trace),
                               "ddp-train": "#!/bin/sh\nexit 0\n", "ddp-machine-profile": "#!/bin/sh\nexit 0\n"})
        self.out = os.path.join(self.tmp.name, "out.json")
        return subprocess.run([sys.executable, "-m", "ddpsim.bench.ladder_vs_job", "--out", self.out, "--bin-dir", self.bin,
                               "--keep", os.path.join(self.tmp.name, "runs"), "--iterations", "6", *flags, "--",
                               "--model", "mlp"], capture_output=True, text=True, timeout=120)

    def calls(self):
        with open(os.path.join(self.bin, "CALLS")) as handle:
            return handle.read().splitlines()

    def test_each_repetition_runs_the_job_then_the_profile_and_the_json_has_every_ratio(self):
        run = self.run_tool("--repetitions", "2")
        self.assertEqual(run.returncode, 0, run.stderr)
        calls = self.calls()
        self.assertEqual(len(calls), 4)
        for job, profile in (calls[0:2], calls[2:4]):
            self.assertIn("--nproc-per-node 2 --master-port 0 --", job)
            self.assertIn("ddp-train", job)
            self.assertIn("--iterations 6", job)
            self.assertIn("ddp-machine-profile", profile)
            for size in SIZES:  # the job's bucket sizes are rungs of the profile's ladder
                self.assertIn(str(size), profile)
        with open(self.out) as handle:
            result = json.load(handle)
        self.assertEqual(len(result["repetitions"]), 2)
        for b, size in enumerate(SIZES):
            row = result["buckets"][b]
            self.assertEqual((row["bucket"], row["bytes"]), (b, size))
            self.assertAlmostEqual(row["ratio_median"], fixture_transfer_ms(size) / (size * 1e-6))

    def test_a_launcher_starts_the_job_and_the_profile(self):
        launcher = f"{os.path.join(self.tmp.name, 'bin', 'ddp-launch')} --hosts-of-a-testbed --"
        run = self.run_tool("--repetitions", "1", "--launcher", launcher)
        self.assertEqual(run.returncode, 0, run.stderr)
        calls = self.calls()
        self.assertEqual(len(calls), 2)
        for call in calls:
            self.assertTrue(call.startswith("--hosts-of-a-testbed -- "), call)

    def test_a_failed_job_is_one_line_naming_its_log_and_exit_1(self):
        os.makedirs(os.path.join(self.tmp.name, "bin"), exist_ok=True)
        open(os.path.join(self.tmp.name, "bin", "FAIL"), "w").close()
        run = self.run_tool("--repetitions", "1")
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertEqual(run.stderr.strip(),
                         f"ladder_vs_job.py: {os.path.join(self.tmp.name, 'runs', 'job-rep0.log')}: the run exited 3")
        self.assertFalse(os.path.exists(self.out))

    def test_a_profile_without_the_buckets_rungs_is_one_line_and_exit_2(self):
        os.makedirs(os.path.join(self.tmp.name, "bin"), exist_ok=True)
        open(os.path.join(self.tmp.name, "bin", "NARROW"), "w").close()
        run = self.run_tool("--repetitions", "1")
        self.assertEqual(run.returncode, 2, run.stderr)
        profile = os.path.join(self.tmp.name, "runs", "profile-rep0.json")
        self.assertEqual(run.stderr.strip(),
                         f"ladder_vs_job.py: {profile}: expected a ladder rung of {SIZES[0]} bytes (bucket 0)")
        self.assertFalse(os.path.exists(self.out))

    def test_bad_flags_get_one_line_and_exit_2(self):
        out = os.path.join(self.tmp.name, "out.json")
        for flags, expected in ((["--repetitions", "0"], "--repetitions: expected >= 1 and --iterations >= 5"),
                                (["--world-size", "1"], "--world-size: expected >= 2, got 1"),
                                (["--bin-dir", self.tmp.name], f"--bin-dir: expected ddp-launch in {self.tmp.name}")):
            run = subprocess.run([sys.executable, "-m", "ddpsim.bench.ladder_vs_job", "--out", out, *flags],
                                 capture_output=True, text=True)
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertEqual(len(run.stderr.strip().splitlines()), 1, run.stderr)
            self.assertIn(expected, run.stderr)
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
