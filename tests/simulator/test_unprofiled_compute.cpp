// --unprofiled-iteration-ms (ReplayRequest::unprofiled_iteration_s): the trace replayed as it
// ran then takes the time given, every what-if is replayed with that compute, and a time the
// trace cannot reach is refused in one line. Note [profiler overhead] in docs/model.md.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/trace/io.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

double median_iteration_s(const PreparedReplay& prepared) {
  const ReplayResult result = replay_isolated_by_class(prepared.model, prepared.options);
  EXPECT_TRUE(result.failure.empty()) << result.failure;
  return summarize_prediction(prepared.model, prepared.options, result).median_iteration_s;
}

ReplayRequest request_for(std::optional<double> unprofiled_s) {
  ReplayRequest request;
  request.bandwidth = 2e9;
  request.latency = 40e-6;
  request.unprofiled_iteration_s = unprofiled_s;
  return request;
}

TEST(UnprofiledCompute, TheReconstructionTakesTheTimeGiven) {
  const trace::Trace measured = testing::make_synthetic_trace(testing::SyntheticRun{});
  const double as_profiled = median_iteration_s(prepare_replay(request_for(std::nullopt), measured));
  for (const double fraction : {0.7, 0.9, 1.0, 1.2}) {
    SCOPED_TRACE(fraction);
    const PreparedReplay prepared = prepare_replay(request_for(fraction * as_profiled), measured);
    EXPECT_NEAR(median_iteration_s(prepared) / (fraction * as_profiled), 1, 0.01);
    // Less time than the trace took is less compute, and the other way round.
    if (fraction < 1) {
      EXPECT_LT(prepared.unprofiled_scale, 1);
    } else if (fraction > 1) {
      EXPECT_GT(prepared.unprofiled_scale, 1);
    } else {
      EXPECT_NEAR(prepared.unprofiled_scale, 1, 0.01);
    }
    EXPECT_EQ(prepared.warnings.size(), 1u);  // the scale is said
  }
}

TEST(UnprofiledCompute, AWhatIfIsReplayedWithTheScaledCompute) {
  const trace::Trace measured = testing::make_synthetic_trace(testing::SyntheticRun{});
  ReplayRequest slower = request_for(std::nullopt);
  slower.skew.slowdowns.push_back({1, 1.5});
  const PreparedReplay plain = prepare_replay(slower, measured);
  const double as_profiled = median_iteration_s(prepare_replay(request_for(std::nullopt), measured));
  slower.unprofiled_iteration_s = 0.8 * as_profiled;
  const PreparedReplay scaled = prepare_replay(slower, measured);
  ASSERT_LT(scaled.unprofiled_scale, 1);
  EXPECT_NEAR(scaled.model.costs_for(0, 1).forward_s, scaled.unprofiled_scale * plain.model.costs_for(0, 1).forward_s,
              1e-12);
  EXPECT_LT(median_iteration_s(scaled), median_iteration_s(plain));
}

// A scale already found is used as it is (a sweep searches it once for all its points).
TEST(UnprofiledCompute, AScaleAlreadyFoundIsNotSearchedAgain) {
  const trace::Trace measured = testing::make_synthetic_trace(testing::SyntheticRun{});
  const double as_profiled = median_iteration_s(prepare_replay(request_for(std::nullopt), measured));
  ReplayRequest request = request_for(0.8 * as_profiled);
  const PreparedReplay searched = prepare_replay(request, measured);
  request.unprofiled_scale = searched.unprofiled_scale;
  const PreparedReplay given = prepare_replay(request, measured);
  EXPECT_EQ(given.unprofiled_scale, searched.unprofiled_scale);
  EXPECT_EQ(given.model.costs_for(0, 1).forward_s, searched.model.costs_for(0, 1).forward_s);
  request.unprofiled_scale = 0.5;  // taken on trust: not the time's own scale
  EXPECT_EQ(prepare_replay(request, measured).unprofiled_scale, 0.5);
}

TEST(UnprofiledCompute, ATimeTheTraceCannotReachIsRefused) {
  const trace::Trace measured = testing::make_synthetic_trace(testing::SyntheticRun{});
  try {
    prepare_replay(request_for(1e-6), measured);
    FAIL() << "1 us was accepted";
  } catch (const RequestError& error) {
    EXPECT_NE(std::string(error.what()).find("--unprofiled-iteration-ms: expected a time the trace's own replay can reach"),
              std::string::npos)
        << error.what();
  }
}

// Writes the synthetic trace to DIR/t and returns its replay's median iteration as it ran
// (--bandwidth 2e9 --latency 4e-5, no unprofiled time).
double synthetic_trace_as_profiled_s(const test_support::TempDir& dir) {
  trace::write_trace(dir / "t", testing::make_synthetic_trace(testing::SyntheticRun{}));
  const Outcome plain = run_cli(dir, "replay " + std::string(dir / "t") + " --bandwidth 2e9 --latency 4e-5 --json " +
                                         std::string(dir / "plain.json"));
  EXPECT_EQ(plain.status, 0) << plain.err;
  return nlohmann::json::parse(slurp(dir / "plain.json"))["predicted"]["median_iteration_s"].get<double>();
}

// The report prints the job's own speed beside the profiled source run, and the JSON keeps it
// with the scale it gave.
TEST(CliUnprofiledCompute, TheReportShowsTheGivenTimeAndTheScale) {
  test_support::TempDir dir;
  const double as_profiled_s = synthetic_trace_as_profiled_s(dir);
  const std::string given_ms = std::to_string(0.8 * as_profiled_s * 1e3);
  const Outcome outcome = run_cli(dir, "replay " + std::string(dir / "t") + " --bandwidth 2e9 --latency 4e-5 " +
                                           "--unprofiled-iteration-ms " + given_ms + " --json " +
                                           std::string(dir / "scaled.json"));
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("unprofiled (given)"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.err.find("--unprofiled-iteration-ms (Note [profiler overhead])"), std::string::npos) << outcome.err;
  const auto json = nlohmann::json::parse(slurp(dir / "scaled.json"));
  EXPECT_NEAR(json["unprofiled_iteration_s"].get<double>(), 0.8 * as_profiled_s, 1e-6 * as_profiled_s);
  EXPECT_LT(json["unprofiled_scale"].get<double>(), 1);
  EXPECT_NEAR(json["predicted"]["median_iteration_s"].get<double>() / (0.8 * as_profiled_s), 1, 0.01);
}

// A what-if on a profiled baseline without the job's own speed says so in its headline (its
// change against the profiled run carries the profiler's overhead); with --unprofiled-iteration-ms,
// or as a reconstruction, or on a trace ddp-train measured, it does not.
TEST(CliUnprofiledCompute, AWhatIfOnAProfileWithoutTheJobsSpeedSaysSoInItsHeadline) {
  test_support::TempDir dir;
  const double as_profiled_s = synthetic_trace_as_profiled_s(dir);
  trace::Trace imported = testing::make_synthetic_trace(testing::SyntheticRun{});
  for (trace::RankTrace& rank : imported.ranks) rank.meta.source = "imported";
  trace::write_trace(dir / "imported", imported);
  const std::string network = " --bandwidth 2e9 --latency 4e-5 --iterations 4";
  const std::string note = "<- the source run was profiled, and profiled steps run slower than the job: give "
                           "--unprofiled-iteration-ms";
  const auto headline = [](const std::string& out) { return out.substr(out.find("iteration time (s)")).substr(0, 400); };
  const Outcome whatif = run_cli(dir, "replay " + std::string(dir / "imported") + network + " --slowdown 1=2 --json " +
                                          std::string(dir / "w.json"));
  ASSERT_EQ(whatif.status, 0) << whatif.err;
  EXPECT_NE(headline(whatif.out).find(note), std::string::npos) << whatif.out;
  EXPECT_NE(nlohmann::json::parse(slurp(dir / "w.json"))["headline_note"].get<std::string>().find("--unprofiled-iteration-ms"),
            std::string::npos);
  const Outcome given = run_cli(dir, "replay " + std::string(dir / "imported") + network + " --slowdown 1=2 " +
                                         "--unprofiled-iteration-ms " + std::to_string(0.8 * as_profiled_s * 1e3));
  ASSERT_EQ(given.status, 0) << given.err;
  EXPECT_EQ(given.out.find(note), std::string::npos) << given.out;
  const Outcome reconstruction = run_cli(dir, "replay " + std::string(dir / "imported") + network);
  ASSERT_EQ(reconstruction.status, 0) << reconstruction.err;
  EXPECT_EQ(reconstruction.out.find(note), std::string::npos) << reconstruction.out;
  const Outcome measured = run_cli(dir, "replay " + std::string(dir / "t") + network + " --slowdown 1=2");
  ASSERT_EQ(measured.status, 0) << measured.err;
  EXPECT_EQ(measured.out.find(note), std::string::npos) << measured.out;
}

// The job's speed was measured on the network the trace ran on: a --cluster preset, where the
// what-if runs, does not change the scale that speed gives (the trace's own fit times it).
TEST(CliUnprofiledCompute, AClusterPresetDoesNotChangeTheScale) {
  test_support::TempDir dir;
  trace::write_trace(dir / "t", testing::make_synthetic_trace(testing::SyntheticRun{}));
  const auto scale = [&](const std::string& extra) {
    const Outcome outcome = run_cli(dir, "replay " + std::string(dir / "t") + " --iterations 4 " + extra +
                                             " --json " + std::string(dir / "s.json"));
    EXPECT_EQ(outcome.status, 0) << outcome.err;
    return nlohmann::json::parse(slurp(dir / "s.json"))["unprofiled_scale"].get<double>();
  };
  const double plain = synthetic_trace_as_profiled_s(dir);  // (its own --bandwidth; the scale below fits the trace)
  const std::string given = "--unprofiled-iteration-ms " + std::to_string(0.8 * plain * 1e3);
  const double own = scale(given);
  EXPECT_LT(own, 1);
  EXPECT_DOUBLE_EQ(scale(given + " --cluster dgx-a100 --world-size 64"), own);
}

// advise takes it too: its replays run at the job's own speed.
TEST(CliUnprofiledCompute, AdviseReplaysAtTheGivenSpeed) {
  test_support::TempDir dir;
  trace::write_trace(dir / "t", testing::make_synthetic_trace(testing::SyntheticRun{}));
  const auto replayed_mean_s = [&](const std::string& extra) {
    const Outcome outcome = run_cli(dir, "advise " + std::string(dir / "t") + " --runs 11 --bucket-caps 25 " + extra +
                                             " --json " + std::string(dir / "a.json"));
    EXPECT_EQ(outcome.status, 0) << outcome.err;
    return nlohmann::json::parse(slurp(dir / "a.json"))["stragglers"]["replayed_mean_iteration_s"].get<double>();
  };
  const double as_profiled_s = replayed_mean_s("");
  const double scaled_s = replayed_mean_s("--unprofiled-iteration-ms " + std::to_string(0.7 * as_profiled_s * 1e3));
  EXPECT_NEAR(scaled_s / as_profiled_s, 0.7, 0.05);
}

// advise on a profiler import lists the job's speed among what the import lacks until it is given.
TEST(CliUnprofiledCompute, AdviseOnAProfileWithoutTheJobsSpeedListsIt) {
  test_support::TempDir dir;
  trace::Trace imported = testing::make_synthetic_trace(testing::SyntheticRun{});
  for (trace::RankTrace& rank : imported.ranks) rank.meta.source = "imported";
  trace::write_trace(dir / "imported", imported);
  const std::string lack = "profiler import: no --unprofiled-iteration-ms (the job's median step without the profiler)";
  const std::string advise = "advise " + std::string(dir / "imported") + " --runs 11 --bucket-caps 25 --json " +
                             std::string(dir / "a.json");
  const Outcome without = run_cli(dir, advise);
  ASSERT_EQ(without.status, 0) << without.err;
  EXPECT_NE(without.out.find(lack), std::string::npos) << without.out;
  const double as_profiled_s =
      nlohmann::json::parse(slurp(dir / "a.json"))["stragglers"]["replayed_mean_iteration_s"].get<double>();
  const Outcome given = run_cli(dir, advise + " --unprofiled-iteration-ms " + std::to_string(0.9 * as_profiled_s * 1e3));
  ASSERT_EQ(given.status, 0) << given.err;
  EXPECT_NE(given.out.find("profiler import: no evaluation"), std::string::npos) << given.out;
  EXPECT_EQ(given.out.find(lack), std::string::npos) << given.out;
}

// A sweep's point at the trace's own layout takes the given time, as replay's reconstruction
// does; an unreachable time is refused once, before any point.
TEST(CliUnprofiledCompute, SweepPointsRunAtTheGivenSpeed) {
  test_support::TempDir dir;
  const double given_s = 0.8 * synthetic_trace_as_profiled_s(dir);
  const std::string sweep = "sweep " + std::string(dir / "t") + " --bandwidth 2e9 --latency 4e-5 --bucket-caps 0,1 ";
  const Outcome outcome = run_cli(dir, sweep + "--unprofiled-iteration-ms " + std::to_string(given_s * 1e3) +
                                           " --out " + std::string(dir / "s.csv"));
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  std::istringstream rows(slurp(dir / "s.csv"));
  std::string line;
  std::getline(rows, line);  // header: bucket_cap_mb,slowdown,world_size,buckets,p50_iteration_s,...
  bool own_layout = false;
  while (std::getline(rows, line)) {
    if (line.rfind("0,", 0) != 0) continue;
    own_layout = true;
    std::istringstream fields(line);
    std::string field;
    for (int column = 0; column < 5; ++column) std::getline(fields, field, ',');
    EXPECT_NEAR(std::stod(field) / given_s, 1, 0.01) << line;
  }
  EXPECT_TRUE(own_layout) << slurp(dir / "s.csv");
  const Outcome refused = run_cli(dir, sweep + "--unprofiled-iteration-ms 0.000001 --out " + std::string(dir / "r.csv"));
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_EQ(count_lines(refused.err), 1) << refused.err;
}

TEST(CliUnprofiledCompute, BadValuesAreOneLine) {
  test_support::TempDir dir;
  trace::write_trace(dir / "t", testing::make_synthetic_trace(testing::SyntheticRun{}));
  for (const std::string value : {"0", "-3", "x", "0.000001"}) {
    SCOPED_TRACE(value);
    const Outcome outcome = run_cli(dir, "replay " + std::string(dir / "t") + " --unprofiled-iteration-ms " + value);
    EXPECT_EQ(outcome.status, 2) << outcome.err;
    EXPECT_EQ(count_lines(outcome.err), 1) << outcome.err;
    EXPECT_NE(outcome.err.find("--unprofiled-iteration-ms"), std::string::npos) << outcome.err;
  }
}

}  // namespace
}  // namespace ddpsim::sim
