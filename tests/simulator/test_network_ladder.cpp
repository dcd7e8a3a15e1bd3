// A machine profile's ladder as the replay's network (network_ladder.hpp): its times between
// and beyond the rungs; a ladder on its own line changes nothing; a ladder off it times every
// all-reduce the replay plays, at the profile's world size and at others through the bytes each
// ring link carries; and --machine hands it to the replay only where the network is the profile's
// and the line through the ladder misses it beyond kMaxTrustedRelativeRms.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <nlohmann/json.hpp>
#include <vector>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/machine_settings.hpp"
#include "ddpsim/sim/network_ladder.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "cli_runner.hpp"
#include "ddpsim/trace/io.hpp"
#include "minimal_workload.hpp"
#include "synthetic_profile.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

using testing::allreduce_durations_s;
using testing::communication_only_workload;
using testing::star_options;

constexpr double kAlpha = 50e-6;
constexpr double kBeta = 1e9;
constexpr std::int64_t kMiB = 1 << 20;

// The ring's line at `world` ranks: t = a + b·S.
double line_s(int world, double bytes) { return allreduce_formula_s(AllreduceAlgorithm::Ring, world, bytes, kAlpha, kBeta); }
double intercept_s(int world) { return line_s(world, 0); }
double slope_s_per_byte(int world) { return line_s(world, 1) - line_s(world, 0); }

// Rungs of 1, 4, 16 and 64 MiB at 2 ranks, each the line's time × `bend` (1: on the line).
NetworkLadder ladder_at_two(const std::vector<double>& bend) {
  std::vector<LadderRung> rungs;
  std::int64_t bytes = kMiB;
  for (const double factor : bend) {
    rungs.push_back({bytes, factor * line_s(2, static_cast<double>(bytes))});
    bytes *= 4;
  }
  return NetworkLadder(2, rungs, intercept_s(2), slope_s_per_byte(2));
}

TEST(NetworkLadder, TimesAreTheRungsLinearBetweenFlatBelowAndExtendedBeyond) {
  const NetworkLadder ladder(2, {{1000, 1.0}, {3000, 2.0}, {5000, 5.0}}, 0.5, 1e-3);
  EXPECT_DOUBLE_EQ(ladder.time_s(1000), 1.0);
  EXPECT_DOUBLE_EQ(ladder.time_s(3000), 2.0);
  EXPECT_DOUBLE_EQ(ladder.time_s(2000), 1.5);
  EXPECT_DOUBLE_EQ(ladder.time_s(4000), 3.5);
  EXPECT_DOUBLE_EQ(ladder.time_s(10), 1.0);
  EXPECT_DOUBLE_EQ(ladder.time_s(7000), 8.0);  // the last segment's 1.5e-3 s a byte
  EXPECT_EQ(ladder.rungs(), 3u);
}

TEST(NetworkLadder, ARungSlowerThanALargerOneTakesTheLargerOnesTime) {
  // A first rung that paid for warm-up: 4 KiB slower than 16 KiB.
  const NetworkLadder ladder(2, {{4096, 1.7e-3}, {16384, 0.3e-3}, {65536, 0.4e-3}}, 0.25e-3, 2e-9);
  EXPECT_DOUBLE_EQ(ladder.time_s(4096), 0.3e-3);
  EXPECT_DOUBLE_EQ(ladder.time_s(10000), 0.3e-3);
  EXPECT_DOUBLE_EQ(ladder.time_s(65536), 0.4e-3);
}

TEST(NetworkLadder, ALadderOnItsLineCarriesTheBytesAsTheyAre) {
  const NetworkLadder on_line = ladder_at_two({1, 1, 1, 1});
  for (const int world : {2, 3, 4, 16}) {
    for (const std::int64_t bytes : {kMiB, 3 * kMiB, 20 * kMiB, 40 * kMiB}) {
      EXPECT_NEAR(on_line.carried_bytes(bytes, world), static_cast<double>(bytes), 1e-6 * static_cast<double>(bytes))
          << world << " ranks, " << bytes << " bytes";
    }
  }
  // Nothing to carry on one rank, or with no ladder.
  EXPECT_EQ(ladder_at_two({1.2, 0.9, 1.1, 1}).carried_bytes(kMiB, 1), static_cast<double>(kMiB));
  EXPECT_EQ(NetworkLadder().carried_bytes(kMiB, 4), static_cast<double>(kMiB));
}

// The replay's all-reduce of `bytes` alone on a star of `world` ranks, on the line's α and β
// with `ladder` (empty: the line alone).
double replayed_s(int world, std::int64_t bytes, const NetworkLadder& ladder, AllreduceAlgorithm algorithm,
                  int in_flight = 1) {
  ReplayOptions options = star_options(algorithm, kAlpha, kBeta);
  options.network_ladder = ladder;
  options.allreduces_in_flight = in_flight;
  const ReplayResult result = replay_isolated(communication_only_workload(world, bytes), options);
  EXPECT_TRUE(result.failure.empty()) << result.failure;
  const std::vector<double> durations = allreduce_durations_s(result);
  return durations.empty() ? 0 : durations.front();
}

TEST(NetworkLadder, TheReplayTakesTheLaddersTimeAtEverySize) {
  // On loopback Gloo the line misses single rungs by 15-20 %, both ways.
  const NetworkLadder ladder = ladder_at_two({1.2, 0.85, 1.15, 1.0});
  for (const std::int64_t bytes : {kMiB, 2 * kMiB, 10 * kMiB, 16 * kMiB, 100 * kMiB}) {
    const double expected = ladder.time_s(bytes);
    for (const AllreduceAlgorithm algorithm : {AllreduceAlgorithm::RingAggregated, AllreduceAlgorithm::Analytic}) {
      EXPECT_NEAR(replayed_s(2, bytes, ladder, algorithm), expected, 1e-6 * expected)
          << to_string(algorithm) << ", " << bytes << " bytes";
    }
    // Two lanes time a transfer by its closed form, paced (paced_transfers.hpp).
    EXPECT_NEAR(replayed_s(2, bytes, ladder, AllreduceAlgorithm::RingAggregated, 2), expected, 1e-6 * expected)
        << "two lanes, " << bytes << " bytes";
  }
  // The same replay without the ladder is the line's, which the ladder moved.
  EXPECT_NEAR(replayed_s(2, kMiB, NetworkLadder(), AllreduceAlgorithm::RingAggregated), line_s(2, kMiB), 1e-6);
  EXPECT_GT(ladder.time_s(kMiB), 1.1 * line_s(2, kMiB));
}

TEST(NetworkLadder, AnotherWorldSizeTakesTheLadderAtTheSameBytesEachRingLinkCarries) {
  // At 4 ranks a ring link carries 2·3/4 of the bytes, at 2 ranks 2·1/2: S at 4 ranks puts as
  // much on each link as 1.5·S at 2. Its latency is the 4-rank ring's, 6α.
  const NetworkLadder ladder = ladder_at_two({1.2, 0.85, 1.15, 1.0});
  const std::int64_t bytes = 8 * kMiB;
  const double expected = intercept_s(4) + ladder.time_s(bytes * 3 / 2) - intercept_s(2);
  EXPECT_NEAR(replayed_s(4, bytes, ladder, AllreduceAlgorithm::RingAggregated), expected, 1e-6 * expected);
}

// A 4-rank profile whose rungs fall `bend` above and below the line in turn.
trace::MachineProfile curved_profile(double bend = 0.15) {
  return testing::synthetic_profile(4, [bend](std::int64_t bytes) {
    int rung = 0;
    for (std::int64_t size = 4096; size < bytes; size *= 4) ++rung;
    return line_s(4, static_cast<double>(bytes)) * (rung % 2 == 0 ? 1 + bend : 1 - bend);
  });
}

TEST(NetworkLadder, MachineGivesTheLadderWhereTheNetworkIsTheProfilesAndTheLineMissesIt) {
  const trace::Trace measured = testing::make_synthetic_trace(testing::SyntheticRun{});  // gloo, 1 host, 4 ranks
  ReplayRequest request;
  request.machine = curved_profile(0.45);  // the line misses the ladder by more than kMaxTrustedRelativeRms
  request.machine_file = "m.json";
  const PreparedReplay prepared = prepare_replay(request, measured);
  ASSERT_EQ(prepared.options.network_ladder.rungs(), 8u);
  const trace::LadderStep& largest = request.machine->allreduce.steps.back();
  EXPECT_DOUBLE_EQ(prepared.options.network_ladder.time_s(largest.bytes), largest.one.median_s);
  // A told --bandwidth is the network: no ladder. So is a fit given with --calibration.
  ReplayRequest told = request;
  told.bandwidth = 5e8;
  EXPECT_TRUE(prepare_replay(told, measured).options.network_ladder.empty());
  ReplayRequest fitted = request;
  fitted.calibration = machine_settings(curved_profile(0.45), AllreduceAlgorithm::Ring, "m.json").calibration;
  fitted.calibration_file = "c.json";
  EXPECT_TRUE(prepare_replay(fitted, measured).options.network_ladder.empty());
  // Where the line describes the ladder (15 % off each rung, as on loopback), the line is the network.
  ReplayRequest near_line = request;
  near_line.machine = curved_profile(0.15);
  ASSERT_LT(machine_settings(*near_line.machine, AllreduceAlgorithm::Ring, "m.json").calibration.fit.relative_rms,
            kMaxTrustedRelativeRms);
  EXPECT_TRUE(prepare_replay(near_line, measured).options.network_ladder.empty());
}

// A ladder of fewer than kMinLadderRungs sizes (a quick profile: --sizes 4K,64K,1M,4M) stays on
// the line however far the line misses it, and the misfit warning says how many sizes to measure.
TEST(NetworkLadder, ASparseLadderLeavesTheLineAsTheNetworkAndSaysSo) {
  const trace::Trace measured = testing::make_synthetic_trace(testing::SyntheticRun{});
  ReplayRequest request;
  request.machine = curved_profile(0.45);
  request.machine->allreduce.steps.resize(kMinLadderRungs - 1);
  request.machine_file = "m.json";
  ASSERT_GT(machine_settings(*request.machine, AllreduceAlgorithm::Ring, "m.json").calibration.fit.relative_rms,
            kMaxTrustedRelativeRms);
  const PreparedReplay prepared = prepare_replay(request, measured);
  EXPECT_TRUE(prepared.options.network_ladder.empty());
  const std::string expected = "its " + std::to_string(kMinLadderRungs - 1) + " sizes are too few";
  ASSERT_TRUE(prepared.calibration);
  const std::vector<std::string> warnings = calibration_warnings(*prepared.calibration);
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(),
                          [&](const std::string& w) { return w.find(expected) != std::string::npos; }))
      << ::testing::PrintToString(warnings);
  // A full ladder's misfit warning has no such clause.
  for (const std::string& w : calibration_warnings(machine_settings(curved_profile(0.45), AllreduceAlgorithm::Ring,
                                                                    "m.json").calibration)) {
    EXPECT_EQ(w.find("too few"), std::string::npos) << w;
  }
}

// Through the binary: where the line misses the ladder, the report says the ladder times the
// all-reduces, and the line's misfit, which the replay does not inherit, is not a warning.
TEST(NetworkLadder, TheReportNamesTheLadderAndNotTheLinesMisfit) {
  test_support::TempDir dir;
  trace::write_trace(dir / "run", testing::make_synthetic_trace(testing::SyntheticRun{}));
  trace::write_machine_profile(dir / "machine.json", curved_profile(0.45));
  const Outcome replay = run_cli(dir, "replay " + (dir / "run") + " --compute median --machine " +
                                          (dir / "machine.json") + " --json " + (dir / "report.json"));
  ASSERT_EQ(replay.status, 0) << replay.err;
  EXPECT_NE(replay.out.find("each all-reduce timed by the ladder's 8 sizes"), std::string::npos) << replay.out;
  EXPECT_EQ(replay.out.find("% RMS:"), std::string::npos) << replay.out;  // either misfit warning's text
  std::ifstream file(dir / "report.json");
  const nlohmann::json report = nlohmann::json::parse(file);
  EXPECT_EQ(report["network"]["ladder_sizes"], 8);
  EXPECT_TRUE(report["network"]["calibration"]["warnings"].empty()) << report["network"]["calibration"].dump();
  // Where the line is the network (a fit given with --calibration), its misfit stays a warning.
  const Calibration line = machine_settings(curved_profile(0.45), AllreduceAlgorithm::Ring, "m.json").calibration;
  ASSERT_GT(line.fit.relative_rms, kMaxTrustedRelativeRms);
  EXPECT_EQ(calibration_warnings(line, true).size() + 1, calibration_warnings(line).size());
}

}  // namespace
}  // namespace ddpsim::sim
