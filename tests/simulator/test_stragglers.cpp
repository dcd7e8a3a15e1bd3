// Stragglers and timeouts: injected stalls (the shared skew syntax), Monte Carlo
// distributions, and the exact simulated time a timeout fails the job.
#include <gtest/gtest.h>

#include <cmath>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/monte_carlo.hpp"
#include "ddpsim/sim/replay.hpp"
#include "minimal_workload.hpp"

namespace ddpsim::sim {
namespace {

constexpr double kAlpha = 50e-6;
constexpr double kBeta = 1e9;
constexpr std::int64_t kBytes = 4 << 20;

ReplayOptions two_rank_options() {
  return testing::star_options(AllreduceAlgorithm::RingAggregated, kAlpha, kBeta);
}

const trace::Event* find_event(const ReplayResult& result, trace::EventType type) {
  for (const auto& events : result.events) {
    for (const auto& event : events) {
      if (event.type == type) return &event;
    }
  }
  return nullptr;
}

TEST(Stragglers, FixedDelayStretchesTheIterationByItsLength) {
  const WorkloadModel model = testing::communication_only_workload(2, kBytes);
  ReplayOptions options = two_rank_options();
  const double base = job_iteration_times_s(replay_isolated(model, options)).at(0);
  EXPECT_NEAR(base, ring_allreduce_s(2, kBytes, kAlpha, kBeta), 1e-6);

  options.skew.delays.push_back(trace::parse_delay("1=40@0"));
  const ReplayResult result = replay_isolated(model, options);
  EXPECT_NEAR(job_iteration_times_s(result).at(0), base + 0.040, 1e-6);
  const trace::Event* delay = find_event(result, trace::EventType::Delay);
  ASSERT_NE(delay, nullptr);
  EXPECT_EQ(delay->rank, 1);
  EXPECT_EQ(delay->dur_ns, 40'000'000);
  EXPECT_EQ(delay->kind, "delay");
}

// --slowdown means what ddp-train --slowdown injects (SkewInjector): forward, autograd and the
// optimizer step take F times as long; the steps between them (DDP's hooks, the reducer's
// finalisation after the last all-reduce) run as measured.
TEST(Stragglers, SlowdownStretchesForwardAutogradAndOptimizerOnly) {
  WorkloadModel model = testing::communication_only_workload(2, kBytes);
  for (auto& rank_costs : model.costs) {
    RankIterationCosts& costs = rank_costs.at(0);
    costs.before_forward_s = 0.002;
    costs.forward_s = 0.010;
    costs.before_backward_s = 0.001;
    costs.backward_compute_s = 0.020;
    costs.bucket_ready_s = {0.020};
    costs.backward_tail_s = 0.004;
    costs.before_optimizer_s = 0.0005;
    costs.optimizer_s = 0.003;
    costs.after_optimizer_s = 0.0005;
  }
  ReplayOptions options = two_rank_options();
  options.slowdown[1] = 3.0;
  const ReplayResult result = replay_isolated(model, options);
  const double allreduce_s = testing::ring_allreduce_s(2, kBytes, kAlpha, kBeta);
  // Rank 1 is last: 0.002 + 3·0.010 + 0.001 + 3·0.020, the all-reduce, 0.004 + 0.0005 +
  // 3·0.003 + 0.0005 (stretching every phase would give 0.123 s + the all-reduce).
  EXPECT_NEAR(job_iteration_times_s(result).at(0), 0.107 + allreduce_s, 1e-6);
  std::int64_t allreduce_end = -1;
  std::int64_t backward_end = -1;
  for (const trace::Event& event : result.events.at(1)) {
    if (event.type == trace::EventType::AllreduceEnd) allreduce_end = event.t_ns;
    if (event.type == trace::EventType::BackwardEnd) backward_end = event.t_ns;
  }
  EXPECT_NEAR(static_cast<double>(backward_end - allreduce_end) * 1e-9, 0.004, 1e-6);
}

TEST(Stragglers, RandomStallsFollowTheSharedSampler) {
  WorkloadModel model = testing::communication_only_workload(2, kBytes);
  ReplayOptions options = two_rank_options();
  options.iterations = 6;
  options.skew.distributions.push_back(trace::parse_delay_distribution("1=uniform:5,50"));
  options.skew.seed = 7;
  const std::vector<double> times = job_iteration_times_s(replay_isolated(model, options));
  ASSERT_EQ(times.size(), 6u);
  const double allreduce_s = ring_allreduce_s(2, kBytes, kAlpha, kBeta);
  for (std::int64_t iteration = 0; iteration < 6; ++iteration) {
    const double stall_s = static_cast<double>(options.skew.random_delay_ns(1, iteration)) * 1e-9;
    EXPECT_GE(stall_s, 0.005);
    EXPECT_LE(stall_s, 0.050);
    EXPECT_NEAR(times[static_cast<std::size_t>(iteration)], stall_s + allreduce_s, 1e-6) << iteration;
  }
}

TEST(Stragglers, MonteCarloDistributionPoolsRuns) {
  std::vector<RunOutcome> runs(2);
  runs[0].iteration_times_s = {1.0, 2.0, 3.0};
  runs[1].iteration_times_s = {4.0};
  runs[1].failed = true;
  runs[1].failure_time_s = 10.0;
  const IterationDistribution d = summarize_runs(runs, 64);
  EXPECT_EQ(d.iterations, 4u);
  EXPECT_DOUBLE_EQ(d.mean_s, 2.5);
  EXPECT_DOUBLE_EQ(d.p50_s, 2.5);
  EXPECT_NEAR(d.p90_s, 3.7, 1e-12);
  EXPECT_NEAR(d.p99_s, 3.97, 1e-12);
  EXPECT_EQ(d.pooled_s, (std::vector<double>{1.0, 2.0, 3.0, 4.0}));  // every run's, sorted
  const std::string json = distribution_to_json(d);
  EXPECT_NE(json.find("\"iteration_times_s\": [\n    1.0,"), std::string::npos) << json;
  EXPECT_DOUBLE_EQ(d.samples_per_s, 64 / 2.5);
  EXPECT_DOUBLE_EQ(d.failure_probability, 0.5);
  EXPECT_DOUBLE_EQ(d.mean_time_to_failure_s, 10.0);
}

TEST(Timeouts, ShorterThanTheDelayFailsAtReadyTimePlusTimeout) {
  const WorkloadModel model = testing::communication_only_workload(2, kBytes);
  ReplayOptions options = two_rank_options();
  options.skew.delays.push_back(trace::parse_delay("1=100@0"));
  options.timeout_s = 0.030;
  const ReplayResult result = replay_isolated(model, options);
  ASSERT_FALSE(result.failure.empty());
  // Rank 0's bucket is ready at t = 0 and it waits for rank 1, which arrives at 0.1 s.
  EXPECT_NEAR(result.simulated_end_s, 0.030, 1e-9);
  EXPECT_NE(result.failure.find("rank 0 iteration 0 bucket 0"), std::string::npos) << result.failure;
  const trace::Event* failure = find_event(result, trace::EventType::Failure);
  ASSERT_NE(failure, nullptr);
  EXPECT_EQ(failure->rank, 0);
  EXPECT_EQ(failure->bucket, 0);
  EXPECT_EQ(failure->t_ns, 30'000'000);
  EXPECT_EQ(failure->kind, "timeout");
}

TEST(Timeouts, LongerThanTheDelaySurvives) {
  const WorkloadModel model = testing::communication_only_workload(2, kBytes);
  ReplayOptions options = two_rank_options();
  options.skew.delays.push_back(trace::parse_delay("1=100@0"));
  options.timeout_s = 0.150;
  const ReplayResult result = replay_isolated(model, options);
  EXPECT_TRUE(result.failure.empty()) << result.failure;
  EXPECT_NEAR(job_iteration_times_s(result).at(0), 0.100 + ring_allreduce_s(2, kBytes, kAlpha, kBeta), 1e-6);
}

TEST(Stragglers, DelayOutsideTheWorldIsRejected) {
  const WorkloadModel model = testing::communication_only_workload(2, kBytes);
  ReplayOptions options = two_rank_options();
  options.skew.delays.push_back(trace::parse_delay("5=10"));
  EXPECT_THROW(replay_isolated(model, options), SimulationError);
}

// The star shortcut (ring-agg sleeps latency + bytes/β instead of simulating the flows) must
// give what SimGrid's flow model gives; a network/ --cfg entry forces the flow model.
TEST(ScaleOut, UncontendedStarShortcutEqualsSimulatedFlows) {
  const WorkloadModel model = testing::communication_only_workload(16, kBytes);
  ReplayOptions shortcut = testing::star_options(AllreduceAlgorithm::RingAggregated, kAlpha, kBeta);
  shortcut.iterations = 3;
  shortcut.skew.delays.push_back(trace::parse_delay("3=2@1"));
  ReplayOptions flows = shortcut;
  flows.simgrid_config = {"network/model:CM02"};
  const std::vector<double> fast = job_iteration_times_s(replay_isolated(model, shortcut));
  const std::vector<double> simulated = job_iteration_times_s(replay_isolated(model, flows));
  ASSERT_EQ(fast.size(), 3u);
  ASSERT_EQ(simulated.size(), 3u);
  for (std::size_t i = 0; i < fast.size(); ++i) EXPECT_NEAR(fast[i], simulated[i], 1e-9 * simulated[i]) << i;
}

TEST(MedianInterval, IsTheCentralQuantilesOfTheReplicatesMedians) {
  // Replicate k's iterations are {k, k, k+100}: its median is k ms, whatever the outlier.
  std::vector<RunOutcome> replicates;
  for (int k = 1; k <= 21; ++k) {
    RunOutcome run;
    run.iteration_times_s = {k * 1e-3, k * 1e-3, (k + 100) * 1e-3};
    replicates.push_back(run);
  }
  replicates.push_back(RunOutcome{});  // a run that completed nothing does not count
  const MedianInterval interval = median_interval(replicates, 0.9);
  EXPECT_EQ(interval.replicates, 21);
  // Quantiles of 1..21 ms at 5 % and 95 %, interpolated: 2 ms and 20 ms.
  EXPECT_NEAR(interval.low_s, 2e-3, 1e-12);
  EXPECT_NEAR(interval.high_s, 20e-3, 1e-12);
  EXPECT_NE(interval_to_text(interval).find("[2, 20] ms over 21 resampled runs"), std::string::npos)
      << interval_to_text(interval);
}

}  // namespace
}  // namespace ddpsim::sim
