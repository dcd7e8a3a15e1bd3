"""simulator/bench/straggler_naming.py: skew metadata parsing and the two naming rules, on
hand-made advise JSON (no replay); its bad input is in test_results_folder.py."""
import importlib.util
import os
import unittest

from fixtures import SOURCE_DIR

SCRIPT = os.path.join(SOURCE_DIR, "simulator", "bench", "straggler_naming.py")
spec = importlib.util.spec_from_file_location("straggler_naming", SCRIPT)
naming = importlib.util.module_from_spec(spec)
spec.loader.exec_module(naming)


def cost(rank, fraction, excess_fraction, straggler, low=0.001, excess_low=0.001):
    return {"rank": rank, "fraction": fraction, "excess_fraction": excess_fraction, "straggler": straggler,
            "interval_s": [low, 0.01], "excess_interval_s": [excess_low, 0.01]}


class StragglerNaming(unittest.TestCase):
    def test_expected_ranks_from_skew_metadata(self):
        self.assertEqual(naming.expected_ranks({}), [])
        self.assertEqual(naming.expected_ranks({"seed": "1", "slowdown": "1=2"}), [1])
        self.assertEqual(naming.expected_ranks({"slowdown": "0=1,2=1.5"}), [2])  # x1 slows nobody
        self.assertEqual(naming.expected_ranks({"delay_dist": "1=exp:20", "delay": "3=5@2"}), [1, 3])
        self.assertIsNone(naming.expected_ranks({"delay_dist": "all=exp:20"}))

    def test_the_two_rules(self):
        # Noise: rank 0 costs 6 % but only 3 % more than rank 1; advise (excess rule) named nobody.
        noise = [cost(0, 0.06, 0.03, False), cost(1, 0.03, 0.0, False, excess_low=-0.001)]
        self.assertEqual(naming.named(noise, "excess"), [])
        self.assertEqual(naming.named(noise, "cost"), [0])
        # A bootstrap interval reaching 0 names nobody under either rule.
        self.assertEqual(naming.named([cost(0, 0.2, 0.2, False, low=0.0)], "cost"), [])
        slowed = [cost(0, 0.0, 0.0, False, excess_low=-0.01), cost(1, 0.15, 0.15, True)]
        self.assertEqual(naming.named(slowed, "excess"), [1])
        self.assertEqual(naming.named(slowed, "cost"), [1])

    def test_tally_counts_right_runs_per_configuration(self):
        noise = [cost(0, 0.06, 0.03, False), cost(1, 0.03, 0.0, False)]
        quiet = [cost(0, 0.01, 0.0, False), cost(1, 0.02, 0.01, False)]
        slowed = [cost(0, 0.0, 0.0, False), cost(1, 0.15, 0.15, True)]
        table = naming.tally([("whatif-slowdown", "slownone-rep0", [], noise),
                              ("whatif-slowdown", "slownone-rep1", [], quiet),
                              ("whatif-slowdown", "slow1-2-rep0", [1], slowed)])
        self.assertEqual(table[("whatif-slowdown", "slownone")],
                         {"runs": 2, "expected": [], "right_excess": 2, "right_cost": 1})
        self.assertEqual(table[("whatif-slowdown", "slow1-2")],
                         {"runs": 1, "expected": [1], "right_excess": 1, "right_cost": 1})


if __name__ == "__main__":
    unittest.main()
