"""ddpsim.read_trace: a trace directory (traces/FORMAT.md) as DataFrames, checked against the
events of a trace written from known numbers (fixtures.write_trace) and the shipped example."""
import json
import os
import tempfile
import unittest

import fixtures

import ddpsim


class ReadTrace(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = os.path.join(self.tmp.name, "trace")
        fixtures.write_trace(self.dir, world_size=2, iterations=5)

    def test_iterations_one_row_per_rank_and_iteration_with_its_bounds(self):
        trace = ddpsim.read_trace(self.dir)
        self.assertEqual(trace.world_size, 2)
        self.assertEqual(sorted(trace.metas), [0, 1])
        self.assertEqual(len(trace.iterations), 2 * 5)
        self.assertTrue(trace.iterations["complete"].all())
        events = trace.events
        for row in trace.iterations.itertuples():
            mine = events[(events["rank"] == row.rank) & (events["iteration"] == row.iteration)]
            begin = mine[mine["event"] == "iteration_begin"]["t_ns"].min()
            end = mine[mine["event"] == "iteration_end"]["t_ns"].max()
            self.assertEqual((row.begin_ns, row.end_ns), (begin, end))
            self.assertAlmostEqual(row.duration_ms, (end - begin) / 1e6)
            forward = (mine[mine["event"] == "forward_end"]["t_ns"].max()
                       - mine[mine["event"] == "forward_begin"]["t_ns"].min()) / 1e6
            self.assertAlmostEqual(row.forward_ms, forward)

    def test_buckets_pair_each_allreduce_begin_with_its_end(self):
        trace = ddpsim.read_trace(self.dir)
        begins = trace.events[trace.events["event"] == "allreduce_begin"]
        self.assertEqual(len(trace.buckets), len(begins))
        self.assertTrue((trace.buckets["end_ns"] >= trace.buckets["begin_ns"]).all())
        self.assertTrue((trace.buckets["allreduce_ms"] >= 0).all())
        # iteration 0 has one bucket, then three (fixtures.LAYOUTS)
        per_iteration = trace.buckets[trace.buckets["rank"] == 0].groupby("iteration")["bucket"].nunique()
        self.assertEqual(per_iteration.tolist(), [1, 3, 3, 3, 3])

    def test_a_cut_last_line_is_dropped_and_its_iteration_is_incomplete(self):
        path = os.path.join(self.dir, "rank-1.events.csv")
        with open(path) as handle:
            lines = handle.read().splitlines()
        last_end = max(i for i, line in enumerate(lines) if ",iteration_end," in line)
        with open(path, "w") as handle:
            handle.write("\n".join(lines[:last_end]) + "\n" + lines[last_end][:10])
        trace = ddpsim.read_trace(self.dir)
        rank1 = trace.iterations[trace.iterations["rank"] == 1]
        self.assertEqual(rank1["complete"].tolist(), [True, True, True, True, False])

    def test_the_shipped_example(self):
        example = os.path.join(fixtures.SOURCE_DIR, "traces", "examples", "convnet-2rank")
        trace = ddpsim.read_trace(example)
        self.assertEqual(trace.world_size, 2)
        self.assertEqual(len(trace.iterations), 60)
        self.assertIn("2 ranks", repr(trace))

    def test_bad_input_is_one_line_naming_the_file(self):
        missing = os.path.join(self.tmp.name, "nothing")
        with self.assertRaises(ddpsim.InputError) as caught:
            ddpsim.read_trace(missing)
        self.assertEqual(str(caught.exception), f"{missing}: expected a trace directory "
                         "(rank-R.meta.json + rank-R.events.csv), got no such directory")
        meta = os.path.join(self.dir, "rank-0.meta.json")
        with open(meta) as handle:
            data = json.load(handle)
        data["schema_version"] = 2
        with open(meta, "w") as handle:
            json.dump(data, handle)
        with self.assertRaises(ddpsim.InputError) as caught:
            ddpsim.read_trace(self.dir)
        self.assertEqual(str(caught.exception), f"{meta}: expected schema_version 1, got 2")
        self.assertNotIn("\n", str(caught.exception))
        # Nested past Python's recursion limit: json.load raises RecursionError, not ValueError.
        with open(meta, "w") as handle:
            handle.write("[" * 100000 + "]" * 100000)
        with self.assertRaises(ddpsim.InputError) as caught:
            ddpsim.read_trace(self.dir)
        self.assertTrue(str(caught.exception).startswith(f"{meta}: expected trace metadata JSON, got "))
        self.assertNotIn("\n", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
