// `ddp-sim advise`'s three answers against closed forms on synthetic traces (advise.hpp).
#include <gtest/gtest.h>

#include <cmath>

#include "ddpsim/sim/advise.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

constexpr int kRuns = 11;  // 1 in order + 10 bootstrap replicates: the smallest allowed

// Two identical ranks (no rank skew, no straggling all-reduce) on a network fast enough that
// communication costs nothing: a rank's compute is then the job's iteration time.
testing::SyntheticRun compute_bound_run() {
  testing::SyntheticRun run;
  run.world_size = 2;
  run.rank_skew = 0;
  run.straggler_extra_s = 0;
  run.beta_bytes_per_s = 1e12;
  run.alpha_s = 1e-7;
  return run;
}

void scale_compute(RankIterationCosts& costs, double factor) {
  for (double* phase : {&costs.before_forward_s, &costs.forward_s, &costs.before_backward_s, &costs.backward_compute_s,
                        &costs.backward_tail_s, &costs.before_optimizer_s, &costs.optimizer_s, &costs.after_optimizer_s}) {
    *phase *= factor;
  }
  for (double& offset : costs.bucket_ready_s) offset *= factor;
  for (double& offset : costs.grad_ready_s) offset = offset < 0 ? offset : offset * factor;
}

double mean_compute_s(const WorkloadModel& model, int rank) {
  double sum = 0;
  for (const RankIterationCosts& costs : model.costs.at(static_cast<std::size_t>(rank))) sum += costs.compute_total_s();
  return sum / static_cast<double>(model.costs.at(static_cast<std::size_t>(rank)).size());
}

TEST(AdviseStragglers, TypicalComputeIsTheLowerMedianRankPerIteration) {
  WorkloadModel model;
  model.costs.resize(3, std::vector<RankIterationCosts>(2));
  for (int r = 0; r < 3; ++r) {
    model.costs[static_cast<std::size_t>(r)][0].forward_s = 1.0 + r;  // iteration 0: rank 1 is the median
    model.costs[static_cast<std::size_t>(r)][1].forward_s = 3.0 - r;  // iteration 1: rank 1 again
  }
  model.costs[0][1].forward_s = 0.5;  // iteration 1: 0.5, 2, 1 → the median is rank 2's 1.0
  const WorkloadModel one = with_typical_compute(model, 0);
  EXPECT_DOUBLE_EQ(one.costs[0][0].forward_s, 2.0);
  EXPECT_DOUBLE_EQ(one.costs[0][1].forward_s, 1.0);
  EXPECT_DOUBLE_EQ(one.costs[2][0].forward_s, 3.0);  // other ranks untouched
  const WorkloadModel all = with_typical_compute(model, -1);
  for (int r = 0; r < 3; ++r) EXPECT_DOUBLE_EQ(all.costs[static_cast<std::size_t>(r)][1].forward_s, 1.0);

  model.costs.resize(2);  // two ranks: the faster one, not their mean
  EXPECT_DOUBLE_EQ(with_typical_compute(model, 1).costs[1][0].forward_s, 1.0);
}

TEST(AdviseStragglers, ARankTwiceAsSlowIsNamedWithItsExtraCompute) {
  const trace::Trace trace = testing::make_synthetic_trace(compute_bound_run());
  AdviceSetup setup = prepare_advice(trace);
  for (RankIterationCosts& costs : setup.model.costs[1]) scale_compute(costs, 2.0);
  const StragglerAdvice advice = attribute_stragglers(setup, kRuns, 0);
  ASSERT_EQ(advice.ranks.size(), 2u);
  // Rank 1 computes its iteration twice as long: removing that saves one compute time.
  const double extra_s = mean_compute_s(setup.model, 0);
  EXPECT_NEAR(advice.ranks[1].per_iteration_s, extra_s, 0.02 * extra_s);
  EXPECT_NEAR(advice.ranks[1].total_s, extra_s * advice.iterations, 0.02 * extra_s * advice.iterations);
  EXPECT_TRUE(advice.ranks[1].straggler);
  EXPECT_NEAR(advice.ranks[0].per_iteration_s, 0, 1e-9);
  EXPECT_FALSE(advice.ranks[0].straggler);
  EXPECT_NEAR(advice.all.per_iteration_s, advice.ranks[1].per_iteration_s, 1e-9);
  EXPECT_GT(advice.ranks[1].per_iteration_interval_s.low, 0);
}

TEST(AdviseStragglers, UnskewedRanksNameNobody) {
  const AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(compute_bound_run()));
  const StragglerAdvice advice = attribute_stragglers(setup, kRuns, 0);
  for (const RankCost& cost : advice.ranks) {
    EXPECT_FALSE(cost.straggler) << cost.rank;
    EXPECT_NEAR(cost.per_iteration_s, 0, 1e-9) << cost.rank;
  }
}

// Communication as long as backward (16.8 MB at 1 GB/s): with the trace's 25 MiB cap the last
// 8.4 MB bucket starts only when backward ends and is all exposed (8 ms); with 1 MiB caps only
// the last 1 MB is.
TEST(AdviseBucket, CommunicationBoundTraceGetsASmallerCap) {
  testing::SyntheticRun run = compute_bound_run();
  run.beta_bytes_per_s = 1e9;
  const AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(run));
  const BucketAdvice advice = advise_bucket_cap(setup, {1, 100}, kRuns, 0);
  ASSERT_TRUE(advice.available) << advice.unavailable_reason;
  EXPECT_DOUBLE_EQ(advice.own_cap_mb, 25);
  EXPECT_DOUBLE_EQ(advice.best.cap_mb, 1) << advice_to_text({"synthetic", advice, {}, {}});
  EXPECT_FALSE(advice.keep);
  EXPECT_DOUBLE_EQ(advice.recommended_cap_mb, 1);
  EXPECT_GT(advice.gain, 0.05);
  EXPECT_LT(advice.best.median_interval_s.high, advice.own.median_interval_s.low);
  EXPECT_EQ(advice.candidates.size(), 2u);
}

TEST(AdviseBucket, FreeCommunicationKeepsWhatYouHave) {
  const AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(compute_bound_run()));
  const BucketAdvice advice = advise_bucket_cap(setup, {1, 100}, kRuns, 0);
  ASSERT_TRUE(advice.available) << advice.unavailable_reason;
  EXPECT_TRUE(advice.keep);
  EXPECT_DOUBLE_EQ(advice.recommended_cap_mb, 25);
  EXPECT_LT(std::abs(advice.gain), 0.01);
}

TEST(AdviseTimeout, ExponentialTailClosedForm) {
  const std::vector<double> waits = {0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.009, 0.010};
  double u = 0;
  double sigma = 0;
  // Median 5.5 ms; half the waits exceed it by 2.5 ms on average.
  const double timeout = timeout_for_probability(waits, 1e-6, &u, &sigma);
  EXPECT_NEAR(u, 0.0055, 1e-12);
  EXPECT_NEAR(sigma, 0.0025, 1e-12);
  EXPECT_NEAR(timeout, 0.0055 + 0.0025 * std::log(0.5 / 1e-6), 1e-12);
  // Never below the longest wait measured.
  EXPECT_DOUBLE_EQ(timeout_for_probability(waits, 0.4), 0.010);
  EXPECT_EQ(timeout_line(0.03281), "timeout=timedelta(seconds=0.033)");
}

TEST(AdviseTimeout, MonotoneInEpsilonSurvivesTheTraceAndDetectsAHang) {
  testing::SyntheticRun run;  // 4 ranks, rank skew, one all-reduce straggling by 50 ms
  run.world_size = 2;
  const trace::Trace trace = testing::make_synthetic_trace(run);
  const AdviceSetup setup = prepare_advice(trace);
  double previous = 0;
  for (double epsilon : {0.5, 0.1, 0.01, 0.001, 1e-6}) {
    const TimeoutAdvice advice = advise_timeout(setup, trace, epsilon, 0);
    ASSERT_TRUE(advice.available) << advice.unavailable_reason;
    EXPECT_TRUE(advice.iterations_per_day_assumed);
    EXPECT_NEAR(advice.iterations_per_day, 86400 / setup.median_iteration_s, 1e-6);
    EXPECT_GT(advice.timeout_s, previous) << epsilon;
    EXPECT_GE(advice.timeout_s, advice.wait_max_s);
    EXPECT_GE(advice.wait_max_s, run.straggler_extra_s);
    EXPECT_TRUE(advice.replay_survives);
    // The hung rank stalls at the start of the second replayed iteration; rank 0 reaches its
    // first all-reduce after its forward pass and first bucket, then waits the timeout.
    const RankIterationCosts& costs = setup.model.costs_for(0, 1);
    const double reach_s = costs.before_forward_s + costs.forward_s + costs.before_backward_s + costs.bucket_ready_s[0];
    EXPECT_NEAR(advice.time_to_detect_s, reach_s + advice.timeout_s, 0.005) << epsilon;
    previous = advice.timeout_s;
  }
  // Given iterations per day: more iterations, a longer timeout.
  EXPECT_GT(advise_timeout(setup, trace, 0.01, 1e9).timeout_s, advise_timeout(setup, trace, 0.01, 1e3).timeout_s);
}

}  // namespace
}  // namespace ddpsim::sim
