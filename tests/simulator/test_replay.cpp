// End to end through the library: a synthetic measured trace on disk → calibration →
// replay in SimGrid → predicted trace on disk, read back and compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/collective.hpp"
#include "ddpsim/trace/io.hpp"
#include "minimal_workload.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"

namespace ddpsim::sim {
namespace {

struct Prepared {
  trace::Trace measured;
  WorkloadModel model;
  Calibration calibration;
};

// The synthetic run goes through the trace files, as a recorded one would.
Prepared prepare(const testing::SyntheticRun& run, const test_support::TempDir& dir) {
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  Prepared prepared;
  prepared.measured = trace::read_trace(dir / "measured");
  prepared.model = extract_workload(prepared.measured, ComputeMode::Median);
  prepared.calibration = calibrate(prepared.measured, AllreduceAlgorithm::Ring);
  return prepared;
}

ReplayOptions calibrated_options(const Calibration& calibration, AllreduceAlgorithm algorithm) {
  ReplayOptions options;
  options.algorithm = algorithm;
  options.alpha_s = calibration.alpha_s;
  options.beta_bytes_per_s = calibration.beta_bytes_per_s;
  options.platform.alpha_s = calibration.alpha_s;
  options.platform.beta_bytes_per_s = calibration.beta_bytes_per_s;
  options.iterations = 5;
  return options;
}

class ReplayValidation : public ::testing::TestWithParam<AllreduceAlgorithm> {};

TEST_P(ReplayValidation, RecoversIterationTimeAndNetwork) {
  testing::SyntheticRun run;
  test_support::TempDir dir;
  const Prepared prepared = prepare(run, dir);
  EXPECT_NEAR(prepared.calibration.alpha_s, run.alpha_s, 0.03 * run.alpha_s);
  EXPECT_NEAR(prepared.calibration.beta_bytes_per_s, run.beta_bytes_per_s, 0.03 * run.beta_bytes_per_s);

  const ReplayOptions options = calibrated_options(prepared.calibration, GetParam());
  const ReplayResult result = replay_isolated(prepared.model, options);
  ASSERT_TRUE(result.failure.empty()) << result.failure;
  trace::write_trace(dir / "predicted", make_predicted_trace(prepared.model, options, result));
  const trace::Trace predicted = trace::read_trace(dir / "predicted");  // validates the output
  EXPECT_EQ(predicted.meta().source, "simulated");
  EXPECT_EQ(predicted.meta().backend, "simgrid");
  EXPECT_EQ(predicted.world_size(), run.world_size);

  const double measured_s = testing::median_iteration_s(prepared.measured);
  const double predicted_s = testing::median_iteration_s(predicted);
  EXPECT_NEAR(predicted_s, measured_s, 0.01 * measured_s) << to_string(GetParam());
  EXPECT_EQ(testing::iteration_times_s(predicted).size(), 5u);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ReplayValidation,
                         ::testing::Values(AllreduceAlgorithm::Ring, AllreduceAlgorithm::RingAggregated,
                                           AllreduceAlgorithm::Analytic),
                         [](const auto& info) {
                           std::string name = to_string(info.param);
                           name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                           return name;
                         });

TEST(ReplayValidation, CommunicationBoundRunIsRecoveredToo) {
  // A slow network: the all-reduces no longer hide behind backward.
  testing::SyntheticRun run;
  run.beta_bytes_per_s = 0.2e9;
  run.alpha_s = 200e-6;
  test_support::TempDir dir;
  const Prepared prepared = prepare(run, dir);
  const ReplayResult result = replay_isolated(prepared.model, calibrated_options(prepared.calibration, AllreduceAlgorithm::RingAggregated));
  trace::Trace predicted = make_predicted_trace(prepared.model, calibrated_options(prepared.calibration, AllreduceAlgorithm::RingAggregated), result);
  const double measured_s = testing::median_iteration_s(prepared.measured);
  EXPECT_NEAR(testing::median_iteration_s(predicted), measured_s, 0.01 * measured_s);
  // The comm-bound iteration is well above the compute alone.
  EXPECT_GT(measured_s, 1.2 * (run.forward_s + run.backward_s + run.optimizer_s) * 1.06);

  // Buckets queue behind each other here. As in a measured trace (FORMAT.md), a bucket's
  // allreduce_begin is its launch, when it was ready, not when the stream got to it; the
  // network's time (trace/collective.hpp) leaves the queueing out and is the ring formula's.
  int queued = 0;
  for (const trace::RankTrace& rank : predicted.ranks) {
    std::map<std::pair<std::int64_t, int>, std::int64_t> ready, begin, end;
    for (const trace::Event& event : rank.events) {
      if (event.type == trace::EventType::BucketReady) ready[{event.iteration, event.bucket}] = event.t_ns;
      if (event.type == trace::EventType::AllreduceBegin) begin[{event.iteration, event.bucket}] = event.t_ns;
      if (event.type == trace::EventType::AllreduceEnd) end[{event.iteration, event.bucket}] = event.t_ns;
    }
    ASSERT_FALSE(begin.empty());
    for (const auto& [key, t_ns] : begin) {
      ASSERT_EQ(ready.count(key), 1u);
      EXPECT_EQ(t_ns, ready[key]) << "iteration " << key.first << " bucket " << key.second;
      const auto previous = end.find({key.first, key.second - 1});
      queued += previous != end.end() && t_ns < previous->second;
    }
  }
  EXPECT_GT(queued, 0);
  for (const trace::CollectiveTransfer& transfer : trace::collective_transfers(predicted)) {
    const double expected_s = ring_allreduce_s(run.world_size, static_cast<double>(transfer.bytes),
                                               prepared.calibration.alpha_s, prepared.calibration.beta_bytes_per_s);
    EXPECT_NEAR(transfer.transfer_s, expected_s, 0.02 * expected_s) << "bucket " << transfer.bucket;
  }
}

TEST(ReplayWhatIf, SlowerRankStretchesTheIteration) {
  testing::SyntheticRun run;
  test_support::TempDir dir;
  const Prepared prepared = prepare(run, dir);
  ReplayOptions options = calibrated_options(prepared.calibration, AllreduceAlgorithm::RingAggregated);
  const double base = testing::median_iteration_s(make_predicted_trace(prepared.model, options, replay_isolated(prepared.model, options)));
  options.slowdown[2] = 1.5;
  const double slowed = testing::median_iteration_s(make_predicted_trace(prepared.model, options, replay_isolated(prepared.model, options)));
  EXPECT_GT(slowed, 1.3 * base);
}

TEST(ReplayWhatIf, TimeoutFailsTheRun) {
  testing::SyntheticRun run;
  test_support::TempDir dir;
  const Prepared prepared = prepare(run, dir);
  ReplayOptions options = calibrated_options(prepared.calibration, AllreduceAlgorithm::RingAggregated);
  options.slowdown[3] = 3.0;  // rank 3 is ~2× an iteration late to every all-reduce
  options.timeout_s = 0.02;
  const ReplayResult result = replay_isolated(prepared.model, options);
  ASSERT_FALSE(result.failure.empty());
  EXPECT_NE(result.failure.find("timeout"), std::string::npos) << result.failure;
  int failures = 0;
  for (const auto& events : result.events) {
    for (const auto& event : events) {
      if (event.type != trace::EventType::Failure) continue;
      ++failures;
      EXPECT_EQ(event.kind, "timeout");
      EXPECT_NEAR(static_cast<double>(event.dur_ns) * 1e-9, 0.02, 1e-6);
    }
  }
  EXPECT_EQ(failures, 1);
}

TEST(ReplayWhatIf, PerIterationReplaysAOneOffStallAgainstTheTimeout) {
  testing::SyntheticRun run;
  run.stall_s = 0.3;  // rank 1 stalls 300 ms before iteration 5's forward pass
  test_support::TempDir dir;
  const Prepared prepared = prepare(run, dir);
  const WorkloadModel model = extract_workload(prepared.measured, ComputeMode::PerIteration);
  ReplayOptions options = calibrated_options(prepared.calibration, AllreduceAlgorithm::RingAggregated);
  options.iterations = static_cast<std::int64_t>(model.source_iterations.size());

  options.timeout_s = 0.5;  // longer than the stall: the job survives
  const ReplayResult survives = replay_isolated(model, options);
  EXPECT_TRUE(survives.failure.empty()) << survives.failure;
  const trace::Trace predicted = make_predicted_trace(model, options, survives);
  // Predicted iterations carry the numbers of the iterations they replay (1…9), and the
  // stalled one is the long one.
  EXPECT_EQ(predicted.ranks[0].complete_iterations(), model.source_iterations);
  const auto times = testing::iteration_times_s(predicted);
  const auto measured_times = testing::iteration_times_s(prepared.measured);
  ASSERT_EQ(times.size(), 9u);
  EXPECT_NEAR(times[4], measured_times[5], 0.01 * measured_times[5]);  // iteration 5
  EXPECT_GT(times[4], 0.25);

  options.timeout_s = 0.2;  // shorter: rank 0 gives up inside iteration 5's first all-reduce
  const ReplayResult fails = replay_isolated(model, options);
  EXPECT_NE(fails.failure.find("iteration 5 bucket 0: timeout"), std::string::npos) << fails.failure;
}

// Per (rank, iteration) of a replay: forward's length, and rank 0's iteration length.
struct ForwardsAndIterations {
  std::map<std::pair<int, std::int64_t>, std::int64_t> forward_ns;
  std::map<std::int64_t, double> iteration_s;
};

ForwardsAndIterations forwards_and_iterations(const ReplayResult& result) {
  ForwardsAndIterations out;
  for (const auto& events : result.events) {
    std::int64_t forward_begin = 0;
    std::int64_t iteration_begin = 0;
    for (const auto& event : events) {
      if (event.type == trace::EventType::ForwardBegin) forward_begin = event.t_ns;
      if (event.type == trace::EventType::ForwardEnd) out.forward_ns[{event.rank, event.iteration}] = event.t_ns - forward_begin;
      if (event.type == trace::EventType::IterationBegin) iteration_begin = event.t_ns;
      if (event.type == trace::EventType::IterationEnd && event.rank == 0) {
        out.iteration_s[event.iteration] = static_cast<double>(event.t_ns - iteration_begin) * 1e-9;
      }
    }
  }
  return out;
}

// Ranks beyond the measured ones replay a measured rank drawn per (seed, rank, iteration).
TEST(ReplayWhatIf, ExtraRanksDrawMeasuredRanksCompute) {
  testing::SyntheticRun run;  // 4 ranks, rank r computes (1 + 0.02 r) times slower
  test_support::TempDir dir;
  const Prepared prepared = prepare(run, dir);
  ReplayOptions options = calibrated_options(prepared.calibration, AllreduceAlgorithm::RingAggregated);
  options.world_size = 32;
  options.iterations = 3;
  const auto forward_ns = forwards_and_iterations(replay_isolated(prepared.model, options)).forward_ns;
  int not_modulo = 0;
  for (const auto& [key, duration] : forward_ns) {
    const auto [rank, iteration] = key;
    if (rank < run.world_size) continue;
    bool measured = false;
    for (int source = 0; source < run.world_size; ++source) {
      measured = measured || std::llabs(forward_ns.at({source, iteration}) - duration) <= 1;
    }
    EXPECT_TRUE(measured) << "rank " << rank << " iteration " << iteration;
    not_modulo += std::llabs(forward_ns.at({rank % run.world_size, iteration}) - duration) > 1 ? 1 : 0;
  }
  EXPECT_GT(not_modulo, 0);
}

// A 1-rank trace whose iteration k computes k + 1 ms, replayed on 2 ranks. By default the copy
// replays rank 0's own iteration (fully correlated: every iteration lasts its compute plus the
// all-reduce); with independent_copies it replays a draw of its own, and each iteration lasts
// the slower of the two computes plus the same all-reduce.
TEST(ReplayWhatIf, IndependentCopiesWaitForTheSlowerDraw) {
  WorkloadModel model = testing::communication_only_workload(1, 4096);
  model.mode = ComputeMode::PerIteration;
  model.costs[0].clear();
  model.source_iterations.clear();
  for (int k = 0; k < 8; ++k) {
    RankIterationCosts costs;
    costs.forward_s = 1e-3 * (k + 1);
    costs.bucket_ready_s = {0.0};
    model.costs[0].push_back(costs);
    model.source_iterations.push_back(k);
  }
  ReplayOptions options = testing::star_options(AllreduceAlgorithm::RingAggregated, 1e-5, 1e9);
  options.world_size = 2;
  options.iterations = 8;
  options.rank_copy_seed = 11;

  const ForwardsAndIterations same = forwards_and_iterations(replay_isolated(model, options));
  options.independent_copies = true;
  const ForwardsAndIterations independent = forwards_and_iterations(replay_isolated(model, options));

  ASSERT_EQ(same.iteration_s.size(), 8u);
  ASSERT_EQ(independent.iteration_s.size(), 8u);
  const double allreduce_s = same.iteration_s.at(0) - 1e-3;
  EXPECT_GT(allreduce_s, 0);
  int differ = 0;
  for (std::int64_t k = 0; k < 8; ++k) {
    const double own_s = 1e-3 * static_cast<double>(k + 1);
    EXPECT_NEAR(same.forward_ns.at({0, k}) * 1e-9, own_s, 1e-9);
    EXPECT_NEAR(same.forward_ns.at({1, k}) * 1e-9, own_s, 1e-9) << "the copy replays rank 0's iteration " << k;
    EXPECT_NEAR(same.iteration_s.at(k), own_s + allreduce_s, 1e-7);

    EXPECT_NEAR(independent.forward_ns.at({0, k}) * 1e-9, own_s, 1e-9) << "the measured rank replays itself";
    const double copy_s = static_cast<double>(independent.forward_ns.at({1, k})) * 1e-9;
    const double drawn = copy_s * 1e3;
    EXPECT_NEAR(drawn, std::round(drawn), 1e-6) << "a measured iteration's compute";
    EXPECT_TRUE(drawn > 0.5 && drawn < 8.5) << drawn;
    differ += std::abs(copy_s - own_s) > 1e-9 ? 1 : 0;
    EXPECT_NEAR(independent.iteration_s.at(k), std::max(own_s, copy_s) + allreduce_s, 1e-7) << "iteration " << k;
  }
  EXPECT_GE(differ, 4) << "the copy's draws should mostly differ from rank 0's iterations";
}

TEST(ReplayWhatIf, LargerWorldTakesLongerAllreduces) {
  testing::SyntheticRun run;
  test_support::TempDir dir;
  const Prepared prepared = prepare(run, dir);
  ReplayOptions options = calibrated_options(prepared.calibration, AllreduceAlgorithm::RingAggregated);
  options.world_size = 64;
  const ReplayResult result = replay_isolated(prepared.model, options);
  ASSERT_EQ(result.events.size(), 64u);
  // Rank 0's all-reduce of bucket 0 in iteration 1 against the formula at W = 64; ranks
  // replay rank r mod 4 of the trace.
  std::int64_t begin = 0;
  double duration = 0;
  for (const auto& event : result.events[0]) {
    if (event.iteration != 1 || event.bucket != 3) continue;
    if (event.type == trace::EventType::AllreduceBegin) begin = event.t_ns;
    if (event.type == trace::EventType::AllreduceEnd) duration = static_cast<double>(event.t_ns - begin) * 1e-9;
  }
  const double formula = ring_allreduce_s(64, static_cast<double>(prepared.model.bucket_bytes[3]), options.alpha_s,
                                          options.beta_bytes_per_s);
  // The last bucket starts when the slowest rank's backward ends, which rank 0 waits for.
  EXPECT_GE(duration, formula * 0.999);
}

// Replays a synthetic run with one SimGrid configuration entry that must be refused, and checks
// the refusal is a single line that names what was wrong.
void expect_one_line_config_error(const std::string& config_entry, const std::string& named) {
  ReplayOptions options;
  options.platform.alpha_s = 1e-5;
  options.platform.beta_bytes_per_s = 1e9;
  options.simgrid_config = {config_entry};
  testing::SyntheticRun run;
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::Median);
  try {
    replay_isolated(model, options);
    FAIL() << "expected a SimulationError for " << config_entry;
  } catch (const SimulationError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(named), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(ReplayErrors, UnknownSimgridKeyIsOneLine) {
  expect_one_line_config_error("network/no-such-key:1", "network/no-such-key");
}

TEST(ReplayErrors, InvalidModelNameAbortsOnlyTheChild) {
  expect_one_line_config_error("network/model:NoSuchModel", "NoSuchModel");
}

TEST(ReplayErrors, PlatformFileWithTooFewHosts) {
  test_support::TempDir dir;
  const std::string xml = dir / "two-hosts.xml";
  {
    std::ofstream out(xml);
    out << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
           "<platform version=\"4.1\">\n<zone id=\"world\" routing=\"Full\">\n"
           "  <host id=\"host-1\" speed=\"1Gf\"/>\n  <host id=\"host-2\" speed=\"1Gf\"/>\n"
           "  <link id=\"wire\" bandwidth=\"1GBps\" latency=\"10us\"/>\n"
           "  <route src=\"host-1\" dst=\"host-2\"><link_ctn id=\"wire\"/></route>\n"
           "</zone>\n</platform>\n";
  }
  ReplayOptions options;
  options.platform.kind = PlatformKind::File;
  options.platform.xml_file = xml;
  testing::SyntheticRun run;  // 4 ranks
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::Median);
  try {
    replay_isolated(model, options);
    FAIL() << "expected a SimulationError";
  } catch (const SimulationError& error) {
    EXPECT_NE(std::string(error.what()).find("expected at least 4 hosts"), std::string::npos) << error.what();
  }
}

// A predicted trace declares the replay's own skew in FORMAT.md's syntax (it once copied the
// source's and added `slowdown.R` keys no reader defines, and dropped --delay/--delay-dist);
// what the source run injected is said in settings, since its compute still holds it.
TEST(PredictedTrace, DeclaresTheReplaysOwnSkew) {
  testing::SyntheticRun run;
  test_support::TempDir dir;
  trace::Trace source = testing::make_synthetic_trace(run);
  for (auto& rank : source.ranks) rank.meta.skew = {{"slowdown", "1=2"}, {"seed", "0"}};
  trace::write_trace(dir / "measured", source);
  const WorkloadModel model = extract_workload(trace::read_trace(dir / "measured"), ComputeMode::Median);
  ReplayOptions options = calibrated_options(calibrate(trace::read_trace(dir / "measured"), AllreduceAlgorithm::Ring),
                                             AllreduceAlgorithm::RingAggregated);
  options.slowdown[2] = 1.5;
  options.skew.delays.push_back(trace::parse_delay("0=5@2"));
  options.skew.distributions.push_back(trace::parse_delay_distribution("1=exp:3"));
  options.skew.seed = 9;
  trace::write_trace(dir / "predicted", make_predicted_trace(model, options, replay_isolated(model, options)));
  const trace::Trace predicted = trace::read_trace(dir / "predicted");
  const std::map<std::string, std::string> expected = {
      {"slowdown", "2=1.5"}, {"delay", "0=5@2"}, {"delay_dist", "1=exp:3"}, {"seed", "9"}};
  EXPECT_EQ(predicted.meta().skew, expected);
  EXPECT_EQ(predicted.meta().settings.at("sim.source_skew"), "seed=0 slowdown=1=2");
  // Its skew parses back into the spec that was replayed.
  EXPECT_EQ(trace::parse_slowdown(predicted.meta().skew.at("slowdown")).factor, 1.5);
}

}  // namespace
}  // namespace ddpsim::sim
