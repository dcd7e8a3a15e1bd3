// Extracting per-rank compute phases and bucket-ready offsets from a trace.
#include <gtest/gtest.h>

#include "ddpsim/sim/workload_model.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

TEST(WorkloadModel, MedianPhasesPerRank) {
  testing::SyntheticRun run;
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::Median);
  EXPECT_EQ(model.world_size, run.world_size);
  EXPECT_EQ(model.source_iterations, (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(model.buckets, run.buckets);
  ASSERT_EQ(model.bucket_bytes.size(), 4u);
  EXPECT_EQ(model.bucket_bytes[0], 4 * (128 + 2097152));
  for (int r = 0; r < run.world_size; ++r) {
    const RankIterationCosts& costs = model.costs_for(r, 0);
    const double f = 1 + run.rank_skew * r;  // the jitter's median is 1
    EXPECT_NEAR(costs.forward_s, f * run.forward_s, 2e-9);
    EXPECT_NEAR(costs.before_forward_s, f * run.before_forward_s, 2e-9);
    EXPECT_NEAR(costs.backward_compute_s, f * run.backward_s, 2e-9);
    EXPECT_NEAR(costs.backward_tail_s, f * run.backward_tail_s, 2e-9);
    EXPECT_NEAR(costs.optimizer_s, f * run.optimizer_s, 2e-9);
    EXPECT_NEAR(costs.after_optimizer_s, f * run.after_optimizer_s, 2e-9);
    ASSERT_EQ(costs.bucket_ready_s.size(), 4u);
    for (std::size_t b = 1; b < 4; ++b) EXPECT_GT(costs.bucket_ready_s[b], costs.bucket_ready_s[b - 1]);
    EXPECT_NEAR(costs.bucket_ready_s.back(), costs.backward_compute_s, 2e-9);
    // The first bucket holds the last two parameters: ready after their gradients.
    EXPECT_NEAR(costs.bucket_ready_s[0], costs.grad_ready_s[6], 2e-9);
  }
}

TEST(WorkloadModel, PerIterationKeepsEveryIteration) {
  testing::SyntheticRun run;
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::PerIteration);
  ASSERT_EQ(model.costs[0].size(), 9u);
  // Simulated iteration 1 replays source iteration 2 (jitter 0.97), and it cycles.
  EXPECT_NEAR(model.costs_for(0, 1).forward_s, 0.97 * run.forward_s, 2e-9);
  EXPECT_NEAR(model.costs_for(0, 10).forward_s, 0.97 * run.forward_s, 2e-9);
}

TEST(WorkloadModel, MeanDiffersFromMedianUnderSkewedJitter) {
  testing::SyntheticRun run;
  run.jitter = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.9};
  const trace::Trace trace = testing::make_synthetic_trace(run);
  const double median = extract_workload(trace, ComputeMode::Median).costs_for(0, 0).forward_s;
  const double mean = extract_workload(trace, ComputeMode::Mean).costs_for(0, 0).forward_s;
  EXPECT_NEAR(median, run.forward_s, 2e-9);
  EXPECT_NEAR(mean, run.forward_s * (8 + 1.9) / 9, 2e-9);
}

TEST(WorkloadModel, IterationZeroAloneIsUsed) {
  testing::SyntheticRun run;
  run.iterations = 1;
  trace::Trace trace = testing::make_synthetic_trace(run);
  for (auto& rank : trace.ranks) rank.meta.bucket_assignments.resize(1);  // no rebuilt layout yet
  const WorkloadModel model = extract_workload(trace, ComputeMode::Median);
  EXPECT_EQ(model.source_iterations, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(model.buckets.size(), 1u);
}

TEST(WorkloadModel, NoCompleteIterationIsAnError) {
  testing::SyntheticRun run;
  run.iterations = 2;
  trace::Trace trace = testing::make_synthetic_trace(run);
  // Rank 1 died during iteration 1: drop its iteration_end.
  auto& events = trace.ranks[1].events;
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const trace::Event& e) { return e.iteration == 1 && e.type == trace::EventType::IterationEnd; }),
               events.end());
  EXPECT_THROW(extract_workload(trace, ComputeMode::Median), WorkloadError);
}

TEST(WorkloadModel, ComputeModeNames) {
  EXPECT_EQ(compute_mode_from_string("per-iteration"), ComputeMode::PerIteration);
  EXPECT_FALSE(compute_mode_from_string("max").has_value());
}

}  // namespace
}  // namespace ddpsim::sim
