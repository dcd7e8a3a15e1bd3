// Re-bucketing what-if: DDP's bucket assignment rule and the re-derived ready times.
#include <gtest/gtest.h>

#include "ddpsim/sim/rebucket.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/predicted_trace.hpp"
#include "minimal_workload.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

std::vector<trace::Parameter> parameters_of(const std::vector<std::pair<std::int64_t, std::string>>& specs) {
  std::vector<trace::Parameter> parameters;
  for (const auto& [bytes, dtype] : specs) {
    const int index = static_cast<int>(parameters.size());
    parameters.push_back({index, "p" + std::to_string(index), bytes / trace::dtype_size(dtype), dtype});
  }
  return parameters;
}

TEST(BucketAssignment, SmallFirstBucketThenCap) {
  // Gradients ready in reverse registration order: 5, 4, 3, 2, 1, 0.
  const auto parameters = parameters_of({{3 * kMiB, "float32"}, {kMiB / 2, "float32"}, {2 * kMiB, "float32"},
                                         {kMiB / 4, "float32"}, {kMiB, "float32"}, {1024, "float32"}});
  const auto buckets = compute_bucket_assignment(parameters, {5, 4, 3, 2, 1, 0}, {4 * kMiB, kMiB});
  // 5+4 reach the 1 MiB first cap; 3+2+1 (2.75 MiB) stay under 4 MiB until 0 joins (5.75).
  EXPECT_EQ(buckets, (std::vector<std::vector<int>>{{5, 4}, {3, 2, 1, 0}}));
}

TEST(BucketAssignment, LeftoverBucketComesLast) {
  const auto parameters = parameters_of({{kMiB, "float32"}, {kMiB, "float32"}, {kMiB, "float32"}});
  const auto buckets = compute_bucket_assignment(parameters, {2, 1, 0}, {8 * kMiB, kMiB});
  EXPECT_EQ(buckets, (std::vector<std::vector<int>>{{2}, {1, 0}}));
}

TEST(BucketAssignment, EachDtypeHasItsOwnBuckets) {
  const auto parameters = parameters_of({{kMiB, "float16"}, {kMiB, "float32"}, {kMiB / 2, "float16"},
                                         {kMiB / 2, "float32"}});
  const auto buckets = compute_bucket_assignment(parameters, {3, 2, 1, 0}, {kMiB, kMiB});
  // float32: 3 (0.5) + 1 (1.0) closes; float16: 2 (0.5) + 0 (1.0) closes.
  EXPECT_EQ(buckets, (std::vector<std::vector<int>>{{3, 1}, {2, 0}}));
}

// DDP's bucket_cap_mb_list: bucket i closes at entry i, the last entry repeating.
TEST(BucketAssignment, PerBucketListOfCapsLastRepeats) {
  // Ready order 7..0, each 1 MiB except 6 (0.5 MiB).
  const auto parameters = parameters_of({{kMiB, "float32"}, {kMiB, "float32"}, {kMiB, "float32"}, {kMiB, "float32"},
                                         {kMiB, "float32"}, {kMiB, "float32"}, {kMiB / 2, "float32"}, {kMiB, "float32"}});
  const BucketCaps caps = BucketCaps::list({kMiB, 2 * kMiB, 3 * kMiB});
  EXPECT_EQ(caps.limits(), (std::vector<std::int64_t>{kMiB, 2 * kMiB, 3 * kMiB}));
  EXPECT_EQ(caps.bucket_cap_bytes, 3 * kMiB);
  EXPECT_EQ(caps.first_bucket_cap_bytes, 3 * kMiB);
  const auto buckets = compute_bucket_assignment(parameters, {7, 6, 5, 4, 3, 2, 1, 0}, caps);
  // 7 (1 MiB) closes at 1; 6+5 (1.5) then +4 (2.5) close at 2; 3+2+1 (3) at 3; 0 left over.
  EXPECT_EQ(buckets, (std::vector<std::vector<int>>{{7}, {6, 5, 4}, {3, 2, 1}, {0}}));
  // A one-entry list is one cap for every bucket; {first, cap} is the two-cap rule.
  EXPECT_EQ(compute_bucket_assignment(parameters, {7, 6, 5, 4, 3, 2, 1, 0}, BucketCaps::list({2 * kMiB})),
            compute_bucket_assignment(parameters, {7, 6, 5, 4, 3, 2, 1, 0}, BucketCaps::single(2 * kMiB)));
  EXPECT_EQ(compute_bucket_assignment(parameters, {7, 6, 5, 4, 3, 2, 1, 0}, BucketCaps::list({kMiB, 4 * kMiB})),
            compute_bucket_assignment(parameters, {7, 6, 5, 4, 3, 2, 1, 0}, BucketCaps{4 * kMiB, kMiB}));
}

TEST(Rebucket, AListOfCapsIsRecordedAndGivesItsLayout) {
  testing::SyntheticRun run;  // 8 float32 parameters, 0.5 KiB to 8 MiB
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::Median);
  const WorkloadModel listed = rebucket(model, BucketCaps::list({kMiB / 2, kMiB, 2 * kMiB}));
  EXPECT_EQ(listed.source_meta.bucket_cap_bytes_list, (std::vector<std::int64_t>{kMiB / 2, kMiB, 2 * kMiB}));
  EXPECT_EQ(listed.source_meta.bucket_cap_bytes, 2 * kMiB);
  EXPECT_EQ(listed.buckets, compute_bucket_assignment(model.source_meta.parameters, gradient_ready_order(model),
                                                      BucketCaps::list({kMiB / 2, kMiB, 2 * kMiB})));
  EXPECT_THROW(rebucket(model, BucketCaps::list({kMiB, 0})), WorkloadError);
}

TEST(Rebucket, TheTracesOwnCapsGiveItsLayoutBack) {
  testing::SyntheticRun run;  // buckets {7,6} {5,4} {3,2} {1,0}: 1 MiB first cap, 2 MiB cap
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::Median);
  const WorkloadModel rebucketed = rebucket(model, {2 * kMiB, kMiB});
  EXPECT_EQ(rebucketed.buckets, run.buckets);
  EXPECT_EQ(rebucketed.bucket_bytes, model.bucket_bytes);
  for (int r = 0; r < run.world_size; ++r) {
    for (std::size_t b = 0; b < model.buckets.size(); ++b) {
      EXPECT_NEAR(rebucketed.costs_for(r, 0).bucket_ready_s[b], model.costs_for(r, 0).bucket_ready_s[b], 2e-9);
    }
  }
}

TEST(Rebucket, OneHugeBucketExposesAllCommunication) {
  testing::SyntheticRun run;
  run.backward_tail_s = 0;  // no finalize to copy back (ReducerFinalize.* has one)
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::Median);
  const WorkloadModel single = rebucket(model, {1024 * kMiB, 1024 * kMiB});
  ASSERT_EQ(single.buckets.size(), 1u);
  std::int64_t total = 0;
  for (auto bytes : model.bucket_bytes) total += bytes;
  EXPECT_EQ(single.bucket_bytes[0], total);

  ReplayOptions options = testing::star_options(AllreduceAlgorithm::RingAggregated, run.alpha_s, run.beta_bytes_per_s);
  options.iterations = 3;
  const double split = testing::median_iteration_s(make_predicted_trace(model, options, replay_isolated(model, options)));
  const double merged = testing::median_iteration_s(make_predicted_trace(single, options, replay_isolated(single, options)));
  // Nothing overlaps backward any more: the slowest rank's compute plus the whole all-reduce.
  const double slowest_compute = model.costs_for(run.world_size - 1, 0).compute_total_s();
  const double allreduce = ring_allreduce_s(run.world_size, static_cast<double>(total), run.alpha_s, run.beta_bytes_per_s);
  EXPECT_NEAR(merged, slowest_compute + allreduce, 0.01 * merged);
  EXPECT_GT(merged, split);
}

TEST(Rebucket, NeedsGradientTimes) {
  testing::SyntheticRun run;
  trace::Trace trace = testing::make_synthetic_trace(run);
  for (auto& rank : trace.ranks) {
    auto& events = rank.events;
    events.erase(std::remove_if(events.begin(), events.end(),
                                [](const trace::Event& e) { return e.type == trace::EventType::GradReady; }),
                 events.end());
  }
  const WorkloadModel model = extract_workload(trace, ComputeMode::Median);
  EXPECT_THROW(rebucket(model, {kMiB, kMiB}), WorkloadError);
}

}  // namespace
}  // namespace ddpsim::sim
