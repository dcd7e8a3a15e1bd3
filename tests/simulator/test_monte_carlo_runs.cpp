// The Monte Carlo driver's seeds: one --seed, two independent streams (stall draws, and which
// measured rank a rank beyond the trace copies), and the library's Monte Carlo loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "ddpsim/sim/monte_carlo_runs.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/trace/io.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"

namespace ddpsim::sim {
namespace {

TEST(MonteCarloSeeds, StallsKeepTheRuntimesSeedAndRankCopiesGetTheirOwnStream) {
  std::set<std::uint64_t> stalls;
  for (int run = 0; run < 100; ++run) {
    const RunSeeds seeds = seeds_of_run(7, run, /*bootstrap=*/false);
    EXPECT_EQ(seeds.stalls, 7u + static_cast<std::uint64_t>(run));  // run 0 stalls as ddp-train --seed 7
    EXPECT_EQ(seeds.resample, 0u);
    stalls.insert(seeds.stalls);
  }
  for (int run = 0; run < 100; ++run) {
    // No run's rank-copy seed is any run's stall seed: the streams do not overlap.
    EXPECT_EQ(stalls.count(seeds_of_run(7, run, false).rank_copies), 0u) << run;
  }
  EXPECT_EQ(seeds_of_run(7, 0, /*bootstrap=*/true).resample, 0u);  // run 0 replays in order
  EXPECT_EQ(seeds_of_run(7, 3, /*bootstrap=*/true).resample, 2u * 10 + 1);
}

// (rank, iteration) → forward duration of every rank beyond the measured ones, and every stall.
struct Observed {
  std::map<std::pair<int, std::int64_t>, std::int64_t> extra_forward_ns;
  std::map<std::pair<int, std::int64_t>, std::int64_t> stall_ns;
};

Observed observe(const ReplayResult& result, int measured_ranks) {
  Observed observed;
  for (const auto& events : result.events) {
    std::int64_t begin = 0;
    for (const trace::Event& event : events) {
      if (event.type == trace::EventType::Delay) observed.stall_ns[{event.rank, event.iteration}] = event.dur_ns;
      if (event.rank < measured_ranks) continue;
      if (event.type == trace::EventType::ForwardBegin) begin = event.t_ns;
      if (event.type == trace::EventType::ForwardEnd) observed.extra_forward_ns[{event.rank, event.iteration}] = event.t_ns - begin;
    }
  }
  return observed;
}

// Once the stall seed also chose the copied ranks, so new stall draws changed the workload.
TEST(MonteCarloSeeds, StallDrawsAndRankCopiesVaryIndependently) {
  testing::SyntheticRun run;  // 4 ranks, rank r computes (1 + 0.02 r) times slower
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  ReplayRequest request;
  request.trace_dir = dir / "measured";
  request.world_size = 16;
  request.iterations = 4;
  request.skew.distributions.push_back(trace::parse_delay_distribution("all=uniform:0,5"));
  PreparedReplay prepared = prepare_replay(request);

  const auto replay_with = [&](std::uint64_t stall_seed, std::uint64_t copy_seed) {
    ReplayOptions options = prepared.options;
    options.skew.seed = stall_seed;
    options.rank_copy_seed = copy_seed;
    return observe(replay_isolated(prepared.model, options), run.world_size);
  };
  const Observed base = replay_with(1, 5);
  const Observed new_stalls = replay_with(2, 5);
  const Observed new_copies = replay_with(1, 6);
  ASSERT_FALSE(base.extra_forward_ns.empty());
  ASSERT_FALSE(base.stall_ns.empty());
  EXPECT_EQ(base.extra_forward_ns, new_stalls.extra_forward_ns);  // same ranks copied
  EXPECT_NE(base.stall_ns, new_stalls.stall_ns);
  EXPECT_NE(base.extra_forward_ns, new_copies.extra_forward_ns);  // other ranks copied
  EXPECT_EQ(base.stall_ns, new_copies.stall_ns);                  // same stalls

  // The driver gives run 0 the stream seeds_of_run names: its stalls are ddp-train's.
  MonteCarloPlan plan;
  plan.seed = 1;
  ReplayResult first;
  run_monte_carlo(prepared, plan, &first);
  const Observed driven = observe(first, run.world_size);
  EXPECT_EQ(driven.stall_ns, base.stall_ns);
  EXPECT_EQ(driven.extra_forward_ns, replay_with(1, seeds_of_run(1, 0, false).rank_copies).extra_forward_ns);
}

TEST(MonteCarloSeeds, BadPlansNameTheirFlag) {
  MonteCarloPlan plan;
  plan.runs = 0;
  EXPECT_THROW(check_plan(plan), RequestError);
  plan.runs = 5;
  plan.bootstrap = true;
  try {
    check_plan(plan);
    ADD_FAILURE() << "no error";
  } catch (const RequestError& error) {
    EXPECT_NE(std::string(error.what()).find("--bootstrap"), std::string::npos) << error.what();
  }
}

// --cores N stretches compute as a --slowdown of every simulated rank by the same factor
// does, and also the steps between the phases that a slowdown runs as measured (cores shared
// with more ranks slow the framework's work as well): equal where there are none.
TEST(SharedCores, PreparedReplayStretchesLikeASlowdownOfEveryRank) {
  testing::SyntheticRun run;  // 4 ranks
  run.before_forward_s = run.before_backward_s = run.backward_tail_s = 0;
  run.before_optimizer_s = run.after_optimizer_s = 0;
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  testing::SyntheticRun with_steps;
  trace::write_trace(dir / "with-steps", testing::make_synthetic_trace(with_steps));
  ReplayRequest request;
  request.trace_dir = dir / "measured";
  request.world_size = 8;
  request.iterations = 4;
  ReplayRequest shared = request;
  shared.cores = 4;  // 4 ranks on 4 cores -> 8: x2
  ReplayRequest slowed = request;
  for (int rank = 0; rank < 8; ++rank) slowed.skew.slowdowns.push_back({rank, 2.0});
  const PreparedReplay with_cores = prepare_replay(shared);
  EXPECT_DOUBLE_EQ(with_cores.compute_stretch, 2.0);
  EXPECT_DOUBLE_EQ(prepare_replay(request).compute_stretch, 1.0);
  const auto end_of = [](const ReplayResult& result) {
    std::int64_t end = 0;
    for (const auto& events : result.events) {
      for (const trace::Event& event : events) end = std::max(end, event.t_ns);
    }
    return end;
  };
  const PreparedReplay with_slowdowns = prepare_replay(slowed);
  const std::int64_t stretched = end_of(replay_isolated(with_cores.model, with_cores.options));
  EXPECT_EQ(stretched, end_of(replay_isolated(with_slowdowns.model, with_slowdowns.options)));
  const PreparedReplay plain = prepare_replay(request);
  EXPECT_GT(stretched, end_of(replay_isolated(plain.model, plain.options)));
  shared.trace_dir = slowed.trace_dir = dir / "with-steps";
  const PreparedReplay steps_shared = prepare_replay(shared);
  const PreparedReplay steps_slowed = prepare_replay(slowed);
  EXPECT_GT(end_of(replay_isolated(steps_shared.model, steps_shared.options)),
            end_of(replay_isolated(steps_slowed.model, steps_slowed.options)));
  ReplayRequest bad = request;
  for (double cores : {-1.0, 0.5, std::nan("")}) {
    bad.cores = cores;
    EXPECT_THROW(prepare_replay(bad), RequestError) << cores;
  }
  ReplayRequest effective = request;
  effective.cores = 3.2;  // 4 ranks -> 8 on 3.2 effective cores: (8/3.2) / (4/3.2) = 2
  EXPECT_DOUBLE_EQ(prepare_replay(effective).compute_stretch, 2.0);
  // Co-running measured at 4 and 8 ranks: (8/2.5) / (4/3.2) = 2.56, the same replay as 2.56x.
  ReplayRequest corun = request;
  corun.effective_cores = {{4, 3.2}, {8, 2.5}};
  const PreparedReplay with_corun = prepare_replay(corun);
  EXPECT_NEAR(with_corun.compute_stretch, 2.56, 1e-12);
  EXPECT_GT(end_of(replay_isolated(with_corun.model, with_corun.options)), stretched);
  corun.cores = 2;
  EXPECT_THROW(prepare_replay(corun), RequestError);
  corun.cores = 0;
  corun.effective_cores = {{1, 1.0}};
  EXPECT_THROW(prepare_replay(corun), RequestError);
}

// Median compute replays 3 iterations, unless stalls are asked: then the whole trace, and in
// every mode at least through a stalled iteration (3 draws of exp(100 ms) were a lottery).
TEST(PreparedReplay, StallsReplayEveryIterationAndReachTheirIteration) {
  testing::SyntheticRun run;  // 10 iterations: 1..9 are replayed
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  ReplayRequest request;
  request.trace_dir = dir / "measured";
  request.compute = ComputeMode::Median;
  EXPECT_EQ(prepare_replay(request).options.iterations, 3);
  ReplayRequest random = request;
  random.skew.distributions.push_back(trace::parse_delay_distribution("1=exp:100"));
  EXPECT_EQ(prepare_replay(random).options.iterations, 9);
  ReplayRequest late = request;
  late.skew.delays.push_back(trace::parse_delay("1=500@40"));
  EXPECT_EQ(prepare_replay(late).options.iterations, 40);  // iterations 1..40
  late.compute = ComputeMode::PerIteration;
  EXPECT_EQ(prepare_replay(late).options.iterations, 40);
  ReplayRequest asked = random;
  asked.iterations = 5;
  EXPECT_EQ(prepare_replay(asked).options.iterations, 5);
}

// A two-level platform given in full (a --cluster preset) is not calibrated from the trace:
// nothing is reported as calibrated, and a 1-rank trace can be scaled out on it.
TEST(PreparedReplay, FullyGivenTwoLevelPlatformIsNotCalibrated) {
  test_support::TempDir dir;
  for (const int world : {4, 1}) {
    testing::SyntheticRun run;
    run.world_size = world;
    const std::string path = dir / ("measured-" + std::to_string(world));
    trace::write_trace(path, testing::make_synthetic_trace(run));
    ReplayRequest request;
    request.trace_dir = path;
    request.platform.kind = PlatformKind::TwoLevel;
    request.platform.gpus_per_node = 8;
    request.platform.intra_bandwidth = 2e11;
    request.platform.intra_latency = 5e-6;
    request.platform.inter_bandwidth = 1.9e11;
    request.platform.inter_latency = 4.9e-6;
    request.world_size = 64;
    const PreparedReplay prepared = prepare_replay(request);
    EXPECT_FALSE(prepared.calibration.has_value()) << world;
    EXPECT_EQ(prepared.options.platform.inter_bandwidth, 1.9e11);
    EXPECT_EQ(prepared.options.platform.intra_latency_s, 5e-6);
    EXPECT_EQ(prepared.options.beta_bytes_per_s, 1.9e11);
  }
}

// --pool at the library (the CLI refuses first, so only this shows prepare_replay's own check):
// runs of the trace's configuration join it, a run of another configuration is refused in one
// line naming the run and the difference, whatever the CLI let through.
TEST(PreparedReplay, PoolsRunsOfTheTracesConfigurationAndRefusesOthers) {
  test_support::TempDir dir;
  testing::SyntheticRun run;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  trace::write_trace(dir / "repeat", testing::make_synthetic_trace(run));
  testing::SyntheticRun wider = run;
  wider.world_size = 2;
  trace::write_trace(dir / "other", testing::make_synthetic_trace(wider));

  ReplayRequest request;
  request.trace_dir = dir / "measured";
  const std::size_t alone = prepare_replay(request).measured.complete_iterations().size();
  request.pooled_runs = {dir / "repeat"};
  const std::size_t pooled = prepare_replay(request).measured.complete_iterations().size();
  EXPECT_GT(pooled, alone);
  EXPECT_LT(pooled, 2 * alone);  // the repeat's warm-up iteration is left out

  request.pooled_runs = {dir / "repeat", dir / "other"};
  try {
    prepare_replay(request);
    FAIL() << "a run of another world size was pooled";
  } catch (const RequestError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("--pool " + (dir / "other") + ": expected a run of the replayed trace's configuration, got world_size", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace ddpsim::sim
