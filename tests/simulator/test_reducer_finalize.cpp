// The reducer's finalize after the all-reduces: the sequence, its cost fitted to a trace's tails,
// and a re-bucketed replay that copies its own layout back (Note [reducer finalize]).
#include <gtest/gtest.h>

#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/rebucket.hpp"
#include "ddpsim/sim/replay.hpp"
#include "minimal_workload.hpp"
#include "synthetic_trace.hpp"
#include "workload/reducer_finalize.hpp"

namespace ddpsim::sim {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

TEST(ReducerFinalize, WaitsForEachBucketInOrderThenCopiesIt) {
  // Autograd done at 1.0 s; bucket 1's all-reduce ends last (2.0 s), bucket 2's before it.
  const std::vector<double> ends = {0.5, 2.0, 1.5};
  const std::vector<std::int64_t> bytes = {100, 200, 300};
  // 0.5 → copy to 1.1; wait to 2.0 → copy to 2.2; bucket 2 already ended → copy to 2.5.
  EXPECT_NEAR(finalize_end_s(1.0, ends, bytes, 1e-3), 2.5, 1e-12);
  EXPECT_NEAR(finalize_exposed_s(1.0, ends, bytes, 1e-3), 0.5, 1e-12);
  // Autograd ends after every all-reduce: every copy is exposed.
  EXPECT_NEAR(finalize_exposed_s(3.0, ends, bytes, 1e-3), 0.6, 1e-12);
  EXPECT_EQ(finalize_exposed_s(1.0, ends, bytes, 0), 0);
}

TEST(ReducerFinalize, TheCostPerByteIsFittedBackFromTails) {
  const std::vector<std::int64_t> bytes = {4 * kMiB, 16 * kMiB, 8 * kMiB};
  const double per_byte = 2e-10;
  std::vector<RecordedFinalize> recorded;
  for (const std::vector<double>& ends : std::vector<std::vector<double>>{{0.01, 0.05, 0.04}, {0.02, 0.03, 0.06}, {0.01, 0.02, 0.03}}) {
    recorded.push_back({0.025, ends, finalize_exposed_s(0.025, ends, bytes, per_byte)});
  }
  EXPECT_NEAR(fit_finalize_seconds_per_byte(recorded, bytes), per_byte, 1e-6 * per_byte);
  // No tail: no copy cost; an iteration missing a bucket's end is not used.
  for (RecordedFinalize& one : recorded) one.tail_s = 0;
  EXPECT_EQ(fit_finalize_seconds_per_byte(recorded, bytes), 0);
  EXPECT_EQ(fit_finalize_seconds_per_byte({{0.025, {0.01, -1, 0.03}, 0.004}}, bytes), 0);
}

TEST(ReducerFinalize, ATracesCopyCostIsFoundByTheExtraction) {
  testing::SyntheticRun run;
  run.finalize_seconds_per_byte = 2e-10;
  run.backward_tail_s = 0;  // one layout cannot tell a fixed cost from the copies: all is copy
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::PerIteration);
  EXPECT_NEAR(model.finalize_seconds_per_byte, run.finalize_seconds_per_byte, 0.01 * run.finalize_seconds_per_byte);
  for (const auto& per_rank : model.costs) {
    for (const RankIterationCosts& costs : per_rank) {
      // Every copy recorded exposed here is the whole tail (the fit is exact on a pure copy).
      EXPECT_NEAR(costs.finalize_exposed_s, costs.backward_tail_s, 1e-6);
    }
  }
}

TEST(ReducerFinalize, OneBucketCopiesEveryGradientAfterItsAllReduce) {
  // Recorded with four buckets, only the last one's copy followed the last all-reduce; merged
  // into one bucket, the whole model's copy follows it.
  testing::SyntheticRun run;
  run.finalize_seconds_per_byte = 2e-10;
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::Median);
  const WorkloadModel single = rebucket(model, {1024 * kMiB, 1024 * kMiB});
  ASSERT_EQ(single.buckets.size(), 1u);
  ReplayOptions options = testing::star_options(AllreduceAlgorithm::RingAggregated, run.alpha_s, run.beta_bytes_per_s);
  options.iterations = 3;
  const double merged = testing::median_iteration_s(make_predicted_trace(single, options, replay_isolated(single, options)));
  const RankIterationCosts& slowest = model.costs_for(run.world_size - 1, 0);
  const double total = static_cast<double>(single.bucket_bytes[0]);
  const double allreduce = ring_allreduce_s(run.world_size, total, run.alpha_s, run.beta_bytes_per_s);
  const double copies = model.finalize_seconds_per_byte * total;
  // The copies of one bucket at once: 5 % of the iteration here, the recorded layout's 0.4 %.
  const double expected = slowest.compute_total_s() - slowest.finalize_exposed_s + allreduce + copies;
  EXPECT_NEAR(merged, expected, 0.005 * expected);
  EXPECT_GT(copies - slowest.finalize_exposed_s, 0.03 * expected);
}

TEST(ReducerFinalize, WithoutATailTheReplayIsUnchanged) {
  testing::SyntheticRun run;
  run.backward_tail_s = 0;
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::Median);
  EXPECT_EQ(model.finalize_seconds_per_byte, 0);
}

}  // namespace
}  // namespace ddpsim::sim
