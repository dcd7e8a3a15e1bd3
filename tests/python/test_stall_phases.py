"""ddpsim.bench.stall_phases against a hand-made 2-rank trace with known phases."""
import json
import os
import subprocess
import sys
import tempfile
import unittest


SCRIPT = ["-m", "ddpsim.bench.stall_phases"]
HEADER = "rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message\n"
MS = 1_000_000


def iteration_rows(rank, iteration, t, stall_ms, autograd_ms):
    """One iteration: stall, forward 7 ms, autograd, 5 ms more all-reduce, optimizer 3 ms."""
    rows = [(iteration, "iteration_begin", t, "")]
    if stall_ms:
        rows.append((iteration, "delay", t, stall_ms * MS))
    t += stall_ms * MS
    rows += [(iteration, "forward_begin", t, ""), (iteration, "forward_end", t + 7 * MS, ""),
             (iteration, "backward_begin", t + 7 * MS, "")]
    t += 7 * MS
    rows += [(iteration, "grad_ready", t + autograd_ms * MS // 2, ""), (iteration, "grad_ready", t + autograd_ms * MS, ""),
             (iteration, "allreduce_begin", t + 2 * MS, ""), (iteration, "allreduce_end", t + (autograd_ms + 5) * MS, ""),
             (iteration, "backward_end", t + (autograd_ms + 6) * MS, "")]
    t += (autograd_ms + 6) * MS
    rows += [(iteration, "optimizer_begin", t, ""), (iteration, "optimizer_end", t + 3 * MS, ""),
             (iteration, "iteration_end", t + 3 * MS, "")]
    return [f"{rank},{i},{event},{when},,,,{dur},{'distribution' if dur else ''},\n" for i, event, when, dur in rows], t + 4 * MS


class StallPhases(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="stall-phases-")
        self.trace = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write_rank(self, rank, lines):
        with open(os.path.join(self.trace, f"rank-{rank}.events.csv"), "w") as handle:
            handle.writelines(lines)

    def numbers(self, *flags):
        """The script's JSON for this trace (exit 0 expected)."""
        out = os.path.join(self.trace, "out.json")
        result = subprocess.run([sys.executable, *SCRIPT, self.trace, *flags, "--json", out],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as handle:
            [numbers] = json.load(handle)
        return numbers

    def write_trace(self):
        # Iterations 2..10 (0 and 1 are skipped as warm-up): stalls of 1..9 ms on rank 1. After
        # the 3 longest stalls both ranks' autograd takes 14 ms, else 16 ms (rank 1) and 15 ms.
        stalls = {i: max(0, i - 1) for i in range(11)}
        for rank in (0, 1):
            lines, t = [HEADER], 0
            for i in range(11):
                long = stalls[i] >= 7
                rows, t = iteration_rows(rank, i, t, stalls[i] if rank == 1 else 0,
                                         14 if long else (16 if rank == 1 else 15))
                lines += rows
            self.write_rank(rank, lines)

    def test_phases_of_the_shortest_and_longest_third(self):
        self.write_trace()
        numbers = self.numbers()
        self.assertEqual(numbers["iterations_per_third"], 3)
        self.assertAlmostEqual(numbers["short"]["stall_ms"], 2)  # stalls 1, 2, 3 ms
        self.assertAlmostEqual(numbers["long"]["stall_ms"], 8)   # 7, 8, 9 ms
        for rank, short_autograd in (("0", 15), ("1", 16)):
            short, long = numbers["short"]["ranks"][rank], numbers["long"]["ranks"][rank]
            self.assertAlmostEqual(short["autograd_ms"], short_autograd)
            self.assertAlmostEqual(long["autograd_ms"], 14)
            self.assertAlmostEqual(short["forward_ms"], 7)
            self.assertAlmostEqual(long["optimizer_ms"], 3)
            self.assertAlmostEqual(long["allreduce_after_grads_ms"], 5)
            self.assertAlmostEqual(long["backward_ms"], 20)

    def test_whole_run_without_the_slowdowns_sleeps(self):
        # Rank 1 slowed: each iteration's autograd of 16 ms holds a recorded 20 ms slowdown sleep.
        for rank in (0, 1):
            lines, t = [HEADER], 0
            for i in range(8):
                rows, t_next = iteration_rows(rank, i, t, 0, 36 if rank == 1 else 15)
                if rank == 1:
                    begin = t + 7 * MS + 3 * MS  # inside autograd
                    rows.append(f"1,{i},delay,{begin},,,,{20 * MS},slowdown,\n")
                lines += rows
                t = t_next
            self.write_rank(rank, lines)
        numbers = self.numbers("--whole")
        self.assertEqual(numbers["iterations_per_third"], 6)  # iterations 2..7, all of them
        self.assertNotIn("long", numbers)
        self.assertAlmostEqual(numbers["short"]["ranks"]["1"]["autograd_ms"], 16)
        self.assertAlmostEqual(numbers["short"]["ranks"]["0"]["autograd_ms"], 15)
        self.assertAlmostEqual(numbers["short"]["ranks"]["1"]["backward_ms"], 42)
        # Beside its own all-reduce (2 ms after backward_begin to the end): rank 1's compute
        # 0-3 and 23-36 ms into backward overlaps it 1 + 13 ms; rank 0's 0-15 ms, 13 ms.
        self.assertAlmostEqual(numbers["short"]["ranks"]["1"]["autograd_with_transfers_ms"], 14)
        self.assertAlmostEqual(numbers["short"]["ranks"]["0"]["autograd_with_transfers_ms"], 13)

    def test_autograd_beside_the_other_ranks_compute(self):
        # Two ranks in lockstep: each autograd runs wholly beside the other's; then rank 1's
        # iterations shifted 100 ms later than rank 0's, past rank 0's whole iteration: none.
        for shift_ms, expected in ((0, 15), (100, 0)):
            for rank in (0, 1):
                lines, t = [HEADER], (shift_ms * MS if rank == 1 else 0)
                for i in range(8):
                    rows, t = iteration_rows(rank, i, t, 0, 15)
                    t += 100 * MS  # a gap between iterations, longer than one
                    lines += rows
                self.write_rank(rank, lines)
            numbers = self.numbers("--whole")
            for rank in ("0", "1"):
                self.assertAlmostEqual(numbers["short"]["ranks"][rank]["autograd_with_peers_ms"], expected,
                                       msg=f"shift {shift_ms} rank {rank}")

    def test_a_missing_rank_is_a_one_line_error(self):
        self.write_trace()
        os.remove(os.path.join(self.trace, "rank-1.events.csv"))
        result = subprocess.run([sys.executable, *SCRIPT, self.trace], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn(f"{self.trace}: expected rank-1.events.csv (--rank)", result.stderr)

    def test_a_missing_trace_folder_is_a_one_line_error(self):
        missing = os.path.join(self.trace, "nowhere")
        result = subprocess.run([sys.executable, *SCRIPT, missing], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn(f"{missing}: expected a run's trace folder", result.stderr)


if __name__ == "__main__":
    unittest.main()
