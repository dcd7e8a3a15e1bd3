"""simulator/bench/transfer_whatif.py: its comparison of two trace summaries, worked by hand; its
bad input is in test_results_folder.py."""
import importlib.util
import math
import os
import unittest

from fixtures import SOURCE_DIR

SCRIPT = os.path.join(SOURCE_DIR, "simulator", "bench", "transfer_whatif.py")
spec = importlib.util.spec_from_file_location("transfer_whatif", SCRIPT)
transfer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(transfer)


def summary(comm_s, overlap, buckets):
    return {"total_allreduce_s_per_iter": comm_s, "overlap_fraction": overlap,
            "buckets": [{"bucket": b, "bytes": n, "median_transfer_s": t} for b, n, t in buckets]}


class TransferWhatIf(unittest.TestCase):
    def test_pair_errors(self):
        measured = summary(0.020, 0.50, [(0, 1000, 0.010), (1, 500, 0.004)])
        # Bucket 1 has other bytes in the prediction (another layout): not compared.
        predicted = summary(0.018, 0.55, [(0, 1000, 0.011), (1, 600, 0.004)])
        comm, overlap, buckets = transfer.pair_errors(measured, predicted)
        self.assertAlmostEqual(comm, -10.0)
        self.assertAlmostEqual(overlap, 5.0)
        self.assertEqual(len(buckets), 1)
        self.assertAlmostEqual(buckets[0], 10.0)
        # No all-reduce measured: no comm error, the rest still compared.
        self.assertIsNone(transfer.pair_errors(summary(0, 0, []), predicted)[0])

    def test_stats_are_medians_of_magnitudes(self):
        row = transfer.stats([(-10.0, 5.0, [10.0, -30.0]), (4.0, -1.0, []), (-2.0, 2.0, [20.0])])
        self.assertEqual(row["pairs"], 3)
        self.assertAlmostEqual(row["comm_median_abs_pct"], 4.0)
        self.assertAlmostEqual(row["comm_median_pct"], -2.0)
        self.assertAlmostEqual(row["overlap_median_abs_points"], 2.0)
        self.assertEqual(row["transfer_buckets"], 3)
        self.assertAlmostEqual(row["transfer_median_abs_pct"], 20.0)
        self.assertTrue(math.isnan(transfer.stats([])["comm_median_abs_pct"]))


if __name__ == "__main__":
    unittest.main()
