// Grid expansion, point names, interleaved order, resume bookkeeping and command lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "commands.hpp"
#include "grid.hpp"
#include "names.hpp"
#include "results.hpp"
#include "runner.hpp"
#include "trace_summary.hpp"

namespace ddpsim::experiment {
namespace {

TEST(ExperimentNames, NumbersReadBackExactlyWithoutNeedlessExponents) {
  EXPECT_EQ(format_number(30), "30");
  EXPECT_EQ(format_number(0.25), "0.25");
  EXPECT_EQ(format_number(1e6), "1000000");
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_EQ(format_number(1e-7), "1e-07");
  EXPECT_EQ(std::stod(format_number(2.0 / 3.0)), 2.0 / 3.0);
  EXPECT_EQ(sanitize_for_path("1=500@5 x"), "1-500at5_x");
}

TEST(ExperimentGrid, ExpandsTheCartesianProductWithShortUniqueIds) {
  Grid grid;
  grid.world_sizes = {2, 3};
  grid.bucket_cap_mb = {0.25, 25};
  grid.slowdown = {{}, {"1=2.0"}};
  grid.timeout_s = {5};
  const auto points = expand_grid(grid);
  ASSERT_EQ(points.size(), 2u * 2u * 2u);
  // World size outermost, the skew axis innermost of those that vary.
  EXPECT_EQ(points[0].id, "w2_cap0.25_slownone");
  EXPECT_EQ(points[1].id, "w2_cap0.25_slow1-2.0");
  EXPECT_EQ(points[2].id, "w2_cap25_slownone");
  EXPECT_EQ(points[7].id, "w3_cap25_slow1-2.0");
  EXPECT_EQ(points[7].world_size, 3);
  EXPECT_DOUBLE_EQ(points[7].bucket_cap_mb, 25);
  EXPECT_EQ(points[7].slowdown, (SkewSetting{"1=2.0"}));
  EXPECT_DOUBLE_EQ(points[7].timeout_s.value(), 5);  // single-valued: set but not in the id
  std::vector<std::string> ids;
  for (const auto& p : points) ids.push_back(p.id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
}

TEST(ExperimentGrid, SinglePointIsBaseAndRepeatedValuesStayDistinct) {
  EXPECT_EQ(expand_grid(Grid{}).at(0).id, "base");
  Grid grid;
  grid.delay = {{"1=500@5"}, {"1=500@5"}};
  const auto points = expand_grid(grid);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].id, "delay1-500at5");
  EXPECT_EQ(points[1].id, "delay1-500at5_2");
}

TEST(ExperimentGrid, InterleavesRepetitionsRotatingTheOrder) {
  // Repetition r starts at point r (A B C, B C A, C A B, A B C): no point always runs first.
  const auto schedule = interleaved_schedule(3, 4);
  const std::vector<RunKey> expected = {{0, 0}, {1, 0}, {2, 0}, {1, 1}, {2, 1}, {0, 1},
                                        {2, 2}, {0, 2}, {1, 2}, {0, 3}, {1, 3}, {2, 3}};
  EXPECT_EQ(schedule, expected);
}

TEST(ExperimentGrid, PendingRunsSkipFinishedOnesInOrder) {
  Grid grid;
  grid.bucket_cap_mb = {1, 5};
  const auto points = expand_grid(grid);
  const auto schedule = interleaved_schedule(points.size(), 2);
  const auto pending = pending_runs(schedule, points, {{"cap1", 0}, {"cap5", 1}});
  const std::vector<RunKey> expected = {{1, 0}, {0, 1}};
  EXPECT_EQ(pending, expected);
  EXPECT_EQ(run_name(points[1], 1), "cap5-rep1");
}

TEST(ExperimentResults, CsvQuotingRoundTrips) {
  const std::string tricky = "rank 1: \"Timed out\", waiting";
  const auto fields = split_csv_line("a," + csv_field(tricky) + ",,z");
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[1], tricky);
  EXPECT_EQ(fields[2], "");
  EXPECT_THROW(split_csv_line("a,\"open"), std::runtime_error);
}

TEST(ExperimentResults, MeasuredRunsWithFailedPredictionsArePredictedAgain) {
  std::vector<Row> rows = {
      {{"point", "a"}, {"rep", "0"}, {"variant", ""}, {"status", "prediction_error"},
       {"measured_iter_s", "0.5"}, {"predicted_iter_s", ""}, {"message", "replay broke"}},
      {{"point", "b"}, {"rep", "0"}, {"variant", ""}, {"status", "ok"}, {"measured_iter_s", "0.4"}},
      {{"point", "b"}, {"rep", "0"}, {"variant", "w8"}, {"status", "prediction_error"}},
      {{"point", "c"}, {"rep", "0"}, {"variant", ""}, {"status", "error"}},
  };
  const auto again = runs_to_predict_again(rows, "summary.csv");
  ASSERT_EQ(again.size(), 2u);
  const ResultRow& a = again.at({"a", 0});
  EXPECT_EQ(a.status, "ok");
  EXPECT_EQ(a.measured.iter_s, 0.5);
  EXPECT_EQ(a.message, "");
  EXPECT_FALSE(a.predicted.iter_s);
  EXPECT_EQ(to_row(a).at("measured_iter_s"), "0.5");
  EXPECT_EQ(to_row(a).at("predicted_iter_s"), "");
  EXPECT_EQ(again.at({"b", 0}).measured.iter_s, 0.4);
  EXPECT_TRUE(finished_runs(rows).empty());
}

// A typed row written as summary.csv text and read back: every column written (no column
// forgotten by to_row), numbers to 6 digits, empty optionals empty, a failure with a comma and
// quotes kept whole, and what resume keeps read back to the same numbers.
TEST(ExperimentResults, TypedRowWritesEveryColumnAndResumeReadsItBack) {
  ResultRow r;
  r.point = "cap1";
  r.rep = 2;
  r.status = "ok";
  r.kind = "reconstruction";
  r.config = {{"experiment", "e"}, {"world_size", "2"}, {"delay", "1=500@5"}};
  r.measured.iter_s = 0.1234567891;
  r.measured.iterations = 9;
  r.measured.failed = true;
  r.measured.failure = "rank 1: \"Timed out\", waiting";
  r.predicted.iter_s = 0.1;
  r.predicted.interval = std::make_pair(0.09, 0.11);
  r.predicted.run_to_run_interval = std::make_pair(0.08, 0.125);
  r.comparison.error_pct = -19.0;
  r.comparison.inside = false;
  r.comparison.inside_run_to_run = true;
  r.job_exit = 0;
  const Row row = to_row(r);
  std::vector<std::string> written;
  for (const auto& [column, text] : row) written.push_back(column);
  std::vector<std::string> expected = summary_columns();
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(written, expected);  // to_row sets every column, and only those
  EXPECT_EQ(row.at("measured_iter_s"), "0.123457");
  EXPECT_EQ(row.at("predicted_lo_s"), "0.09");
  EXPECT_EQ(row.at("inside"), "0");
  EXPECT_EQ(row.at("run_to_run_hi_s"), "0.125");
  EXPECT_EQ(row.at("inside_run_to_run"), "1");
  EXPECT_EQ(row.at("measured_failed"), "1");
  EXPECT_EQ(row.at("ks_distance"), "");
  EXPECT_EQ(row.at("job_wall_s"), "");
  EXPECT_EQ(row.at("job_exit"), "0");

  const std::string path = ::testing::TempDir() + "ddpsim-typed-row-summary.csv";
  std::remove(path.c_str());
  append_rows(path, {row});
  const auto rows = read_summary(path);
  std::remove(path.c_str());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], row);
  const ResultRow back = measured_from_row(rows[0], path);
  EXPECT_EQ(back.point, "cap1");
  EXPECT_EQ(back.rep, 2);
  EXPECT_EQ(back.measured.iter_s, 0.123457);
  EXPECT_EQ(back.measured.failure, r.measured.failure);
  EXPECT_EQ(back.config.at("delay"), "1=500@5");
  EXPECT_FALSE(back.job_wall_s);
  EXPECT_FALSE(back.predicted.iter_s);  // predictions are redone, not read back
  Row broken = row;
  broken["measured_iter_s"] = "0.1s";
  try {
    measured_from_row(broken, "r/summary.csv");
    ADD_FAILURE() << "expected a throw";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "r/summary.csv: column 'measured_iter_s': expected a number, got '0.1s'");
  }
}

// ddpsim-plot plots skew on an axis from max_slowdown and max_delay_ms: the trace library's
// parser reads them from the flag values, for new rows and for an older summary's rows alike.
TEST(ExperimentResults, SkewMaximaComeFromTheSkewParser) {
  ExperimentSpec spec;
  Point point;
  point.slowdown = {"1=2.5", "0=1.5"};
  point.delay = {"all=20", "1=500@5"};
  Row config = config_row(spec, point);
  EXPECT_EQ(config.at("max_slowdown"), "2.5");
  EXPECT_EQ(config.at("max_delay_ms"), "500");
  point.slowdown = {};
  point.delay = {"1=0.5x"};  // refused by the parser (and by ddp-train): no number
  config = config_row(spec, point);
  EXPECT_EQ(config.at("max_slowdown"), "");
  EXPECT_EQ(config.at("max_delay_ms"), "");

  const std::string path = ::testing::TempDir() + "ddpsim-old-summary.csv";
  {
    std::ofstream old(path);  // the header before the skew maxima
    old << "experiment,point,rep,variant,slowdown,delay,status\n"
        << "e,s2,0,,1=2,,ok\n"
        << "e,d,0,,,0=100 1=300@4,ok\n";
  }
  const auto rows = read_summary(path);
  std::remove(path.c_str());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("max_slowdown"), "2");
  EXPECT_EQ(rows[0].at("max_delay_ms"), "");
  EXPECT_EQ(rows[1].at("max_slowdown"), "");
  EXPECT_EQ(rows[1].at("max_delay_ms"), "300");
}

TEST(ExperimentResults, RunsWithAnErrorRowAreNotFinished) {
  std::vector<Row> rows = {
      {{"point", "cap1"}, {"rep", "0"}, {"variant", ""}, {"status", "ok"}},
      {{"point", "cap1"}, {"rep", "0"}, {"variant", "w64"}, {"status", "ok"}},
      {{"point", "cap5"}, {"rep", "0"}, {"variant", ""}, {"status", "ok"}},
      {{"point", "cap5"}, {"rep", "0"}, {"variant", "w64"}, {"status", "error"}},
  };
  const auto finished = finished_runs(rows);
  EXPECT_EQ(finished, (std::set<std::pair<std::string, int>>{{"cap1", 0}}));
  EXPECT_EQ(rows_of_finished_runs(rows).size(), 2u);
}

TEST(ExperimentCommands, TrainCommandCarriesThePoint) {
  ExperimentSpec spec;
  spec.workload.model = "mlp";
  spec.workload.iterations = 9;
  spec.workload.args = {"--hidden", "64"};
  Point point;
  point.world_size = 3;
  point.bucket_cap_mb = 0.25;
  point.delay = {"1=500@5"};
  point.timeout_s = 2.5;
  const auto command = train_command(spec, point, "/b", "/r/traces/x-rep0");
  const std::string line = shell_quote(command);
  EXPECT_EQ(line.rfind("/b/ddp-launch --nproc-per-node 3 --master-port 0 -- /b/ddp-train --model mlp "
                       "--iterations 9 ", 0), 0u) << line;
  for (const char* part : {" --bucket-cap-mb 0.25 ", " --timeout 2.5 ", " --delay 1=500@5 ",
                           " --hidden 64 ", " --trace-dir /r/traces/x-rep0 --quiet"})
    EXPECT_NE(line.find(part), std::string::npos) << part << " missing in " << line;
  EXPECT_EQ(line.find("--slowdown"), std::string::npos);
  EXPECT_EQ(line.find("--skew-seed"), std::string::npos);  // no random stalls: nothing to draw
}

// Random stalls: each repetition draws its own (--skew-seed seed + rep), the model's --seed kept.
TEST(ExperimentCommands, RandomStallsGetTheRepetitionsOwnDraws) {
  ExperimentSpec spec;
  spec.workload.seed = 5;
  Point point;
  point.world_size = 2;
  point.delay_dist = {"1=exp:100"};
  const std::string rep0 = shell_quote(train_command(spec, point, "/b", "/t", "", 0));
  const std::string rep3 = shell_quote(train_command(spec, point, "/b", "/t", "", 3));
  EXPECT_NE(rep0.find(" --delay-dist 1=exp:100 --skew-seed 5 "), std::string::npos) << rep0;
  EXPECT_NE(rep3.find(" --delay-dist 1=exp:100 --skew-seed 8 "), std::string::npos) << rep3;
  EXPECT_NE(rep3.find(" --seed 5 "), std::string::npos) << rep3;
}

TEST(ExperimentCommands, ReplayAppendsWhatIfAndPlaceholders) {
  ExperimentSpec spec;
  spec.predict.replay_args = {"--calibration={calibration}"};
  WhatIf what_if{"w64", {"--world-size", "64"}, 64, {}};
  const auto command = replay_command(spec, Point{}, &what_if, "/b", "/t", "/c.json", "/o");
  EXPECT_EQ(command, (Command{"/b/ddp-sim", "replay", "/t", "--out", "/o",
                              "--calibration=/c.json", "--world-size", "64"}));
  EXPECT_EQ(shell_quote({"a b", "it's", "plain"}), "'a b' 'it'\\''s' plain");
}

TEST(ExperimentCommands, ReplayGetsThePointsTimeoutUnlessAWhatIfSetsOne) {
  ExperimentSpec spec;
  Point point;
  point.timeout_s = 2;
  EXPECT_EQ(replay_command(spec, point, nullptr, "/b", "/t", "/c", "/o"),
            (Command{"/b/ddp-sim", "replay", "/t", "--out", "/o", "--timeout", "2"}));
  WhatIf world{"w8", {"--world-size", "8"}, 8, {}};
  EXPECT_EQ(replay_command(spec, point, &world, "/b", "/t", "/c", "/o"),
            (Command{"/b/ddp-sim", "replay", "/t", "--out", "/o", "--timeout", "2",
                     "--world-size", "8"}));
  WhatIf shorter{"timeout0.5", {"--timeout", "0.5"}, {}, 0.5};
  EXPECT_EQ(replay_command(spec, point, &shorter, "/b", "/t", "/c", "/o"),
            (Command{"/b/ddp-sim", "replay", "/t", "--out", "/o", "--timeout", "0.5"}));
  EXPECT_EQ(replay_command(spec, Point{}, nullptr, "/b", "/t", "/c", "/o").size(), 5u);
}

// Cross-configuration predictions (issue #16): every difference between a point and the
// baseline becomes the replay flag that asks ddp-sim for it; nothing else is added.
TEST(ExperimentCommands, CrossPredictionFlagsComeFromThePointsDifferences) {
  ExperimentSpec spec;
  spec.predict.world_size_args = {"--platform", "two-level", "--gpus-per-node", "2"};
  Point base;
  base.id = "cap25";
  base.world_size = 2;
  base.bucket_cap_mb = 25;
  base.first_bucket_cap_mb = 25;
  base.timeout_s = 30;
  base.hosts = 2;

  EXPECT_TRUE(cross_prediction(spec, base, base).args.empty());  // the baseline itself

  Point caps = base;
  caps.bucket_cap_mb = 0.25;
  caps.first_bucket_cap_mb = 0.25;
  auto what_if = cross_prediction(spec, base, caps);
  EXPECT_EQ(what_if.name, "from-cap25");
  EXPECT_EQ(what_if.args, (std::vector<std::string>{"--bucket-cap-mb", "0.25", "--first-bucket-cap-mb", "0.25"}));
  EXPECT_FALSE(what_if.world_size.has_value());
  EXPECT_FALSE(what_if.timeout_s.has_value());

  Point skewed = base;
  skewed.slowdown = {"1=2", "0=1.5"};
  skewed.delay = {"1=500@5"};
  skewed.delay_dist = {"1=exp:20"};
  EXPECT_EQ(cross_prediction(spec, base, skewed).args,
            (std::vector<std::string>{"--slowdown", "1=2", "--slowdown", "0=1.5", "--delay", "1=500@5",
                                      "--delay-dist", "1=exp:20"}));

  Point bigger = base;
  bigger.world_size = 4;
  what_if = cross_prediction(spec, base, bigger);
  EXPECT_EQ(what_if.args, (std::vector<std::string>{"--world-size", "4", "--platform", "two-level",
                                                    "--gpus-per-node", "2"}));
  EXPECT_EQ(what_if.world_size, 4);

  Point spread = base;  // same ranks over fewer hosts: the layout flags only
  spread.hosts = 1;
  EXPECT_EQ(cross_prediction(spec, base, spread).args, spec.predict.world_size_args);

  Point later = base;
  later.timeout_s = 2;
  what_if = cross_prediction(spec, base, later);
  EXPECT_EQ(what_if.args, (std::vector<std::string>{"--timeout", "2"}));
  EXPECT_EQ(what_if.timeout_s, 2.0);
  // The replay of the baseline's trace: the what-if's timeout, not the baseline's.
  EXPECT_EQ(replay_command(spec, base, &what_if, "/b", "/t", "/c", "/o", "/r.json"),
            (Command{"/b/ddp-sim", "replay", "/t", "--out", "/o", "--json", "/r.json", "--timeout", "2"}));
  // Same timeout as the baseline: the replay keeps the baseline's.
  EXPECT_EQ(replay_command(spec, base, &(what_if = cross_prediction(spec, base, caps)), "/b", "/t",
                           "/c", "/o"),
            (Command{"/b/ddp-sim", "replay", "/t", "--out", "/o", "--timeout", "30",
                     "--bucket-cap-mb", "0.25", "--first-bucket-cap-mb", "0.25"}));
}

TEST(ExperimentGrid, BaselineNamesOneUnskewedPoint) {
  Grid grid;
  grid.bucket_cap_mb = {1, 25};
  grid.slowdown = {{"1=2"}, {}};
  const auto points = expand_grid(grid);
  Baseline baseline;
  EXPECT_FALSE(baseline_point(points, baseline).has_value());
  baseline.enabled = true;
  baseline.bucket_cap_mb = 25;
  const auto index = baseline_point(points, baseline);
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(points[*index].id, "cap25_slownone");
}

TEST(ExperimentGrid, FirstBucketCapFollowingTheCapIsNotAnAxis) {
  Grid grid;
  grid.bucket_cap_mb = {25, 0.25};
  grid.first_bucket_cap_follows = true;
  const auto points = expand_grid(grid);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].id, "cap0.25");
  EXPECT_EQ(points[1].first_bucket_cap_mb, 0.25);
  ExperimentSpec spec;
  EXPECT_EQ(cross_prediction(spec, points[0], points[1]).args,
            (std::vector<std::string>{"--bucket-cap-mb", "0.25", "--first-bucket-cap-mb", "0.25"}));
  const std::string line = shell_quote(train_command(spec, points[1], "/b", "/t"));
  EXPECT_NE(line.find(" --bucket-cap-mb 0.25 --first-bucket-cap-mb 0.25 "), std::string::npos) << line;
}

TEST(ExperimentCommands, TestbedJobsRunThroughTestbedSh) {
  ExperimentSpec spec;
  spec.launch.testbed_rate = "200mbit";
  spec.limits.job_timeout_s = 600;
  spec.workload.args = {"--width", "256"};
  Point point;
  point.world_size = 4;
  point.hosts = 2;
  point.delay_dist = {"1=exp:100"};
  const std::string line = shell_quote(train_command(spec, point, "/b", "/r/t", "/repo/scripts/testbed.sh"));
  EXPECT_EQ(line.rfind("/repo/scripts/testbed.sh --quiet --hosts 2 --ranks-per-host 2 --rate 200mbit "
                       "--timeout 600 -- /b/ddp-launch --nnodes '{hosts}' --node-rank '{host}' "
                       "--nproc-per-node '{ranks}' --master-addr '{master}' --master-port 29500 -- "
                       "/b/ddp-train --model mlp ", 0), 0u) << line;
  EXPECT_NE(line.find(" --delay-dist 1=exp:100 --skew-seed 1 --width 256 --trace-dir /r/t --quiet"), std::string::npos) << line;
}

TEST(ExperimentDistributions, KsAndQuantileErrors) {
  // Identical samples: nothing apart. Disjoint samples: KS 1.
  EXPECT_DOUBLE_EQ(compare_distributions({1, 2, 3}, {3, 2, 1}).ks, 0.0);
  EXPECT_DOUBLE_EQ(compare_distributions({1, 2, 3}, {4, 5, 6}).ks, 1.0);
  // Shifted by one: at every step the CDFs are 1/4 apart.
  const auto d = compare_distributions({1, 2, 3, 4}, {2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(d.ks, 0.25);
  EXPECT_DOUBLE_EQ(d.p50_error_pct, 100.0 * (3.5 - 2.5) / 2.5);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.9), 3.7);  // numpy's linear interpolation
  EXPECT_DOUBLE_EQ(d.p90_error_pct, 100.0 * (4.7 - 3.7) / 3.7);
}

TEST(ExperimentDistributions, SummaryKeepsIterationTimesFromOneAndReplayIntervals) {
  const auto summary = parse_trace_summary(
      R"({"world_size": 2, "median_iteration_s": 0.2, "iterations": [
          {"iteration": 0, "time_s": 9.0}, {"iteration": 1, "time_s": 0.2}, {"iteration": 2, "time_s": 0.3}]})",
      "s.json");
  EXPECT_EQ(summary.iteration_times_s, (std::vector<double>{0.2, 0.3}));
  const char* predicted = R"("predicted": {"world_size": 4, "median_iteration_s": 0.25,
      "iterations": [{"iteration": 1, "time_s": 0.25}], "failures": ["rank 1: hung"]})";
  const auto report = parse_replay_report(
      std::string("{") + predicted + R"(, "interval": {"median_iteration_s": [0.1, 0.3], "level": 0.9}})", "r.json");
  EXPECT_EQ(report.predicted.world_size, 4);
  EXPECT_DOUBLE_EQ(report.predicted.median_iteration_s, 0.25);
  EXPECT_EQ(report.predicted.iteration_times_s, (std::vector<double>{0.25}));
  EXPECT_EQ(report.predicted.failures, (std::vector<std::string>{"rank 1: hung"}));
  ASSERT_TRUE(report.interval.has_value());
  EXPECT_DOUBLE_EQ(report.interval->first, 0.1);
  EXPECT_DOUBLE_EQ(report.interval->second, 0.3);
  EXPECT_FALSE(parse_replay_report(std::string("{") + predicted + "}", "r.json").interval.has_value());
  EXPECT_THROW(parse_replay_report(std::string("{") + predicted + R"(, "interval": {"median_iteration_s": 3}})", "r.json"),
               std::runtime_error);
  // Without the predicted summary, or with a broken one, the report is refused naming the field.
  EXPECT_THROW(parse_replay_report(R"({"interval": {"median_iteration_s": [0.1, 0.3]}})", "r.json"), std::runtime_error);
  try {
    parse_replay_report(R"({"predicted": {"world_size": 2}})", "r.json");
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "r.json: expected a number field 'predicted.median_iteration_s'");
  }
}

}  // namespace
}  // namespace ddpsim::experiment
