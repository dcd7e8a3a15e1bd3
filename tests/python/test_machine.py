"""ddpsim.read_machine_profile: a machine profile (traces/MACHINE.md) as DataFrames, checked
against profiles written from known numbers (fixtures.machine_profile) and one the tool wrote."""
import json
import os
import tempfile
import unittest

import fixtures

import ddpsim

# A profile as ddp-machine-profile wrote it on a 2-core machine (the machine-profile fuzzer's seed).
TOOL_WRITTEN = os.path.join(fixtures.SOURCE_DIR, "tests", "simulator", "fuzz_machine_profile_corpus",
                            "loopback-2-ranks.json")


class ReadMachineProfile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name="m.json", **kwargs):
        return fixtures.write_machine_profile(os.path.join(self.tmp.name, name), **kwargs)

    def test_ladder_one_row_per_size_with_both_timings(self):
        written = fixtures.machine_profile()
        machine = ddpsim.read_machine_profile(self.write())
        self.assertEqual(list(machine.ladder["bytes"]), [step["bytes"] for step in written["allreduce"]["ladder"]])
        for row, step in zip(machine.ladder.itertuples(), written["allreduce"]["ladder"]):
            for field in ("median_s", "min_s", "max_s", "samples"):
                self.assertEqual(getattr(row, f"one_{field}"), step["one"][field])
                self.assertEqual(getattr(row, f"together_{field}"), step["together"][field])

    def test_overlap_by_size_with_its_slowdown(self):
        written = fixtures.machine_profile()["overlap"]["by_size"]
        overlap = ddpsim.read_machine_profile(self.write()).overlap
        self.assertEqual(list(overlap["bytes"]), [at["bytes"] for at in written])
        for row, at in zip(overlap.itertuples(), written):
            self.assertEqual(row.alone_median_s, at["allreduce_alone"]["median_s"])
            self.assertEqual(row.busy_max_s, at["allreduce_busy"]["max_s"])
            self.assertAlmostEqual(row.slowdown, at["allreduce_busy"]["median_s"] / at["allreduce_alone"]["median_s"])

    def test_overlap_without_sizes_is_its_one_size_and_a_version_1_profile_has_none(self):
        one = ddpsim.read_machine_profile(self.write(by_size=False)).overlap
        self.assertEqual(list(one["bytes"]), [4 << 20])
        self.assertEqual(list(one["alone_median_s"]), [0.003])
        old = ddpsim.read_machine_profile(self.write(version=1))
        self.assertTrue(old.overlap.empty)
        self.assertIn("slowdown", old.overlap.columns)
        self.assertNotIn("resume_cost_s", old.info)

    def test_colocation_and_info(self):
        machine = ddpsim.read_machine_profile(self.write(created_utc="2031-02-03T04:05:06Z"))
        self.assertEqual(list(machine.colocation["ranks"]), [2, 3])
        self.assertEqual(list(machine.colocation["effective_cores"]), [1.95, 1.8])
        self.assertEqual(machine.info["created_utc"], "2031-02-03T04:05:06Z")
        self.assertEqual(machine.info["hosts"], ["vm"])
        self.assertEqual((machine.info["in_flight"], machine.info["in_flight_gain"]), (2, 1.15))
        self.assertEqual((machine.info["compute_fraction"], machine.info["resume_cost_s"]), (0.66, 1.1e-4))
        self.assertIn("gloo on 3 ranks", repr(machine))

    def test_a_profile_the_tool_wrote(self):
        if not os.path.isfile(TOOL_WRITTEN):
            self.skipTest(f"{TOOL_WRITTEN} absent")
        machine = ddpsim.read_machine_profile(TOOL_WRITTEN)
        self.assertEqual(len(machine.ladder), 8)
        self.assertTrue((machine.ladder["one_min_s"] <= machine.ladder["one_median_s"]).all())
        self.assertEqual(len(machine.overlap), 3)
        self.assertEqual(list(machine.colocation["ranks"]), [2])

    def test_bad_input_is_one_line_naming_the_file(self):
        path = os.path.join(self.tmp.name, "bad.json")
        cases = {
            "not json {": "a JSON machine profile",
            "[" * 100000 + "]" * 100000: "a JSON machine profile",
            json.dumps([1, 2]): '"ddpsim_machine_profile": 1 or 2',
            json.dumps({**fixtures.machine_profile(), "ddpsim_machine_profile": 3}): '"ddpsim_machine_profile": 1 or 2',
            json.dumps({**fixtures.machine_profile(), "allreduce": {"ladder": []}}): "allreduce.ladder to be a non-empty list",
        }
        broken = fixtures.machine_profile()
        broken["allreduce"]["ladder"][2]["one"]["median_s"] = -1
        cases[json.dumps(broken)] = "allreduce.ladder[2].one.median_s to be a finite number > 0"
        broken = fixtures.machine_profile()
        broken["overlap"]["by_size"][1]["bytes"] = "4M"
        cases[json.dumps(broken)] = "overlap.by_size[1].bytes to be a positive integer"
        for text, expected in cases.items():
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            with self.assertRaises(ddpsim.InputError) as caught:
                ddpsim.read_machine_profile(path)
            message = str(caught.exception)
            self.assertTrue(message.startswith(f"{path}: expected "), message)
            self.assertIn(expected, message)
            self.assertNotIn("\n", message)
        with self.assertRaises(ddpsim.InputError):
            ddpsim.read_machine_profile(os.path.join(self.tmp.name, "absent.json"))


if __name__ == "__main__":
    unittest.main()
