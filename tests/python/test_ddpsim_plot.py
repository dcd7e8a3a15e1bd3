"""analysis/ddpsim-plot end to end: every figure from known inputs, its CSV checked against
numbers recomputed here (independently of ddpsim.plot), and bad input rejected in one line."""
import csv
import json
import math
import os
import random
import statistics
import tempfile
import unittest

import fixtures

SOURCE_DIR = fixtures.SOURCE_DIR
PLOT_MODULE = fixtures.load_plot()  # ddpsim-plot, run in this process


def quantile(values, q):
    """Linear interpolation between closest ranks (numpy's default), written out: the oracle the
    figures' numbers (ddpsim.stats.quantile) are checked against, so not that function."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


class PlotTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ddpsim-plot-test-")
        self.dir = self.tmp.name
        self.out = os.path.join(self.dir, "figures")

    def tearDown(self):
        self.tmp.cleanup()

    def plot(self, *args, expect=0):
        """ddpsim-plot ARGS --out OUT, in this process (fixtures.run_plot)."""
        result = fixtures.run_plot(PLOT_MODULE, [*args, "--out", self.out])
        self.assertEqual(result.returncode, expect, result.stderr)
        return result

    def assert_figure(self, name):
        """PDF and PNG exist, are non-empty and are what their names say; returns the CSV rows."""
        for ext, magic in (("pdf", b"%PDF"), ("png", b"\x89PNG")):
            path = os.path.join(self.out, f"{name}.{ext}")
            self.assertTrue(os.path.isfile(path), path)
            self.assertGreater(os.path.getsize(path), 1000, path)
            with open(path, "rb") as handle:
                self.assertEqual(handle.read(4), magic, path)
        return read_csv(os.path.join(self.out, f"{name}.csv"))

    def assert_close(self, actual, expected, what):
        if isinstance(expected, float) and math.isnan(expected):
            self.assertEqual(actual, "", what)
        else:
            self.assertAlmostEqual(float(actual), expected, places=6, msg=what)

    def summary(self, rows):
        path = os.path.join(self.dir, "summary.csv")
        fixtures.write_summary(path, rows)
        return path


class PredictedVsMeasured(PlotTest):
    def test_csv_holds_medians_iqr_and_errors_per_point(self):
        rng = random.Random(7)
        rows, truth = [], {}
        for cap in (0.25, 1, 25):
            for rep in range(3):
                measured = rng.uniform(0.08, 0.12) * (1 + 1 / cap)
                predicted = measured * rng.uniform(0.9, 1.1)
                rows.append(fixtures.summary_row(point=f"cap{cap}", rep=rep, bucket_cap_mb=cap,
                                                 measured_iter_s=measured, predicted_iter_s=predicted))
                truth.setdefault(cap, []).append((measured, predicted))
            # Rows the figure must ignore: a what-if prediction and a broken run.
            rows.append(fixtures.summary_row(point=f"cap{cap}", rep=0, variant="w64", bucket_cap_mb=cap,
                                             predicted_world_size=64, predicted_iter_s=9.0))
            rows.append(fixtures.summary_row(point=f"cap{cap}", rep=3, bucket_cap_mb=cap,
                                             measured_iter_s=100.0, status="error"))
        self.plot("predicted-vs-measured", self.summary(rows))
        plotted = self.assert_figure("predicted-vs-measured")
        self.assertEqual([float(r["bucket_cap_mb"]) for r in plotted], [0.25, 1, 25])
        for row in plotted:
            pairs = truth[float(row["bucket_cap_mb"])]
            measured_tput = [2 * 32 / m for m, _ in pairs]
            predicted_tput = [2 * 32 / p for _, p in pairs]
            errors = [100 * (p - m) / m for m, p in pairs]
            self.assert_close(row["measured_median"], statistics.median(measured_tput), "median")
            self.assert_close(row["measured_q25"], quantile(measured_tput, 0.25), "q25")
            self.assert_close(row["measured_q75"], quantile(measured_tput, 0.75), "q75")
            self.assert_close(row["predicted_median"], statistics.median(predicted_tput), "pred")
            self.assert_close(row["error_pct_median"], statistics.median(errors), "error")
            self.assertEqual(int(row["repetitions"]), 3)

    def test_straggler_axis_is_the_slowdown_factor(self):
        # max_slowdown is what the runner's skew parser read from the slowdown column.
        rows = [fixtures.summary_row(point=f"s{f}", slowdown=f"1={f}", max_slowdown=f,
                                     measured_iter_s=0.1 * f, predicted_iter_s=0.1 * f)
                for f in (1.0, 2.0, 3.0)]
        self.plot("predicted-vs-measured", self.summary(rows))
        plotted = self.assert_figure("predicted-vs-measured")
        self.assertEqual([float(r["slowdown"]) for r in plotted], [1.0, 2.0, 3.0])
        self.assert_close(plotted[2]["measured_median"], 2 * 32 / 0.3, "3x straggler")

    def test_older_summary_without_skew_numbers_says_how_to_add_them(self):
        rows = [fixtures.summary_row(point=f"s{f}", slowdown=f"1={f}", measured_iter_s=0.1 * f,
                                     predicted_iter_s=0.1 * f)
                for f in (1.5, 2.0)]
        path = os.path.join(self.dir, "old.csv")
        fixtures.write_summary(path, rows, fixtures.OLD_SUMMARY_COLUMNS)
        result = self.plot("predicted-vs-measured", path, expect=2)
        self.assertIn(f"{path}: expected column max_slowdown", result.stderr)


class Timeline(PlotTest):
    def test_bars_are_the_trace_events_of_the_median_iteration(self):
        measured_dir = os.path.join(self.dir, "measured")
        predicted_dir = os.path.join(self.dir, "predicted")
        events = fixtures.write_trace(measured_dir, iterations=5, seed=3)
        predicted = fixtures.write_trace(predicted_dir, iterations=5, seed=4, speed=0.9,
                                         source="simulated")
        self.plot("timeline", measured_dir, "--predicted", predicted_dir)
        plotted = self.assert_figure("timeline-measured")  # default name: timeline-TRACE

        # The typical iteration: median job time (slowest rank) over iterations >= 1.
        def job_time(evs, it):
            spans = []
            for rank_events in evs.values():
                t = {e["event"]: e["t_ns"] for e in rank_events if e["iteration"] == it}
                spans.append(t["iteration_end"] - t["iteration_begin"])
            return max(spans)
        ordered = sorted(range(1, 5), key=lambda it: (job_time(events, it), it))
        chosen = ordered[(len(ordered) - 1) // 2]

        for source, evs in (("measured", events), ("predicted", predicted)):
            rows = [r for r in plotted if r["source"] == source]
            t0 = min(e["t_ns"] for rank_events in evs.values() for e in rank_events
                     if e["iteration"] == chosen and e["event"] == "iteration_begin")
            expected = []
            for rank, rank_events in evs.items():
                it = [e for e in rank_events if e["iteration"] == chosen]
                for phase in ("forward", "backward", "optimizer"):
                    begin = next(e["t_ns"] for e in it if e["event"] == phase + "_begin")
                    end = next(e["t_ns"] for e in it if e["event"] == phase + "_end")
                    expected.append((rank, "compute", phase, "", (begin - t0) / 1e6, (end - t0) / 1e6))
                for bucket in range(3):
                    begin = next(e["t_ns"] for e in it if e["event"] == "allreduce_begin" and e["bucket"] == bucket)
                    end = next(e["t_ns"] for e in it if e["event"] == "allreduce_end" and e["bucket"] == bucket)
                    expected.append((rank, "comm", "allreduce", str(bucket), (begin - t0) / 1e6, (end - t0) / 1e6))
            got = sorted((int(r["rank"]), r["lane"], r["phase"], r["bucket"].replace(".0", ""),
                          float(r["start_ms"]), float(r["end_ms"])) for r in rows)
            self.assertEqual(len(got), len(expected), source)
            for g, e in zip(got, sorted(expected)):
                self.assertEqual(g[:4], e[:4])
                self.assertAlmostEqual(g[4], e[4], places=6)
                self.assertAlmostEqual(g[5], e[5], places=6)

    def test_explicit_iteration_and_injected_delay(self):
        trace = os.path.join(self.dir, "trace")
        fixtures.write_trace(trace, iterations=4, delay=(1, 2, 4.0))
        self.plot("timeline", trace, "--iteration", "2", "--name", "stall")
        plotted = self.assert_figure("stall")
        delays = [r for r in plotted if r["phase"] == "delay"]
        self.assertEqual(len(delays), 1)
        self.assertEqual(delays[0]["rank"], "1")
        self.assertAlmostEqual(float(delays[0]["end_ms"]) - float(delays[0]["start_ms"]), 4.0, places=6)

    def test_sample_trace_of_the_repository(self):
        sample = os.path.join(SOURCE_DIR, "traces", "examples", "sample")
        if not os.path.isdir(sample):
            self.skipTest("traces/examples/sample/ not present")
        self.plot("timeline", sample)
        rows = self.assert_figure("timeline-sample")
        self.assertTrue(any(r["phase"] == "allreduce" for r in rows))


    def test_legend_names_only_the_bucket_colours_drawn(self):
        import pandas as pd
        from ddpsim.plot.timeline import legend_handles

        def labels(buckets):
            bars = pd.DataFrame({"phase": ["forward"] + ["allreduce"] * len(buckets),
                                 "bucket": [-1] + buckets})
            return [h.get_label() for h in legend_handles(bars)]
        one = labels([0, 0])
        self.assertIn("all-reduce (bucket 0, 2, …)", one)
        self.assertNotIn("all-reduce (bucket 1, 3, …)", one)
        self.assertIn("all-reduce (bucket 1, 3, …)", labels([0, 1, 2]))
        self.assertNotIn("injected delay", labels([0]))


class TimeoutCurve(PlotTest):
    def test_failure_fractions_per_delay_and_timeout(self):
        rows, measured, predicted = [], {}, {}
        rng = random.Random(11)
        for delay in (500, 3000):
            for timeout in (1, 4):
                for rep in range(3):
                    failed = int(delay / 1000 > timeout or rng.random() < 0.3)
                    rows.append(fixtures.summary_row(
                        point=f"d{delay}t{timeout}", rep=rep, delay=f"1={delay}@5", max_delay_ms=delay, timeout_s=timeout,
                        predicted_timeout_s=timeout, measured_iter_s=0.1, predicted_iter_s=0.1,
                        measured_failed=failed, predicted_failed=int(delay / 1000 > timeout)))
                    measured.setdefault((delay, timeout), []).append(failed)
                    if timeout == 4:  # predictions come from the runs at the largest timeout
                        predicted.setdefault((delay, timeout), []).append(int(delay / 1000 > timeout))
                    for what_if in (0.5, 2.0, 4.0):
                        # A trace cut short by a real timeout lacks the stall: no failure.
                        fails = int(delay / 1000 > what_if) if timeout == 4 else 0
                        rows.append(fixtures.summary_row(
                            point=f"d{delay}t{timeout}", rep=rep, variant=f"timeout{what_if}",
                            delay=f"1={delay}@5", max_delay_ms=delay, timeout_s=timeout, predicted_timeout_s=what_if,
                            predicted_iter_s=0.1, measured_failed="", predicted_failed=fails))
                        # A what-if at the measured timeout repeats the base replay: once.
                        if timeout == 4 and what_if != timeout:
                            predicted.setdefault((delay, what_if), []).append(fails)
        self.plot("timeout-curve", self.summary(rows))
        plotted = self.assert_figure("timeout-curve")
        got = {(r["source"], float(r["delay_ms"]), float(r["timeout_s"])): (float(r["failure_probability"]), int(r["runs"]))
               for r in plotted}
        expected = {("measured", d, t): (sum(v) / len(v), len(v)) for (d, t), v in measured.items()}
        expected.update({("predicted", d, t): (sum(v) / len(v), len(v)) for (d, t), v in predicted.items()})
        self.assertEqual(set(got), set(expected))
        for key, (probability, runs) in expected.items():
            self.assertAlmostEqual(got[key][0], probability, places=9, msg=str(key))
            self.assertEqual(got[key][1], runs, str(key))


class Timeouts(PlotTest):
    """Each run measured at timeout 1 s against the replay at 1 s of its repetition's 4 s run."""

    def trace(self, name, delay_ms, rep, failure_after_s=None):
        """A 2-rank trace with rank 1 stalled at iteration 2; with failure_after_s, rank 0's
        bucket 0 of that iteration times out that long after the stall began."""
        path = os.path.join(self.dir, name)
        events = fixtures.write_trace(path, iterations=4, seed=rep + 1, delay=(1, 2, delay_ms))
        if failure_after_s is not None:
            stall = next(e["t_ns"] for e in events[1] if e["event"] == "delay")
            with open(os.path.join(path, "rank-0.events.csv"), "a") as handle:
                handle.write(f"0,2,failure,{stall + int(failure_after_s * 1e9)},0,,,1000000000,timeout,\n")
        return name

    def test_outcomes_where_and_time_to_failure(self):
        rng = random.Random(3)
        rows, expected = [], {}
        for delay in (500, 3000):
            for rep in range(2):
                for timeout in (1, 4):
                    # Measured: the 3 s stall kills the 1 s job; so does one unlucky 0.5 s run.
                    failed = int(delay / 1000 > timeout or (delay, rep, timeout) == (500, 1, 1))
                    after = rng.uniform(1.0, 1.05) if failed else None
                    point = f"d{delay}t{timeout}"
                    rows.append(fixtures.summary_row(
                        point=point, rep=rep, delay=f"1={delay}@2", max_delay_ms=delay, timeout_s=timeout,
                        predicted_timeout_s=timeout, measured_iter_s=0.1, predicted_iter_s=0.1,
                        measured_failed=failed, predicted_failed=0,
                        trace_dir=self.trace(f"traces/{point}-rep{rep}", delay, rep, after),
                        predicted_dir=self.trace(f"predictions/{point}-rep{rep}", delay, rep)))
                    if timeout == 1:
                        expected[(delay, rep)] = (failed, after)
                    for what_if in (1, 4):
                        if timeout != 4:
                            continue  # only the 4 s runs predict; the others' replays are ignored
                        fails = int(delay / 1000 > what_if)
                        predicted_after = rng.uniform(1.0, 1.02) if fails else None
                        rows.append(fixtures.summary_row(
                            point=point, rep=rep, variant=f"timeout{what_if}", delay=f"1={delay}@2",
                            max_delay_ms=delay, timeout_s=timeout, predicted_timeout_s=what_if,
                            predicted_iter_s=0.1, measured_failed="", predicted_failed=fails,
                            trace_dir=f"traces/{point}-rep{rep}",
                            predicted_dir=self.trace(f"predictions/{point}-rep{rep}-timeout{what_if}",
                                                     delay, rep, predicted_after)))
                        if what_if == 1:
                            expected[(delay, rep)] += (fails, predicted_after)
        result = self.plot("timeouts", self.summary(rows))
        got = {(float(r["delay_ms"]), int(r["rep"])): r for r in read_csv(os.path.join(self.out, "timeouts.csv"))}
        self.assertEqual(set(got), {(float(d), r) for d, r in expected})
        for (delay, rep), (failed, after, fails, predicted_after) in expected.items():
            row = got[(float(delay), rep)]
            self.assertEqual(float(row["timeout_s"]), 1.0)
            self.assertEqual(int(row["outcome_right"]), int(failed == fails), (delay, rep))
            if failed and fails:
                self.assertEqual(row["measured_where"], "rank 0 iteration 2 bucket 0")
                self.assertEqual(int(row["where_right"]), 1)
                self.assertAlmostEqual(float(row["measured_time_to_failure_s"]), after, places=6)
                self.assertAlmostEqual(float(row["time_to_failure_error_pct"]),
                                       100 * (predicted_after - after) / after, places=3)
            else:
                self.assertEqual(row["time_to_failure_error_pct"], "")
        # 3 of 4 outcomes right (the unlucky 0.5 s run survives in the replay), 2 times to failure.
        self.assertIn("die/survive right 3 of 4", result.stdout)
        self.assertIn("(2 runs)", result.stdout)
        self.plot("timeouts", self.summary(rows), "--from-timeout", "2", expect=2)


class Scaling(PlotTest):
    def test_measured_medians_and_predictions_from_the_largest_world(self):
        rng = random.Random(5)
        rows, measured = [], {}
        for world in (1, 2, 3):
            for rep in range(3):
                t = rng.uniform(0.1, 0.12) * (1 + 0.1 * (world - 1))
                rows.append(fixtures.summary_row(point=f"w{world}", rep=rep, world_size=world,
                                                 measured_iter_s=t, predicted_iter_s=t * 1.05))
                measured.setdefault(world, []).append(world * 32 / t)
                for target in (8, 1024):
                    rows.append(fixtures.summary_row(point=f"w{world}", rep=rep, world_size=world,
                                                     variant=f"w{target}", predicted_world_size=target,
                                                     predicted_iter_s=t * (1 + target / (1000 * world))))
        self.plot("scaling", self.summary(rows))
        plotted = {int(r["world_size"]): r for r in self.assert_figure("scaling")}
        self.assertEqual(sorted(plotted), [1, 2, 3, 8, 1024])
        per_rank = statistics.median(measured[1])
        predicted_rows = [r for r in rows if r["world_size"] == 3]
        for world, row in plotted.items():
            if world in measured:
                self.assert_close(row["measured_median"], statistics.median(measured[world]), "m")
                self.assert_close(row["measured_q25"], quantile(measured[world], 0.25), "q25")
            else:
                self.assertEqual(row["measured_median"], "")
            tput = [float(r["predicted_samples_per_s"]) for r in predicted_rows
                    if int(r["predicted_world_size"]) == world]
            self.assert_close(row["predicted_median"],
                              statistics.median(tput) if tput else math.nan, f"pred W={world}")
            self.assert_close(row["ideal"], per_rank * world, "ideal")
            self.assertEqual(row["predicted_from_world_size"], "3")


class Errors(PlotTest):
    def test_the_error_is_the_runners_column_not_recomputed(self):
        # One definition of the error (trace::relative_error, written by the runner as
        # error_pct): the table reads that column, so one that disagrees with the times shows.
        row = fixtures.summary_row(point="x", measured_iter_s=0.1, predicted_iter_s=0.11)
        row["error_pct"] = -12.5
        path = os.path.join(self.dir, "s.csv")
        fixtures.write_summary(path, [row])
        self.plot("errors", path)
        table = read_csv(os.path.join(self.out, "errors.csv"))
        self.assert_close(table[0]["median_abs_error_pct"], 12.5, "median")
        self.assert_close(table[0]["median_error_pct"], -12.5, "signed")

    def test_reconstruction_table_of_median_and_p90_absolute_errors(self):
        rng = random.Random(9)
        first, second, all_errors = [], [], {"a": [], "b": []}
        for name, rows in (("a", first), ("b", second)):
            for rep in range(7):
                m = rng.uniform(0.1, 0.2)
                p = m * rng.uniform(0.8, 1.2)
                rows.append(fixtures.summary_row(experiment=name, point="x", rep=rep,
                                                 measured_iter_s=m, predicted_iter_s=p))
                all_errors[name].append(abs(100 * (p - m) / m))
        path_a = os.path.join(self.dir, "a.csv")
        path_b = os.path.join(self.dir, "b.csv")
        fixtures.write_summary(path_a, first)
        # A summary from before the kind column: its rows are reconstructions all the same.
        fixtures.write_summary(path_b, second, fixtures.OLD_SUMMARY_COLUMNS)
        result = self.plot("errors", path_a, path_b)
        table = read_csv(os.path.join(self.out, "errors.csv"))
        self.assert_figure("errors-cdf")
        combined = all_errors["a"] + all_errors["b"]
        for row, values in zip(table, (all_errors["a"], all_errors["b"], combined)):
            self.assertEqual(row["kind"], "reconstruction")
            self.assertEqual(int(row["runs"]), len(values))
            self.assert_close(row["median_abs_error_pct"], statistics.median(values), "median")
            self.assert_close(row["p90_abs_error_pct"], quantile(values, 0.9), "p90")
            self.assert_close(row["max_abs_error_pct"], max(values), "max")
        self.assertEqual([r["experiment"] for r in table], ["a", "b", "all"])
        self.assertIn(f"{statistics.median(combined):.1f}", result.stdout)
        self.assertIn(f"{quantile(combined, 0.9):.1f}", result.stdout)
        # No prediction rows: the prediction table says so, and nothing is called a prediction.
        prediction, reconstruction = result.stdout.split("Reconstruction")
        self.assertIn("What-if predictions", prediction)
        self.assertIn("none in these summaries", prediction)
        self.assertNotIn("experiment", prediction)  # no table, no rows

    def test_interval_widened_by_the_run_to_run_spread_is_read_from_the_summary(self):
        # The runner writes each prediction's interval widened by its baseline's run-to-run
        # spread (run_to_run_lo_s / hi_s, from ddp-sim replay --repeats) and whether the measured
        # median lies in it (inside_run_to_run); the table counts those, not a spread of its own.
        # Three predictions: inside only the widened interval, outside both, inside both.
        rows = []
        for rep, measured in enumerate((1.15, 1.25, 0.99)):
            rows.append(fixtures.summary_row(experiment="slow", point="base", rep=rep, kind="reconstruction",
                                             measured_iter_s=1.0, predicted_iter_s=1.0,
                                             predicted_lo_s=0.9, predicted_hi_s=1.1,
                                             trace_dir=f"traces/base-rep{rep}"))
            rows.append(fixtures.summary_row(experiment="slow", point="x2", rep=rep, variant="from-base",
                                             kind="prediction", measured_iter_s=measured, predicted_iter_s=1.0,
                                             predicted_lo_s=0.98, predicted_hi_s=1.02,
                                             inside=int(0.98 <= measured <= 1.02),
                                             run_to_run_lo_s=0.8, run_to_run_hi_s=1.2,
                                             trace_dir=f"traces/x2-rep{rep}", replayed_trace=f"traces/base-rep{rep}"))
        self.assertEqual([r["inside_run_to_run"] for r in rows[1::2]], [1, 0, 1])  # as the comment says
        result = self.plot("errors", self.summary(rows))
        table = read_csv(os.path.join(self.out, "errors.csv"))
        self.assert_close(table[0]["inside_fraction"], 1 / 3, "bootstrap only")
        self.assert_close(table[0]["inside_run_to_run_fraction"], 2 / 3, "widened")
        self.assertEqual(table[2]["inside_run_to_run_fraction"], "")  # not for reconstructions
        self.assertIn("67 % of 3", result.stdout)

    def test_ks_floor_is_a_perfect_models_median_ks_for_the_runs_length(self):
        # The median one-sample KS distance of n draws, by Stephens' approximation of the
        # Kolmogorov distribution: 0.8276 / (sqrt(n) + 0.12 + 0.11 / sqrt(n)).
        from ddpsim.plot import errors
        for n in (29, 99):
            stephens = 0.8276 / (math.sqrt(n) + 0.12 + 0.11 / math.sqrt(n))
            self.assertAlmostEqual(errors.ks_floor(n), stephens, delta=0.004, msg=n)
        self.assertTrue(math.isnan(errors.ks_floor(0)))
        rows = []
        for rep in range(3):
            rows.append(fixtures.summary_row(experiment="stall", point="d", rep=rep, variant="from-none",
                                             kind="prediction", measured_iter_s=0.1, predicted_iter_s=0.1,
                                             delay_dist="1=exp:5", ks_distance=0.1 * (rep + 1), p50_error_pct=1,
                                             p90_error_pct=2, p99_error_pct=3, measured_iterations=30))
        result = self.plot("errors", self.summary(rows))
        table = read_csv(os.path.join(self.out, "errors-distribution.csv"))
        self.assert_close(table[0]["median_ks_distance"], 0.2, "ks")
        self.assert_close(table[0]["ks_floor"], errors.ks_floor(29), "floor of iterations >= 1")
        self.assertIn(f"{errors.ks_floor(29):.3f}", result.stdout)

    def bias_rows(self, rep_errors, experiment="slow"):
        """Two predictions per repetition with signed errors e - 1 and e + 1 %: the repetition's
        median is e."""
        rows = []
        for rep, error in enumerate(rep_errors):
            for point, offset in (("x2", -1.0), ("x3", 1.0)):
                rows.append(fixtures.summary_row(experiment=experiment, point=point, rep=rep,
                                                 variant="from-base", kind="prediction", measured_iter_s=1.0,
                                                 predicted_iter_s=1.0 + (error + offset) / 100))
        return rows

    def bias_table(self, *paths):
        result = self.plot("errors", *paths)
        return [r for r in read_csv(os.path.join(self.out, "errors-bias.csv"))], result

    def test_bias_is_the_median_of_repetition_medians_in_the_sign_tests_interval(self):
        # Ten repetitions: coverage of [x_(k), x_(11-k)] is 1 - 2 P(Bin(10, 1/2) <= k - 1):
        # k = 2 gives 1 - 2 * 11/1024 = 97.85 %, k = 3 gives 89.06 % < 90 %, so [x_(2), x_(9)].
        rep_errors = [3.0, -2.0, 5.0, 1.0, 8.0, 0.5, 2.5, -4.0, 6.0, 4.0]
        table, result = self.bias_table(self.summary(self.bias_rows(rep_errors)))
        ordered = sorted(rep_errors)
        row = table[0]
        self.assertEqual((row["kind"], row["experiment"], row["variant"]), ("prediction", "slow", "from-base"))
        self.assertEqual((int(row["repetitions"]), int(row["pairs"])), (10, 20))
        self.assert_close(row["bias_pct"], statistics.median(rep_errors), "bias")
        self.assert_close(row["lo_pct"], ordered[1], "lo")
        self.assert_close(row["hi_pct"], ordered[8], "hi")
        self.assert_close(row["coverage"], 1 - 2 * 11 / 1024, "coverage")
        self.assertEqual(row["verdict"], "none beyond noise")
        self.assertEqual(table[1]["experiment"], "all")
        self.assertIn("Bias", result.stdout)
        self.assertIn(f"[{ordered[1]:+.1f}, {ordered[8]:+.1f}]", result.stdout)

    def test_bias_says_which_way_and_needs_five_repetitions(self):
        table, _ = self.bias_table(self.summary(self.bias_rows([2.0, 3.0, 1.5, 4.0, 2.2])))
        self.assertEqual(table[0]["verdict"], "predicts high")
        self.assert_close(table[0]["lo_pct"], 1.5, "five: [min, max], 93.75 %")
        self.assert_close(table[0]["coverage"], 1 - 2 / 32, "coverage")
        table, _ = self.bias_table(self.summary(self.bias_rows([-2.0, -3.0, -1.5, -4.0, -0.2])))
        self.assertEqual(table[0]["verdict"], "predicts low")
        table, _ = self.bias_table(self.summary(self.bias_rows([2.0, 3.0, 1.5, 4.0])))
        self.assertEqual(table[0]["verdict"], "-")  # 87.5 % at best
        self.assertEqual(table[0]["lo_pct"], "")
        self.assert_close(table[0]["bias_pct"], 2.5, "the median all the same")

    def test_bias_pools_sittings_a_repetition_per_file(self):
        # The same experiment and reps in two summaries are ten repetitions, not five.
        first = os.path.join(self.dir, "first.csv")
        second = os.path.join(self.dir, "second.csv")
        fixtures.write_summary(first, self.bias_rows([1.0, 2.0, 3.0, 4.0, 5.0]))
        fixtures.write_summary(second, self.bias_rows([-1.0, -2.0, -3.0, -4.0, -5.0]))
        table, _ = self.bias_table(first, second)
        self.assertEqual(int(table[0]["repetitions"]), 10)
        self.assert_close(table[0]["bias_pct"], 0.0, "pooled median")
        self.assertEqual(table[0]["verdict"], "none beyond noise")

    def targets_summary(self, slowed_errors, cap_errors, measured_spread=(1.0, 1.0)):
        """A sitting in one summary: 2-rank runs of a baseline, slowed points and cap points (their
        predictions' signed errors given per repetition), a stall point with a KS per repetition,
        and a 1 -> 2 rank world-size prediction that the targets leave out. Each point's runs
        measure measured_spread[rep % 2] s, so the repeat floor is known."""
        rows = []
        def run(experiment, point, rep, measured, world_size=2, **fields):
            trace = f"traces/{point}-rep{rep}"
            rows.append(fixtures.summary_row(experiment=experiment, point=point, rep=rep, kind="reconstruction",
                                             world_size=world_size, trace_dir=trace, measured_iter_s=measured,
                                             predicted_iter_s=measured, **fields))
            return trace
        for rep in range(len(slowed_errors)):
            m = measured_spread[rep % 2]
            base = run("slow", "none", rep, m)
            for point, error in slowed_errors[rep].items():
                run("slow", point, rep, m, slowdown=f"1={point}")
                rows.append(fixtures.summary_row(
                    experiment="slow", point=point, rep=rep, variant="from-none", kind="prediction",
                    slowdown=f"1={point}", trace_dir=f"traces/{point}-rep{rep}", replayed_trace=base,
                    measured_iter_s=m, predicted_iter_s=m * (1 + error / 100)))
            base = run("caps", "cap25", rep, m)
            for point, error in cap_errors[rep].items():
                run("caps", point, rep, m)
                rows.append(fixtures.summary_row(
                    experiment="caps", point=point, rep=rep, variant="from-cap25", kind="prediction",
                    trace_dir=f"traces/{point}-rep{rep}", replayed_trace=base, measured_iter_s=m,
                    predicted_iter_s=m * (1 + error / 100)))
            base = run("stall", "quiet", rep, m)
            run("stall", "stalled", rep, m, delay_dist="1=exp:5")
            rows.append(fixtures.summary_row(
                experiment="stall", point="stalled", rep=rep, variant="from-quiet", kind="prediction",
                delay_dist="1=exp:5", trace_dir=f"traces/stalled-rep{rep}", replayed_trace=base,
                measured_iter_s=m, predicted_iter_s=m, ks_distance=0.1, p50_error_pct=0, p90_error_pct=0,
                p99_error_pct=0, measured_iterations=100))
            one = run("world", "w1", rep, m, world_size=1)
            run("world", "w2", rep, m)
            rows.append(fixtures.summary_row(
                experiment="world", point="w2", rep=rep, variant="from-w1", kind="prediction",
                trace_dir=f"traces/w2-rep{rep}", replayed_trace=one, measured_iter_s=m, predicted_iter_s=m * 1.5))
        return self.summary(rows)

    def test_targets_over_two_rank_what_ifs_beside_a_perfect_models_score(self):
        from ddpsim.plot import errors
        rng = random.Random(5)
        slowed = [{f"{f}": rng.uniform(-4, 4) for f in (1.5, 2, 3)} for _ in range(6)]
        caps = [{f"cap{c}": rng.uniform(-9, 9) for c in (1, 5)} for _ in range(6)]
        result = self.plot("errors", self.targets_summary(slowed, caps))
        table = {r["target"]: r for r in read_csv(os.path.join(self.out, "errors-targets.csv"))}
        two_rank = [abs(e) for rep in slowed + caps for e in rep.values()] + [0.0] * 6  # + the stalls
        straggler = [abs(e) for rep in slowed for e in rep.values()]
        self.assertEqual(int(table["median |err| %"]["pairs"]), 36)  # the 1 -> 2 ranks left out
        self.assert_close(table["median |err| %"]["value"], statistics.median(two_rank), "median")
        self.assert_close(table["p90 |err| %"]["value"], quantile(two_rank, 0.9), "p90")
        self.assert_close(table["stragglers median |err| %"]["value"], statistics.median(straggler), "stragglers")
        self.assertEqual(int(table["stragglers median |err| %"]["pairs"]), 18)
        self.assert_close(table["stall KS"]["value"], 0.1, "ks")
        self.assert_close(table["stall KS"]["perfect_model"], errors.ks_floor(99), "ks floor")
        # Every run measured 1.0 s: a perfect model scores 0 here.
        self.assert_close(table["median |err| %"]["perfect_model"], 0.0, "floor")
        self.assertEqual(table["median |err| %"]["met"], str(statistics.median(two_rank) <= 3.0))
        self.assertEqual(table["stragglers median |err| %"]["met"], "True")
        self.assertEqual(table["stall KS"]["met"], "True")
        self.assertIn("Against issue 16's first targets", result.stdout)

    def test_targets_per_configuration_count_each_sittings_configurations_apart(self):
        # Five sittings (one summary each) of six repetitions; each run measures 1.0 s, so a
        # configuration's error is the median over its repetitions of its predictions' errors.
        rng = random.Random(11)
        sittings, medians, slowed_medians = [], [], []
        for sitting in range(5):
            slowed = [{f"{f}": rng.uniform(-6, 2) for f in (1.5, 2, 3)} for _ in range(6)]
            caps = [{f"cap{c}": rng.uniform(-12, 12) for c in (1, 5)} for _ in range(6)]
            path = self.targets_summary(slowed, caps)
            os.rename(path, os.path.join(self.dir, f"summary-{sitting}.csv"))
            sittings.append(os.path.join(self.dir, f"summary-{sitting}.csv"))
            for reps in (slowed, caps):
                for point in reps[0]:
                    medians.append(abs(statistics.median(rep[point] for rep in reps)))
                    if reps is slowed:
                        slowed_medians.append(medians[-1])
            medians.append(0.0)  # the stall point, predicted exactly
        result = self.plot("errors", *sittings)
        table = {r["target"]: r for r in read_csv(os.path.join(self.out, "errors-targets-configurations.csv"))}
        self.assertEqual(int(table["median |err| %"]["pairs"]), 30)  # 6 per sitting, the 1 -> 2 ranks left out
        self.assert_close(table["median |err| %"]["value"], statistics.median(medians), "median")
        self.assert_close(table["p90 |err| %"]["value"], quantile(medians, 0.9), "p90")
        self.assert_close(table["stragglers median |err| %"]["value"], statistics.median(slowed_medians), "stragglers")
        self.assertEqual(int(table["stragglers median |err| %"]["pairs"]), 15)
        self.assert_close(table["median |err| %"]["perfect_model"], float("nan"), "no floor")
        self.assertEqual(table["median |err| %"]["met"], str(statistics.median(medians) <= 3.0))
        self.assertIn("per configuration (each 2-rank configuration of >= 5", result.stdout)
        # One sitting: 6 configurations, too few to call the target met.
        self.plot("errors", sittings[0])
        table = {r["target"]: r for r in read_csv(os.path.join(self.out, "errors-targets-configurations.csv"))}
        self.assertEqual(int(table["median |err| %"]["pairs"]), 6)
        self.assertEqual(table["median |err| %"]["met"], "False")

    def test_no_per_configuration_targets_under_five_repetitions(self):
        slowed = [{"2": 1.0} for _ in range(4)]
        caps = [{"cap1": 1.0} for _ in range(4)]
        result = self.plot("errors", self.targets_summary(slowed, caps))
        self.assertFalse(os.path.exists(os.path.join(self.out, "errors-targets-configurations.csv")))
        self.assertIn("Against issue 16's first targets (2-rank", result.stdout)
        self.assertNotIn("per configuration (each", result.stdout)

    def test_a_target_missed_where_a_perfect_model_misses_it_too_says_so(self):
        # Runs alternate 1.0 and 1.2 s: one as the prediction of another is off 0, 20 or -16.7 %.
        slowed = [{"2": 6.0} for _ in range(6)]
        caps = [{"cap1": 0.5} for _ in range(6)]
        result = self.plot("errors", self.targets_summary(slowed, caps, measured_spread=(1.0, 1.2)))
        table = {r["target"]: r for r in read_csv(os.path.join(self.out, "errors-targets.csv"))}
        self.assertEqual(table["stragglers median |err| %"]["met"], "False")
        self.assert_close(table["stragglers median |err| %"]["perfect_model"],
                          quantile([0.0] * 12 + [100 / 6] * 9 + [20.0] * 9, 0.5), "floor of the slowed point")
        self.assertIn("missed; a perfect model would too", result.stdout)
        # 18 pairs: a median under 3 % is not the target met.
        self.assertEqual(table["median |err| %"]["met"], "False")
        self.assertIn("met, but fewer than 30 pairs", result.stdout)

    def test_repeat_floor_of_runs_of_one_configuration(self):
        # Point "a" measured 1.0, 1.1, 1.2 s in three repetitions, "b" 2.0 and 2.5 s, "c" once:
        # run s as the prediction of run r gives 100 (m_s - m_r) / m_r over the ordered pairs.
        runs = {"a": (1.0, 1.1, 1.2), "b": (2.0, 2.5), "c": (3.0,)}
        rows = []
        for point, measured in runs.items():
            for rep, m in enumerate(measured):
                rows.append(fixtures.summary_row(experiment="e", point=point, rep=rep, kind="reconstruction",
                                                 measured_iter_s=m, predicted_iter_s=m))
                # A prediction of the same run is not another run.
                rows.append(fixtures.summary_row(experiment="e", point=point, rep=rep, variant="from-a",
                                                 kind="prediction", measured_iter_s=m, predicted_iter_s=m))
        failed = fixtures.summary_row(experiment="e", point="a", rep=3, kind="reconstruction",
                                      measured_iter_s=9.0, predicted_iter_s=9.0)
        failed["status"] = "failed"
        result = self.plot("errors", self.summary(rows + [failed]))
        expected = [abs(100 * (m_s - m_r) / m_r) for measured in runs.values()
                    for r, m_r in enumerate(measured) for s, m_s in enumerate(measured) if r != s]
        self.assertEqual(len(expected), 8)
        table = read_csv(os.path.join(self.out, "errors-floor.csv"))
        self.assertEqual([r["experiment"] for r in table], ["e", "all"])
        self.assertEqual(int(table[0]["pairs"]), 8)
        self.assertEqual(int(table[0]["configurations"]), 2)
        self.assert_close(table[0]["median_abs_error_pct"], statistics.median(expected), "median")
        self.assert_close(table[0]["p90_abs_error_pct"], quantile(expected, 0.9), "p90")
        self.assertIn("Repeat floor", result.stdout)
        self.assertIn(f"{quantile(expected, 0.9):.1f}", result.stdout.split("Repeat floor")[1])
        # The pairs figure: every prediction's signed error, and the floor's band at +- its p90.
        self.assert_figure("errors-pairs")
        plotted = read_csv(os.path.join(self.out, "errors-pairs.csv"))
        band = sorted(float(r["error_pct"]) for r in plotted if r["kind"] == "floor_p90")
        self.assertEqual(len(band), 2)
        self.assert_close(band[1], quantile(expected, 0.9), "band")
        self.assert_close(band[0], -quantile(expected, 0.9), "band")
        self.assertEqual(sum(r["kind"] == "prediction" for r in plotted), 6)
        self.assertEqual(sum(r["kind"] == "reconstruction" for r in plotted), 6)

    def test_per_configuration_errors_compare_the_medians_over_repetitions(self):
        # Point "a": measured 1.0, 1.4, 1.1 s, predicted 1.3, 1.0, 1.2 s: every pair is off by
        # 10 % or more, the medians (1.1 against 1.2 s) by 100 / 11 %. Point "b": one repetition
        # predicted 2.2 s of a measured 2.0 s, one failed. Reconstructions are not configurations;
        # point "a" predicted from another baseline (1.1 s each time, 0 %) is another one.
        rows = []
        for rep, (m, p) in enumerate(((1.0, 1.3), (1.4, 1.0), (1.1, 1.2))):
            rows.append(fixtures.summary_row(experiment="e", point="a", rep=rep, variant="from-z",
                                             kind="prediction", measured_iter_s=m, predicted_iter_s=p))
            rows.append(fixtures.summary_row(experiment="e", point="a", rep=rep, variant="from-w",
                                             kind="prediction", measured_iter_s=m, predicted_iter_s=1.1))
            rows.append(fixtures.summary_row(experiment="e", point="z", rep=rep, kind="reconstruction",
                                             measured_iter_s=m, predicted_iter_s=3 * m))
        rows.append(fixtures.summary_row(experiment="f", point="b", rep=0, variant="from-y", kind="prediction",
                                         measured_iter_s=2.0, predicted_iter_s=2.2))
        failed = fixtures.summary_row(experiment="f", point="b", rep=1, variant="from-y", kind="prediction",
                                      measured_iter_s=2.0, predicted_iter_s=9.0)
        failed["status"] = "failed"
        result = self.plot("errors", self.summary(rows + [failed]))
        table = {r["experiment"]: r for r in read_csv(os.path.join(self.out, "errors-configurations.csv"))}
        self.assertEqual(list(table), ["e", "f", "all"])
        self.assertEqual((int(table["e"]["configurations"]), int(table["e"]["repetitions"])), (2, 3))
        self.assert_close(table["e"]["max_abs_error_pct"], 100 / 11, "medians of a from z")
        self.assert_close(table["e"]["median_error_pct"], 50 / 11, "a from z and from w")
        self.assertEqual(int(table["f"]["repetitions"]), 1)  # the failed repetition left out
        self.assert_close(table["f"]["median_error_pct"], 10.0, "b")
        self.assertEqual(int(table["all"]["configurations"]), 3)
        self.assert_close(table["all"]["max_abs_error_pct"], 10.0, "max")
        self.assert_close(table["all"]["median_abs_error_pct"], 100 / 11, "median of 100/11, 0 and 10")
        self.assertIn("per configuration", result.stdout)

    def test_predictions_first_and_reconstructions_apart(self):
        rows, predicted, rebuilt, inside, ks = [], [], [], [], []
        rng = random.Random(3)
        for rep in range(5):
            for point, cap in (("cap1", 1), ("cap25", 25)):
                m = rng.uniform(0.1, 0.2)
                r = m * rng.uniform(0.95, 1.05)
                rows.append(fixtures.summary_row(experiment="bucket", point=point, rep=rep,
                                                 bucket_cap_mb=cap, measured_iter_s=m,
                                                 predicted_iter_s=r))
                rebuilt.append(abs(100 * (r - m) / m))
                if point == "cap25":
                    continue
                p = m * rng.uniform(0.7, 1.3)
                lo, hi = p * 0.9, p * 1.1
                k = rng.uniform(0, 1)
                rows.append(fixtures.summary_row(
                    experiment="bucket", point=point, rep=rep, variant="from-cap25",
                    kind="prediction", bucket_cap_mb=cap, measured_iter_s=m, predicted_iter_s=p,
                    predicted_lo_s=lo, predicted_hi_s=hi, inside=int(lo <= m <= hi),
                    delay_dist="1=exp:5", ks_distance=k, p50_error_pct=1, p90_error_pct=2,
                    p99_error_pct=3))
                predicted.append(100 * (p - m) / m)
                inside.append(int(lo <= m <= hi))
                ks.append(k)
            # A what-if with no measurement is in neither table.
            rows.append(fixtures.summary_row(experiment="bucket", point="cap25", rep=rep,
                                             variant="w64", predicted_iter_s=0.3))
        path = self.summary(rows)
        result = self.plot("errors", path)
        table = read_csv(os.path.join(self.out, "errors.csv"))
        self.assertEqual([(r["kind"], r["experiment"], r["variant"]) for r in table],
                         [("prediction", "bucket", "from-cap25"), ("prediction", "all", ""),
                          ("reconstruction", "bucket", ""), ("reconstruction", "all", "")])
        self.assertEqual(int(table[0]["runs"]), 5)
        self.assert_close(table[0]["median_abs_error_pct"], statistics.median(map(abs, predicted)), "median")
        self.assert_close(table[0]["p90_abs_error_pct"], quantile([abs(e) for e in predicted], 0.9), "p90")
        self.assert_close(table[0]["median_error_pct"], statistics.median(predicted), "signed")
        self.assert_close(table[0]["inside_fraction"], sum(inside) / len(inside), "inside")
        self.assertEqual(int(table[2]["runs"]), 10)
        self.assert_close(table[2]["median_abs_error_pct"], statistics.median(rebuilt), "rebuilt")
        self.assertEqual(table[2]["inside_fraction"], "")  # no intervals there
        # Printed in that order, under titles that never call a reconstruction a prediction.
        out = result.stdout
        self.assertLess(out.index("What-if predictions"), out.index("Reconstruction ("))
        self.assertIn(f"{statistics.median(map(abs, predicted)):.1f}",
                      out[:out.index("Reconstruction (")])
        self.assertIn(f"{statistics.median(rebuilt):.1f}", out[out.index("Reconstruction ("):])
        distribution = read_csv(os.path.join(self.out, "errors-distribution.csv"))
        self.assertEqual(len(distribution), 1)
        self.assertEqual(distribution[0]["kind"], "prediction")
        self.assert_close(distribution[0]["median_ks_distance"], statistics.median(ks), "ks")
        self.assertIn("Iteration-time distributions", out)


class Models(PlotTest):
    """ddpsim-plot models: two models' predictions of the same measured runs, pair by pair."""

    def write(self, name, errors_by_experiment, measured=None):
        rows = []
        for experiment, errors in errors_by_experiment.items():
            for rep, error in enumerate(errors):
                m = 0.1 + 0.01 * rep if measured is None else measured
                rows.append(fixtures.summary_row(experiment=experiment, point="x", rep=rep, variant="from-y",
                                                 kind="prediction", measured_iter_s=m,
                                                 predicted_iter_s=m * (1 + error / 100)))
                # A reconstruction is not a prediction: left out of the comparison.
                rows.append(fixtures.summary_row(experiment=experiment, point="x", rep=rep, kind="reconstruction",
                                                 measured_iter_s=m, predicted_iter_s=m * (2 if name == "b" else 1)))
        path = os.path.join(self.dir, f"{name}.csv")
        fixtures.write_summary(path, rows)
        return path

    def test_pairs_each_prediction_with_its_twin_and_tests_the_difference(self):
        a = {"e1": [4, -6, 5, 3, -8, 2, 7, -5], "e2": [1, 2, -3]}
        b = {"e1": [1, -2, 4, -1, 3, 1, -2, 0.5], "e2": [0.5, -2, 4]}
        self.plot("models", self.write("a", a), self.write("b", b))
        table = read_csv(os.path.join(self.out, "models.csv"))
        self.assertEqual([r["experiment"] for r in table], ["e1", "e2", "all"])
        e1 = table[0]
        self.assertEqual(int(e1["pairs"]), 8)
        self.assert_close(e1["median_abs_a_pct"], statistics.median(abs(x) for x in a["e1"]), "A")
        self.assert_close(e1["median_abs_b_pct"], statistics.median(abs(x) for x in b["e1"]), "B")
        differences = [abs(y) - abs(x) for x, y in zip(a["e1"], b["e1"])]
        self.assert_close(e1["median_difference_pct"], statistics.median(differences), "B - A")
        # B is closer in all 8 pairs: both exact tests give 2 / 2**8.
        self.assertEqual(int(e1["b_closer"]), 8)
        self.assert_close(e1["wilcoxon_p"], 2 / 2 ** 8, "wilcoxon")
        self.assert_close(e1["sign_test_p"], 2 / 2 ** 8, "sign")
        e2 = table[1]  # one closer, one farther, one the same: no evidence
        self.assertEqual((int(e2["b_closer"]), int(e2["b_farther"])), (1, 1))
        self.assert_close(e2["wilcoxon_p"], 1.0, "wilcoxon")
        self.assertEqual(int(table[2]["pairs"]), 11)
        self.assertEqual(len(read_csv(os.path.join(self.out, "models-pairs.csv"))), 11)

    def test_other_measurements_or_a_missing_twin_are_one_line_errors(self):
        a = self.write("a", {"e": [1, 2, 3]})
        other = self.write("b", {"e": [1, 2, 3]}, measured=0.5)
        result = self.plot("models", a, other, expect=2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn(f"{other}: expected the measurements of {a} (ddp-experiment run --repredict)", result.stderr)
        fewer = self.write("b", {"e": [1, 2]})
        result = self.plot("models", a, fewer, expect=2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn(f"{fewer}: expected the twin of every prediction in {a}", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "models.csv")))


class MalformedInput(PlotTest):
    def assert_one_line_error(self, args, *fragments):
        result = self.plot(*args, expect=2)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith("ddpsim-plot: "), lines[0])
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def test_missing_column(self):
        path = os.path.join(self.dir, "summary.csv")
        with open(path, "w") as handle:
            handle.write("point,rep,variant,status\nx,0,,ok\n")
        self.assert_one_line_error(("predicted-vs-measured", path), path,
                                   "expected column(s) measured_samples_per_s")

    def test_text_in_a_numeric_column(self):
        rows = [fixtures.summary_row(point="a", measured_iter_s=0.1, predicted_iter_s=0.1),
                fixtures.summary_row(point="b", bucket_cap_mb=5, measured_iter_s=0.2,
                                     predicted_iter_s=0.1)]
        rows[1]["measured_iter_s"] = "fast"
        path = self.summary(rows)
        for command in ("predicted-vs-measured", "scaling", "errors", "timeout-curve"):
            self.assert_one_line_error((command, path), f"{path}:3: expected a number in column "
                                                        "'measured_iter_s', got 'fast'")

    def test_missing_and_empty_files(self):
        missing = os.path.join(self.dir, "nope.csv")
        self.assert_one_line_error(("scaling", missing), missing, "no such file")
        empty = os.path.join(self.dir, "empty.csv")
        open(empty, "w").close()
        self.assert_one_line_error(("errors", empty), empty, "an empty file")

    def test_bad_traces(self):
        self.assert_one_line_error(("timeline", self.dir), self.dir, "rank-R.meta.json")
        trace = os.path.join(self.dir, "trace")
        fixtures.write_trace(trace, iterations=2)
        with open(os.path.join(trace, "rank-1.events.csv"), "w") as handle:
            handle.write("rank,iter,event\n")
        self.assert_one_line_error(("timeline", trace), "rank-1.events.csv:1: expected the header")
        fixtures.write_trace(trace, iterations=2)
        self.assert_one_line_error(("timeline", trace, "--iteration", "7"),
                                   "expected iteration 7 complete on every rank")


class Advise(PlotTest):
    ADVICE = {
        "bucket": {"own": {"bucket_cap_mb": 25}, "recommended_bucket_cap_mb": 1,
                   "candidates": [{"bucket_cap_mb": 1, "median_iteration_s": 0.10, "interval_s": [0.09, 0.11]},
                                  {"bucket_cap_mb": 25, "median_iteration_s": 0.15, "interval_s": [0.14, 0.16]}]},
        "stragglers": {"ranks": [{"rank": 0, "per_iteration_s": 0.0, "interval_s": [0.0, 0.0], "straggler": False},
                                 {"rank": 1, "per_iteration_s": 0.05, "interval_s": [0.04, 0.06], "straggler": True}],
                       "all": {"per_iteration_s": 0.05, "interval_s": [0.04, 0.06]}},
    }

    def test_caps_and_rank_costs_with_intervals(self):
        path = os.path.join(self.dir, "advice.json")
        with open(path, "w") as handle:
            json.dump(self.ADVICE, handle)
        self.plot("advise", path)
        rows = self.assert_figure("advise")
        caps = [row for row in rows if row["panel"] == "bucket_cap"]
        self.assertEqual([(float(r["x"]), r["own"], r["marked"]) for r in caps], [(1.0, "False", "True"), (25.0, "True", "False")])
        self.assert_close(caps[0]["low_ms"], 90.0, "interval low")
        ranks = [row for row in rows if row["panel"] == "rank_cost"]
        self.assertEqual([(r["x"], r["marked"]) for r in ranks], [("0", "False"), ("1", "True"), ("all", "False")])
        self.assert_close(ranks[1]["value_ms"], 50.0, "rank 1's cost")

    def test_not_advice(self):
        path = os.path.join(self.dir, "other.json")
        with open(path, "w") as handle:
            handle.write("[1, 2]")
        result = self.plot("advise", path, expect=2)
        self.assertIn("expected keys 'bucket' and 'stragglers'", result.stderr)


class Whatif(PlotTest):
    def write(self, rows):
        path = os.path.join(self.dir, "whatif.csv")
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["where", "family", "config", "kind", "rep", "mode",
                                                        "measured_s", "predicted_s"])
            writer.writeheader()
            writer.writerows(rows)
        return path

    def test_medians_and_spread_over_repetitions_per_configuration(self):
        rows = []
        # Three repetitions; predictions of another mode and another family must be left out.
        for rep, (base, cap1, pred1) in enumerate([(0.40, 0.30, 0.27), (0.44, 0.32, 0.33), (0.42, 0.34, 0.30)]):
            rows.append({"family": "bucket", "config": "cap25", "kind": "reconstruction", "rep": rep,
                         "mode": "per-iteration/trace", "measured_s": base, "predicted_s": base * 0.98})
            rows.append({"family": "bucket", "config": "cap1", "kind": "prediction", "rep": rep,
                         "mode": "per-iteration/trace", "measured_s": cap1, "predicted_s": pred1})
            rows.append({"family": "bucket", "config": "cap1", "kind": "prediction", "rep": rep,
                         "mode": "median/trace", "measured_s": cap1, "predicted_s": 9.0})
            rows.append({"family": "slowdown", "config": "x2", "kind": "prediction", "rep": rep,
                         "mode": "per-iteration/trace", "measured_s": 1.0, "predicted_s": 9.0})
        self.plot("whatif", self.write(rows))
        got = self.assert_figure("whatif")
        self.assertEqual([(r["config"], r["kind"], r["reps"]) for r in got],
                         [("cap25", "reconstruction", "3"), ("cap1", "prediction", "3")])
        self.assert_close(got[1]["measured_median_ms"], 320.0, "measured median")
        self.assert_close(got[1]["measured_min_ms"], 300.0, "measured min")
        self.assert_close(got[1]["predicted_median_ms"], 300.0, "predicted median")
        self.assert_close(got[1]["predicted_max_ms"], 330.0, "predicted max")
        self.assertEqual(got[1]["measured_reps_ms"], "300.000;320.000;340.000")
        # Errors per repetition: -10 %, +3.125 %, -11.76 %: the median is -10 %.
        self.assert_close(got[1]["median_error"], -0.1, "median error")

    def test_unknown_family(self):
        path = self.write([{"family": "bucket", "config": "cap1", "kind": "prediction", "rep": 0,
                            "mode": "per-iteration/trace", "measured_s": 1, "predicted_s": 1}])
        result = self.plot("whatif", path, "--family", "world", expect=2)
        self.assertIn("expected rows of family world", result.stderr)


class Calibration(PlotTest):
    def test_fitted_against_told_in_mbit(self):
        path = os.path.join(self.dir, "calibration.csv")
        with open(path, "w") as handle:
            handle.write("rate_mbit,cap_mb,told_bytes_per_s,beta_bytes_per_s,error_pct\n"
                         "100,1,12500000,11500000,-8.0\n400,25,50000000,47000000,-6.0\n")
        self.plot("calibration", path)
        got = self.assert_figure("calibration")
        self.assert_close(got[0]["fitted_mbit_s"], 92.0, "fitted rate")
        self.assert_close(got[1]["told_mbit_s"], 400.0, "told rate")
        self.assert_close(got[1]["error_pct"], -6.0, "error")

    def test_not_a_calibration(self):
        path = os.path.join(self.dir, "calibration.csv")
        with open(path, "w") as handle:
            handle.write("a,b\n1,2\n")
        result = self.plot("calibration", path, expect=2)
        self.assertIn("expected columns rate_mbit", result.stderr)


class Machine(PlotTest):
    def test_two_profiles_side_by_side_each_rung_and_overlap_size_once(self):
        slow = fixtures.write_machine_profile(os.path.join(self.dir, "slow.json"), scale=1.7,
                                              created_utc="2030-01-02T00:00:00Z")
        fast = fixtures.write_machine_profile(os.path.join(self.dir, "fast.json"), version=1)
        self.plot("machine", slow, fast)
        got = self.assert_figure("machine")
        written = fixtures.machine_profile(scale=1.7)
        ladder = [row for row in got if row["profile"] == "slow.json" and row["series"] == "one all-reduce"]
        self.assertEqual([int(row["bytes"]) for row in ladder], [step["bytes"] for step in written["allreduce"]["ladder"]])
        for row, step in zip(ladder, written["allreduce"]["ladder"]):
            self.assert_close(row["median_s"], step["one"]["median_s"], "rung median")
            self.assert_close(row["max_s"], step["one"]["max_s"], "rung max")
            self.assertEqual(row["created_utc"], "2030-01-02T00:00:00Z")
        busy = [row for row in got if row["profile"] == "slow.json" and row["series"].startswith("while")]
        self.assertEqual([float(row["median_s"]) for row in busy], [0.006, 0.008, 0.025])
        # A version 1 profile has a ladder and no overlap section.
        self.assertEqual({row["series"] for row in got if row["profile"] == "fast.json"}, {"one all-reduce"})

    def test_not_a_profile(self):
        path = os.path.join(self.dir, "machine.json")
        with open(path, "w") as handle:
            handle.write('{"ddpsim_machine_profile": 2}')
        result = self.plot("machine", path, expect=2)
        self.assertIn("machine.json: expected its 'allreduce' section, an object, got None", result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)


class ClusterScaling(PlotTest):
    REPLAYS = ("trace,cluster,world_size,allreduce,measured_world_size,measured_iteration_s,predicted_iteration_s\n"
               "job,dgx-a100,8,ring-agg,2,0.2,0.21\njob,dgx-a100,8,tree,2,0.2,0.22\njob,dgx-a100,8,auto,2,0.2,0.21\n")
    CHECK_HEADER = ("system,allreduce,ranks,size_bytes,measured_time_us,predicted_time_us,measured_busbw_gbs,"
                    "predicted_busbw_gbs\n")

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as handle:
            handle.write(text)
        return path

    def test_errors_against_the_published_points(self):
        replays = self.write("replays.csv", self.REPLAYS)
        lines = [self.CHECK_HEADER]
        for model, time_us, busbw in (("ring-agg", 1200.0, 80.0), ("tree", 900.0, 90.0), ("auto", 900.0, 90.0)):
            lines.append(f"A100x24,{model},24,1000000,1000.0,{time_us},100.0,{busbw}\n")
            lines.append(f"A100x24 sweep,{model},24,1000000,,{time_us},,{busbw}\n")
            lines.append(f"A100x24 average,{model},24,,,,80.0,{busbw}\n")
            lines.append(f"H100,{model},16,17179869184,,1,400.0,{busbw * 4}\n")
        check = self.write("check.csv", "".join(lines))
        self.plot("cluster-scaling", replays, "--nccl-tests", check)
        rows = self.assert_figure("cluster-scaling")

        def row(panel, series):
            found = [r for r in rows if r["panel"] == panel and r["series"] == series]
            self.assertEqual(len(found), 1, (panel, series))
            return found[0]
        # Time error near 128 MB: 1200 vs 1000 us = +20 %; average busbw 90 vs 80 = +12.5 %;
        # H100 on 2 nodes: 360 vs 400 GB/s = -10 %.
        self.assert_close(row("a100-error", "ring-agg")["error_pct"], 20.0, "ring time error")
        self.assert_close(row("a100-error", "tree")["error_pct"], -10.0, "tree time error")
        self.assert_close(row("a100-average", "tree")["error_pct"], 12.5, "average busbw error")
        self.assert_close(row("h100", "auto")["error_pct"], -10.0, "H100 error")
        self.assert_close(row("h100", "auto")["x"], 2.0, "nodes")
        self.assert_close(row("scaling", "measured")["y"], 200.0, "measured step, ms")

    def test_not_a_check(self):
        replays = self.write("replays.csv", self.REPLAYS)
        check = self.write("check.csv", "a,b\n1,2\n")
        result = self.plot("cluster-scaling", replays, "--nccl-tests", check, expect=2)
        self.assertIn("expected columns system", result.stderr)


if __name__ == "__main__":
    unittest.main()
