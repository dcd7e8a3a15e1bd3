"""ddpsim.bench.advice: the tables of the [advice] experiments from advice.csv rows."""
import csv

import pytest

from ddpsim import InputError
from ddpsim.bench import advice

COLUMNS = ["experiment", "kind", "case", "rep", "role", "run", "world_size", "bucket_cap_mb", "slowdown",
           "iterations", "status", "failure", "complete_iterations", "median_iteration_s", "advised_timeout_s",
           "advised_detect_s", "measured_detect_s", "own_cap_mb", "advised_cap_mb", "keep", "compared_cap_mb",
           "predicted_gain", "predicted_gain_lo", "predicted_gain_hi", "slowed_ranks", "named_ranks"]


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for row in rows:
            w.writerow({c: row.get(c, "") for c in COLUMNS})
    return str(path)


def test_mann_whitney_is_exact_for_small_samples():
    assert advice.mann_whitney_p([1, 2, 3], [4, 5, 6]) == pytest.approx(0.1)  # 2 of 20 splits
    assert advice.mann_whitney_p([1, 3, 5], [2, 4, 6]) == pytest.approx(0.7)
    assert advice.mann_whitney_p([1] * 4, [1] * 4) == pytest.approx(1.0)


def test_timeout_counts_false_timeouts_and_checks_the_detection(tmp_path):
    base = {"kind": "timeout", "rep": "0", "advised_timeout_s": "0.2", "advised_detect_s": "0.3", "iterations": "40",
            "status": "ok"}
    rows = [dict(base, role="baseline", complete_iterations="40"),
            dict(base, role="follow", iterations="400", complete_iterations="400"),
            dict(base, role="follow", iterations="400", complete_iterations="19", status="failed", failure="timeout"),
            dict(base, role="hang", status="failed", measured_detect_s="0.28"),
            dict(base, rep="1", role="baseline"),
            dict(base, rep="1", role="hang", status="failed", measured_detect_s="0.31")]
    table = advice.timeout_table(advice.read_rows(write(tmp_path / "a.csv", rows), "timeout"))
    assert [t["false_timeouts"] for t in table] == [1, 0]
    assert table[0]["follow_iterations"] == 419 and table[0]["planned_iterations"] == 800
    assert [t["within_advised"] for t in table] == [True, False]
    assert "false timeouts: 1 of 2 followed runs" in advice.timeout_text(table)


def test_bucket_change_holds_inside_the_predicted_interval(tmp_path):
    ref = {"kind": "bucket", "case": "cap25", "own_cap_mb": "25", "advised_cap_mb": "5", "keep": "false",
           "compared_cap_mb": "5", "predicted_gain": "0.2", "predicted_gain_lo": "0.1", "predicted_gain_hi": "0.3",
           "status": "ok"}
    own = [0.50, 0.52, 0.49, 0.51, 0.50]
    other = [0.40, 0.41, 0.39, 0.40, 0.42]
    rows = [dict(ref, role="baseline", median_iteration_s="0.5")]
    rows += [dict(ref, role="own", median_iteration_s=str(v)) for v in own]
    rows += [dict(ref, role="other", median_iteration_s=str(v)) for v in other]
    [t] = advice.bucket_table(advice.read_rows(write(tmp_path / "b.csv", rows), "bucket"))
    assert t["measured_gain"] == pytest.approx(1 - 0.40 / 0.50)
    assert t["holds"] and not t["within_noise"]
    assert t["mann_whitney_p"] < 0.05
    assert t["measured_gain_lo"] <= t["measured_gain"] <= t["measured_gain_hi"]
    # The same runs against an interval that misses them: the advice did not hold.
    rows = [dict(r, predicted_gain_lo="0.25") for r in rows]
    [t] = advice.bucket_table(advice.read_rows(write(tmp_path / "b.csv", rows), "bucket"))
    assert not t["holds"]


def test_bucket_keep_holds_when_the_other_cap_is_not_faster(tmp_path):
    ref = {"kind": "bucket", "case": "cap25", "own_cap_mb": "25", "keep": "true", "compared_cap_mb": "5",
           "status": "ok"}
    rows = [dict(ref, role="own", median_iteration_s=str(v)) for v in (0.50, 0.40, 0.45)]
    rows += [dict(ref, role="other", median_iteration_s=str(v)) for v in (0.41, 0.51, 0.46)]
    [t] = advice.bucket_table(advice.read_rows(write(tmp_path / "b.csv", rows), "bucket"))
    assert t["within_noise"] and t["holds"]
    rows = [dict(ref, role="own", median_iteration_s=str(v)) for v in (0.50, 0.51, 0.52, 0.53)]
    rows += [dict(ref, role="other", median_iteration_s=str(v)) for v in (0.40, 0.41, 0.42, 0.43)]
    [t] = advice.bucket_table(advice.read_rows(write(tmp_path / "b.csv", rows), "bucket"))
    assert not t["holds"]  # the cap kept is measurably slower


def test_stragglers_precision_recall_and_the_smallest_factor(tmp_path):
    ref = {"kind": "stragglers", "role": "case", "world_size": "4", "status": "ok"}
    rows = [dict(ref, slowdown="", named_ranks=""),
            dict(ref, slowdown="1=1.1", named_ranks=""),
            dict(ref, slowdown="2=1.5", named_ranks="2"),
            dict(ref, slowdown="0=2 3=2", named_ranks="0;3"),
            dict(ref, slowdown="1=1.5", named_ranks="1;2"),  # one rank named that nobody slowed
            dict(ref, slowdown="1=1.0", named_ranks="", status="error")]
    t = advice.stragglers_table(advice.read_rows(write(tmp_path / "s.csv", rows), "stragglers"))
    assert (t["tp"], t["fp"], t["fn"]) == (4, 1, 1)
    assert t["precision"] == pytest.approx(0.8) and t["recall"] == pytest.approx(0.8)
    assert t["recall_by_factor"] == {1.1: 0.0, 1.5: 1.0, 2.0: 1.0}
    assert t["smallest_reliable_factor"] == 1.5
    assert t["broken"] == 1
    assert advice.stragglers_rows(t)[-1]["smallest_reliable_factor"] == 1.5


def test_bad_input_is_one_line(tmp_path, capsys):
    with pytest.raises(InputError, match="expected rows of kind bucket, got timeout"):
        advice.read_rows(write(tmp_path / "t.csv", [{"kind": "timeout", "role": "baseline"}]), "bucket")
    assert advice.main(["timeout", str(tmp_path / "missing.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.csv: expected a readable advice.csv" in err


def fake_ddp_sim(bin_dir, bucket):
    """A ddp-sim whose advise writes `bucket` as its JSON's bucket section."""
    bin_dir.mkdir()
    script = bin_dir / "ddp-sim"
    script.write_text("#!/usr/bin/env python3\nimport json, sys\n"
                      "out = sys.argv[sys.argv.index('--json') + 1]\n"
                      f"json.dump({{'bucket': {bucket!r}}}, open(out, 'w'))\n")
    script.chmod(0o755)
    return str(bin_dir)


def readvise_rows(tmp_path):
    folder = tmp_path / "advice-bucket"
    (folder / "advice").mkdir(parents=True)
    ref = {"kind": "bucket", "case": "cap25", "own_cap_mb": "25", "advised_cap_mb": "", "keep": "true",
           "compared_cap_mb": "5", "predicted_gain": "0.01", "predicted_gain_lo": "-0.02", "predicted_gain_hi": "0.04",
           "status": "ok"}
    rows = [dict(ref, role="baseline", run="cap25-base", median_iteration_s="0.5"),
            dict(ref, role="baseline_repeat", run="cap25-base1", median_iteration_s="0.5")]
    rows += [dict(ref, role="own", run=f"own{k}", median_iteration_s=str(v)) for k, v in enumerate([0.50, 0.52, 0.49])]
    rows += [dict(ref, role="other", run=f"other{k}", median_iteration_s=str(v)) for k, v in enumerate([0.40, 0.41, 0.39])]
    return write(folder / "advice.csv", rows)


def test_readvise_weighs_another_builds_advice_on_the_same_runs(tmp_path):
    path = readvise_rows(tmp_path)
    own = {"bucket_cap_mb": 25, "buckets": 2, "median_iteration_s": 0.5}
    changed = {"own": own, "keep": False, "recommended_bucket_cap_mb": 5,
               "candidates": [{"bucket_cap_mb": 5, "buckets": 4, "median_iteration_s": 0.41, "gain": 0.18,
                               "drift_gain_interval": [0.1, 0.25]}]}
    rows = advice.readvise(advice.read_rows(path, "bucket"), path, fake_ddp_sim(tmp_path / "bin", changed))
    [t] = advice.bucket_table(rows)
    assert t["advice"] == "change to 5" and t["predicted_gain"] == pytest.approx(0.18)
    assert (t["predicted_gain_lo"], t["predicted_gain_hi"]) == (0.1, 0.25) and t["holds"]
    # The run's own advice ("keep", +1 %) is left as it was in the file.
    [before] = advice.bucket_table(advice.read_rows(path, "bucket"))
    assert before["advice"] == "keep" and before["predicted_gain"] == pytest.approx(0.01)


def test_readvise_refuses_an_advice_of_a_cap_the_run_did_not_measure(tmp_path, capsys):
    path = readvise_rows(tmp_path)
    other = {"own": {"bucket_cap_mb": 25, "buckets": 2, "median_iteration_s": 0.5}, "keep": False,
             "recommended_bucket_cap_mb": 1,
             "candidates": [{"bucket_cap_mb": 1, "buckets": 8, "median_iteration_s": 0.4, "gain": 0.2,
                             "drift_gain_interval": [0.1, 0.3]}]}
    bin_dir = fake_ddp_sim(tmp_path / "bin", other)
    assert advice.main(["bucket", path, "--readvise", bin_dir]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--readvise: expected an advice for cap25 compared with the cap the run measured" in err


def test_readvise_keep_compares_the_fastest_other_layout(tmp_path):
    # As ddp-experiment reads it: caps that give the own layout back (same bucket count) are not
    # an alternative; among the others the fastest is compared.
    path = readvise_rows(tmp_path)
    keep = {"own": {"bucket_cap_mb": 25, "buckets": 2, "median_iteration_s": 0.5}, "keep": True,
            "candidates": [{"bucket_cap_mb": 50, "buckets": 2, "median_iteration_s": 0.3},
                           {"bucket_cap_mb": 1, "buckets": 8, "median_iteration_s": 0.52, "gain": -0.04,
                            "drift_gain_interval": [-0.1, 0.02]},
                           {"bucket_cap_mb": 5, "buckets": 4, "median_iteration_s": 0.49, "gain": 0.02,
                            "drift_gain_interval": [-0.03, 0.06]}]}
    rows = advice.readvise(advice.read_rows(path, "bucket"), path, fake_ddp_sim(tmp_path / "bin", keep))
    [t] = advice.bucket_table(rows)
    assert t["advice"] == "keep" and t["compared_cap_mb"] == 5 and t["predicted_gain"] == pytest.approx(0.02)


def test_readvise_bad_inputs_are_one_line(tmp_path, capsys):
    path = readvise_rows(tmp_path)
    timeout = write(tmp_path / "t.csv", [{"kind": "timeout", "role": "baseline"}])
    assert advice.main(["timeout", timeout, "--readvise", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--readvise: expected the bucket table, got timeout" in err
    # A ddp-sim that fails to advise: named, nothing written over.
    failing = tmp_path / "failing"
    failing.mkdir()
    (failing / "ddp-sim").write_text("#!/bin/sh\nexit 1\n")
    (failing / "ddp-sim").chmod(0o755)
    before = open(path).read()
    assert advice.main(["bucket", path, "--readvise", str(failing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--readvise: expected a ddp-sim that advises cap25-base" in err
    assert open(path).read() == before
