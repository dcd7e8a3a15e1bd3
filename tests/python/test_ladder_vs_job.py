"""ddpsim.bench.ladder_vs_job against the fixture trace, whose all-reduces take a known time."""
import os
import subprocess
import sys
import tempfile
import unittest

from fixtures import PARAMETERS, write_trace

from ddpsim.bench.ladder_vs_job import against_ladder, bucket_transfers
from ddpsim.input_error import InputError

# The fixture's layout from iteration 1: buckets [5, 4, 3], [2, 1], [0], in bytes.
SIZES = [sum(PARAMETERS[p][1] * 4 for p in bucket) for bucket in ([5, 4, 3], [2, 1], [0])]


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
