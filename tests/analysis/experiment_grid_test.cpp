// Grid expansion, point names, interleaved order, resume bookkeeping and command lines.
#include <gtest/gtest.h>

#include <algorithm>

#include "commands.hpp"
#include "grid.hpp"
#include "names.hpp"
#include "results.hpp"

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

TEST(ExperimentGrid, InterleavesRepetitions) {
  const auto schedule = interleaved_schedule(3, 2);
  const std::vector<RunKey> expected = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}};
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
  const auto again = runs_to_predict_again(rows);
  ASSERT_EQ(again.size(), 2u);
  const Row& a = again.at({"a", 0});
  EXPECT_EQ(a.at("status"), "ok");
  EXPECT_EQ(a.at("measured_iter_s"), "0.5");
  EXPECT_EQ(a.count("message"), 0u);
  EXPECT_EQ(a.count("predicted_iter_s"), 0u);
  EXPECT_EQ(again.at({"b", 0}).at("measured_iter_s"), "0.4");
  EXPECT_TRUE(finished_runs(rows).empty());
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

}  // namespace
}  // namespace ddpsim::experiment
