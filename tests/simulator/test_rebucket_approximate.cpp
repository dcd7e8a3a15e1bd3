// Bucket-cap what-ifs on a trace without per-parameter data (a profiler import): the
// approximation from the recorded buckets against closed forms, and the exact path untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/rebucket.hpp"
#include "ddpsim/sim/rebucket_approximate.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/trace/io.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"
#include "trace_events.hpp"

namespace ddpsim::sim {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr std::int64_t kS = kMiB;  // every recorded bucket: S bytes of float32
constexpr int kBuckets = 4;
constexpr int kWorld = 2;
constexpr double kAlpha = 10e-6;
constexpr double kBeta = 1e9;
constexpr double kTail_s = 0.005;  // last all-reduce end → step end
constexpr double kStep_s = 0.100;  // step k begins at k·kStep_s

// Recorded bucket k became ready (its all-reduce launched) 10·(k+1) ms into the step.
double ready_s(int k) { return 0.010 * (k + 1); }
double allreduce_s(std::int64_t bytes) { return ring_allreduce_s(kWorld, static_cast<double>(bytes), kAlpha, kBeta); }

std::int64_t ns(double seconds) { return std::llround(seconds * 1e9); }

// What a profiler import gives: 4 equal buckets, one pseudo-parameter each, steps 1..3, every
// all-reduce from its launch for allreduce_s(S), recorded under caps of S (first and others).
trace::Trace per_bucket_trace() {
  trace::Trace trace;
  for (int rank = 0; rank < kWorld; ++rank) {
    trace::RankTrace rank_trace;
    trace::RunMeta& meta = rank_trace.meta;
    meta.source = "imported";
    meta.tool = {"test", "0", "none"};
    meta.rank = rank;
    meta.local_rank = rank;
    meta.world_size = kWorld;
    meta.backend = "nccl";
    meta.workload_name = "kineto-import";
    meta.bucket_cap_bytes = kS;
    meta.first_bucket_cap_bytes = kS;
    meta.settings["profiler"] = "kineto";
    meta.settings["parameters"] = "per-bucket";
    trace::BucketAssignment layout;
    layout.first_iteration = 1;
    for (int k = 0; k < kBuckets; ++k) {
      meta.parameters.push_back({k, "bucket" + std::to_string(k) + ".allreduce", kS / 4, "float32"});
      layout.buckets.push_back({k});
    }
    meta.bucket_assignments = {layout};
    for (std::int64_t step = 1; step <= 3; ++step) {
      const double begin = kStep_s * static_cast<double>(step);
      trace::testing::EventLog log{rank_trace.events, rank, step};
      log.add(trace::EventType::IterationBegin, ns(begin));
      for (int k = 0; k < kBuckets; ++k) {
        log.add(trace::EventType::BucketReady, ns(begin + ready_s(k)), k, kS);
        log.add(trace::EventType::AllreduceBegin, ns(begin + ready_s(k)), k, kS);
        log.add(trace::EventType::AllreduceEnd, ns(begin + ready_s(k) + allreduce_s(kS)), k, kS);
      }
      log.add(trace::EventType::IterationEnd, ns(begin + ready_s(kBuckets - 1) + allreduce_s(kS) + kTail_s));
    }
    trace.ranks.push_back(std::move(rank_trace));
  }
  return trace;
}

std::vector<trace::Parameter> recorded_buckets() { return per_bucket_trace().meta().parameters; }

// Elements per piece and the recorded bucket each piece comes from, per new bucket.
std::vector<std::vector<std::pair<int, std::int64_t>>> shape(const std::vector<PlannedBucket>& plan) {
  std::vector<std::vector<std::pair<int, std::int64_t>>> result;
  for (const auto& bucket : plan) {
    result.emplace_back();
    for (const auto& piece : bucket) result.back().emplace_back(piece.recorded, piece.numel);
  }
  return result;
}

constexpr std::int64_t kN = kS / 4;  // elements per recorded bucket

TEST(RebucketFromBuckets, TheRecordedCapsGiveTheRecordedLayoutBack) {
  const auto plan = plan_buckets_from_recorded(recorded_buckets(), {kS, kS}, {kS, kS});
  EXPECT_EQ(shape(plan), (std::vector<std::vector<std::pair<int, std::int64_t>>>{{{0, kN}}, {{1, kN}}, {{2, kN}}, {{3, kN}}}));
}

TEST(RebucketFromBuckets, ACapOfTwoBucketsMergesPairs) {
  // 2S and 2.5S both hold two recorded buckets (3S would not fit); the merged bucket is ready
  // with its last member.
  for (const std::int64_t cap : {2 * kS, 5 * kS / 2}) {
    const auto plan = plan_buckets_from_recorded(recorded_buckets(), {kS, kS}, {cap, cap});
    EXPECT_EQ(shape(plan), (std::vector<std::vector<std::pair<int, std::int64_t>>>{{{0, kN}, {1, kN}}, {{2, kN}, {3, kN}}}))
        << cap;
  }
}

TEST(RebucketFromBuckets, ASmallerCapSplitsIntoEqualPieces) {
  // S/2: 2 pieces per bucket; 0.4·S: ceil(1/0.4) = 3 pieces of N/3 (rounded up first).
  const auto halves = plan_buckets_from_recorded(recorded_buckets(), {kS, kS}, {kS / 2, kS / 2});
  ASSERT_EQ(halves.size(), 8u);
  for (std::size_t j = 0; j < 8; ++j) {
    ASSERT_EQ(halves[j].size(), 1u);
    EXPECT_EQ(halves[j][0].recorded, static_cast<int>(j / 2));
    EXPECT_EQ(halves[j][0].numel, kN / 2);
    EXPECT_DOUBLE_EQ(halves[j][0].end_fraction, j % 2 == 0 ? 0.5 : 1.0);
  }
  const std::int64_t cap = 2 * kS / 5;
  const auto thirds = plan_buckets_from_recorded(recorded_buckets(), {kS, kS}, {cap, cap});
  ASSERT_EQ(thirds.size(), 12u);
  for (const auto& bucket : thirds) {
    ASSERT_EQ(bucket.size(), 1u);
    EXPECT_LE(bucket[0].numel * 4, cap);
    EXPECT_NEAR(static_cast<double>(bucket[0].numel), kN / 3.0, 1.0);
  }
}

TEST(RebucketFromBuckets, TheFirstBucketKeepsItsOwnCap) {
  // First cap S/2 (below the recorded S): bucket 0 gives its first S/2 to new bucket 0; the
  // rest, under the 4S cap, joins buckets 1-3 (S/2 + 3S = 3.5S <= 4S).
  const auto plan = plan_buckets_from_recorded(recorded_buckets(), {kS, kS}, {4 * kS, kS / 2});
  EXPECT_EQ(shape(plan), (std::vector<std::vector<std::pair<int, std::int64_t>>>{
                             {{0, kN / 2}}, {{0, kN / 2}, {1, kN}, {2, kN}, {3, kN}}}));
  // The recorded first cap kept: bucket 0 stays alone even under a cap that holds it all.
  const auto kept = plan_buckets_from_recorded(recorded_buckets(), {kS, kS}, {8 * kS, kS});
  EXPECT_EQ(shape(kept), (std::vector<std::vector<std::pair<int, std::int64_t>>>{
                             {{0, kN}}, {{1, kN}, {2, kN}, {3, kN}}}));
}

TEST(RebucketFromBuckets, AListOfCapsAppliesPerNewBucket) {
  // Limits S, 3S, then S/2 repeating: bucket 0 fills the first (S); buckets 1-3 (3S) the second.
  const auto plan = plan_buckets_from_recorded(recorded_buckets(), {kS, kS}, BucketCaps::list({kS, 3 * kS, kS / 2}));
  EXPECT_EQ(shape(plan), (std::vector<std::vector<std::pair<int, std::int64_t>>>{
                             {{0, kN}}, {{1, kN}, {2, kN}, {3, kN}}}));
}

// Through prepare_replay, as `ddp-sim replay --bucket-cap-mb` runs it.
PreparedReplay prepared_with_cap(const std::string& dir, std::optional<double> cap_mb,
                                 std::optional<double> first_cap_mb = std::nullopt) {
  ReplayRequest request;
  request.trace_dir = dir;
  request.algorithm = AllreduceAlgorithm::Analytic;  // sleeps ring_allreduce_s exactly
  request.bandwidth = kBeta;
  request.latency = kAlpha;
  request.bucket_cap_mb = cap_mb;
  request.first_bucket_cap_mb = first_cap_mb;
  return prepare_replay(request);
}

double replayed_step_s(const PreparedReplay& prepared) {
  const ReplayResult result = replay_isolated(prepared.model, prepared.options);
  EXPECT_TRUE(result.failure.empty()) << result.failure;
  return testing::median_iteration_s(make_predicted_trace(prepared.model, prepared.options, result));
}

TEST(RebucketFromBuckets, MergedPairsReplayToTheirClosedForm) {
  test_support::TempDir dir;
  trace::write_trace(dir / "import", per_bucket_trace());
  const PreparedReplay as_recorded = prepared_with_cap(dir / "import", std::nullopt);
  // As recorded: the last bucket launches at r3 and the step ends kTail after its all-reduce.
  EXPECT_NEAR(replayed_step_s(as_recorded), ready_s(3) + allreduce_s(kS) + kTail_s, 1e-6);

  // The first bucket kept at the recorded S by --first-bucket-cap-mb: it stays alone.
  EXPECT_EQ(prepared_with_cap(dir / "import", 2.0, 1.0).model.bucket_bytes, (std::vector<std::int64_t>{kS, 2 * kS, kS}));
  // --bucket-cap-mb 2S alone: the import capped every bucket alike (S), so the first follows.
  const PreparedReplay merged = prepared_with_cap(dir / "import", 2.0);  // both caps 2 MiB = 2S
  ASSERT_EQ(merged.model.buckets.size(), 2u);
  EXPECT_EQ(merged.model.bucket_bytes, (std::vector<std::int64_t>{2 * kS, 2 * kS}));
  for (const auto& per_rank : merged.model.costs) {
    for (const auto& costs : per_rank) {
      EXPECT_NEAR(costs.bucket_ready_s[0], ready_s(1), 1e-9);
      EXPECT_NEAR(costs.bucket_ready_s[1], ready_s(3), 1e-9);
    }
  }
  // Bucket {0,1} is done long before r3; {2,3} launches at r3 and takes t(2S).
  EXPECT_NEAR(replayed_step_s(merged), ready_s(3) + allreduce_s(2 * kS) + kTail_s, 1e-6);
  EXPECT_EQ(merged.model.source_meta.settings.at("sim.rebucket"), kApproximateRebucketNote);

  // The predicted trace says so, and is a valid trace (one pseudo-parameter per new bucket).
  const ReplayResult result = replay_isolated(merged.model, merged.options);
  trace::write_trace(dir / "predicted", make_predicted_trace(merged.model, merged.options, result));
  const trace::Trace predicted = trace::read_trace(dir / "predicted");
  EXPECT_EQ(predicted.meta().settings.at("sim.rebucket"), kApproximateRebucketNote);
  EXPECT_EQ(predicted.meta().parameters.size(), 2u);
  EXPECT_EQ(predicted.meta().parameters[1].numel, 2 * kN);
}

TEST(RebucketFromBuckets, SplitPiecesAreReadyAtInterpolatedTimes) {
  test_support::TempDir dir;
  trace::write_trace(dir / "import", per_bucket_trace());
  const PreparedReplay split = prepared_with_cap(dir / "import", 0.5, 1.0);  // S/2, the first bucket kept at S
  // Bucket 0 whole; buckets 1-3 in halves.
  ASSERT_EQ(split.model.buckets.size(), 7u);
  const std::vector<double> expected = {ready_s(0),
                                        (ready_s(0) + ready_s(1)) / 2, ready_s(1),
                                        (ready_s(1) + ready_s(2)) / 2, ready_s(2),
                                        (ready_s(2) + ready_s(3)) / 2, ready_s(3)};
  const auto& ready = split.model.costs_for(1, 0).bucket_ready_s;
  ASSERT_EQ(ready.size(), expected.size());
  for (std::size_t j = 0; j < expected.size(); ++j) EXPECT_NEAR(ready[j], expected[j], 1e-9) << j;
  // Every half is done before the next is ready: the step ends t(S/2) after r3.
  EXPECT_NEAR(replayed_step_s(split), ready_s(3) + allreduce_s(kS / 2) + kTail_s, 1e-6);
}

// A trace with per-parameter records keeps DDP's exact rule: prepare_replay gives what
// rebucket() gives, without the note.
TEST(RebucketFromBuckets, PerParameterTracesTakeTheExactPath) {
  testing::SyntheticRun run;  // 8 float32 parameters with gradient times
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  const trace::Trace measured = trace::read_trace(dir / "measured");
  EXPECT_FALSE(has_only_bucket_records(measured.meta()));
  EXPECT_TRUE(has_only_bucket_records(per_bucket_trace().meta()));
  const PreparedReplay prepared = prepared_with_cap(dir / "measured", 1.5);
  const WorkloadModel exact = rebucket(extract_workload(measured, ComputeMode::PerIteration),
                                       {static_cast<std::int64_t>(1.5 * kMiB), measured.meta().first_bucket_cap_bytes});
  EXPECT_EQ(prepared.model.buckets, exact.buckets);
  EXPECT_EQ(prepared.model.bucket_bytes, exact.bucket_bytes);
  EXPECT_EQ(prepared.model.costs_for(2, 1).bucket_ready_s, exact.costs_for(2, 1).bucket_ready_s);
  EXPECT_EQ(prepared.model.source_meta.settings.count("sim.rebucket"), 0u);
}

}  // namespace
}  // namespace ddpsim::sim
