// Re-bucketing what-if: DDP's bucket assignment rule and the re-derived ready times.
#include <gtest/gtest.h>

#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/rebucket.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/trace/io.hpp"
#include "minimal_workload.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"

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

// A parameter DDP buckets alone (c10d: a sparse gradient) is a bucket where it stands in the
// order, at every cap, and neither fills its dtype's open bucket nor moves its limit. DLRM's
// profile has such a layout: buckets {0..5}, {the alone one}, {the rest}.
TEST(BucketAssignment, AParameterAloneIsABucketWhereItStandsAtEveryCap) {
  auto parameters = parameters_of({{kMiB, "float32"}, {kMiB / 4, "float32"}, {448, "float32"},
                                   {kMiB / 2, "float32"}, {kMiB, "float32"}});
  parameters[2].alone = true;
  // Ready order 4, 3, 2, 1, 0: 4 reaches the 1 MiB first cap; 2 is its own bucket; 3, 1, 0 the rest.
  EXPECT_EQ(compute_bucket_assignment(parameters, {4, 3, 2, 1, 0}, {25 * kMiB, kMiB}),
            (std::vector<std::vector<int>>{{4}, {2}, {3, 1, 0}}));
  // At a cap of 0.5 MiB the others split; 2 stays alone, in its place, and 3 still opens the
  // second bucket at the second limit (2 moved no limit).
  EXPECT_EQ(compute_bucket_assignment(parameters, {4, 3, 2, 1, 0}, {kMiB / 2, kMiB}),
            (std::vector<std::vector<int>>{{4}, {3}, {2}, {1, 0}}));
  parameters[2].alone = false;  // the same sizes, bucketed by the rule alone
  EXPECT_EQ(compute_bucket_assignment(parameters, {4, 3, 2, 1, 0}, {25 * kMiB, kMiB}),
            (std::vector<std::vector<int>>{{4}, {3, 2, 1, 0}}));
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

// DDP given bucket_cap_mb caps every bucket alike; its default keeps a 1 MiB first bucket.
TEST(Rebucket, ACapAloneMeansWhatItMeansToTheJob) {
  trace::RunMeta default_first;  // 25 MiB, first bucket 1 MiB
  EXPECT_EQ(BucketCaps::for_cap(default_first, 5 * kMiB).limits(), (std::vector<std::int64_t>{kMiB, 5 * kMiB}));
  trace::RunMeta capped_alike;
  capped_alike.first_bucket_cap_bytes = capped_alike.bucket_cap_bytes;
  EXPECT_EQ(BucketCaps::for_cap(capped_alike, 5 * kMiB).limits(), (std::vector<std::int64_t>{5 * kMiB, 5 * kMiB}));
}

// As `ddp-sim replay --bucket-cap-mb C [--first-bucket-cap-mb F]` prepares it.
PreparedReplay prepared_with_caps(const std::string& dir, double cap_mb, std::optional<double> first_cap_mb = std::nullopt) {
  ReplayRequest request;
  request.trace_dir = dir;
  request.algorithm = AllreduceAlgorithm::Analytic;
  request.bandwidth = 1e9;
  request.latency = 10e-6;
  request.bucket_cap_mb = cap_mb;
  request.first_bucket_cap_mb = first_cap_mb;
  return prepare_replay(request);
}

bool any_contains(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

TEST(Rebucket, ReplaysMoveTheFirstBucketWithTheCapWhereTheTraceCappedEveryBucketAlike) {
  testing::SyntheticRun run;  // 15 MiB of gradients
  trace::Trace trace = testing::make_synthetic_trace(run);
  for (auto& rank : trace.ranks) rank.meta.first_bucket_cap_bytes = rank.meta.bucket_cap_bytes = 64 * kMiB;
  test_support::TempDir dir;
  trace::write_trace(dir / "alike", trace);
  const WorkloadModel model = extract_workload(trace::read_trace(dir / "alike"), ComputeMode::Median);
  const auto layout = [&](const BucketCaps& caps) {
    return compute_bucket_assignment(model.source_meta.parameters, gradient_ready_order(model), caps);
  };
  // A 64 MiB first bucket would hold every gradient: the cap alone moves it to 3 MiB.
  ASSERT_EQ(layout({3 * kMiB, 64 * kMiB}).size(), 1u);
  const PreparedReplay cap_alone = prepared_with_caps(dir / "alike", 3);
  EXPECT_EQ(cap_alone.model.buckets, layout(BucketCaps::single(3 * kMiB)));
  EXPECT_EQ(cap_alone.model.buckets.size(), 3u);
  EXPECT_FALSE(any_contains(cap_alone.warnings, "the replay changes no bucket"));
  // --first-bucket-cap-mb still sets the first bucket.
  EXPECT_EQ(prepared_with_caps(dir / "alike", 3, 64).model.buckets.size(), 1u);

  // The synthetic trace's own caps (25 MiB, first 1 MiB): the first bucket keeps its 1 MiB.
  trace::write_trace(dir / "default", testing::make_synthetic_trace(run));
  ASSERT_EQ(layout(BucketCaps::single(16 * kMiB)).size(), 1u);
  EXPECT_EQ(prepared_with_caps(dir / "default", 16).model.buckets, layout({16 * kMiB, kMiB}));
  EXPECT_EQ(prepared_with_caps(dir / "default", 16).model.buckets.size(), 2u);
}

TEST(Rebucket, ACapThatGivesTheRecordedBucketsSaysSo) {
  testing::SyntheticRun run;  // recorded with a 2 MiB cap and a 1 MiB first bucket
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  const PreparedReplay same = prepared_with_caps(dir / "measured", 2);
  EXPECT_EQ(same.model.buckets, run.buckets);
  EXPECT_TRUE(any_contains(same.warnings, "bucket cap 2 MiB, first bucket 1 MiB give the recorded buckets again (4): "
                                          "the replay changes no bucket"));
  // Any cap under 1 MiB closes the same pairs (each holds a gradient of 1 MiB or more); 16 MiB does not.
  EXPECT_TRUE(any_contains(prepared_with_caps(dir / "measured", 0.5).warnings, "the replay changes no bucket"));
  EXPECT_FALSE(any_contains(prepared_with_caps(dir / "measured", 16).warnings, "the replay changes no bucket"));
  // The same for a list: 1 MiB, then 2 MiB repeating, is the recorded rule.
  ReplayRequest listed;
  listed.trace_dir = dir / "measured";
  listed.algorithm = AllreduceAlgorithm::Analytic;
  listed.bandwidth = 1e9;
  listed.latency = 10e-6;
  listed.bucket_caps_mb = {1, 2};
  EXPECT_TRUE(any_contains(prepare_replay(listed).warnings,
                           "--bucket-caps-mb gives the recorded buckets again (4): the replay changes no bucket"));
  listed.bucket_caps_mb = {16};
  EXPECT_FALSE(any_contains(prepare_replay(listed).warnings, "the replay changes no bucket"));
}

}  // namespace
}  // namespace ddpsim::sim
