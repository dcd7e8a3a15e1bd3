// Autograd slowed while its rank's all-reduces transfer (compute_fraction_during_allreduce):
// the measured backward is turned into autograd's time alone, and the replay paces it again,
// so a what-if that moves the transfers moves autograd with them. Closed forms throughout.
#include <gtest/gtest.h>

#include <algorithm>

#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "trace_events.hpp"

namespace ddpsim::sim {
namespace {

constexpr std::int64_t kMs = 1000000;
constexpr std::int64_t kBucketBytes = 1000000;  // one parameter of 250000 float32 each

// Two ranks alike, iterations 0..5, 1 MB buckets at 1e8 B/s (10 ms each on a 2-rank ring).
// Backward begins at B = t0 + 5 ms. Autograd alone needs 10 ms to bucket 0 and 25 ms to
// bucket 1 (its end); at half pace while bucket 0 transfers (B+10 → B+20) it does 5 ms of
// work there, so bucket 1 is ready at B+30 and transfers to B+40; 5 ms of optimizer: 50 ms.
trace::Trace paced_trace(int world_size) {
  trace::Trace trace;
  const std::int64_t ready_ms[] = {10, world_size > 1 ? 30 : 25};  // alone: no transfer slows it
  const std::int64_t end_ms[] = {20, 40};
  for (int r = 0; r < world_size; ++r) {
    trace::RankTrace rank;
    rank.meta.rank = r;
    rank.meta.world_size = world_size;
    for (int p = 0; p < 2; ++p) rank.meta.parameters.push_back({p, "p" + std::to_string(p), kBucketBytes / 4, "float32"});
    rank.meta.bucket_assignments = {{0, {{1}, {0}}}};
    for (std::int64_t it = 0; it < 6; ++it) {
      const std::int64_t t0 = it * 1000 * kMs;
      const std::int64_t backward = t0 + 5 * kMs;
      trace::testing::EventLog log{rank.events, r, it};
      log.add(trace::EventType::IterationBegin, t0);
      log.add(trace::EventType::ForwardBegin, t0);
      log.add(trace::EventType::ForwardEnd, backward);
      log.add(trace::EventType::BackwardBegin, backward);
      for (int b = 0; b < 2; ++b) {
        log.add(trace::EventType::BucketReady, backward + ready_ms[b] * kMs, b, kBucketBytes);
        if (world_size > 1) {
          log.add(trace::EventType::AllreduceBegin, backward + ready_ms[b] * kMs, b, kBucketBytes);
          log.add(trace::EventType::AllreduceEnd, backward + end_ms[b] * kMs, b, kBucketBytes);
        }
      }
      const std::int64_t backward_end = backward + (world_size > 1 ? 40 : 25) * kMs;
      log.add(trace::EventType::BackwardEnd, backward_end);
      log.add(trace::EventType::OptimizerBegin, backward_end);
      log.add(trace::EventType::OptimizerEnd, backward_end + 5 * kMs);
      log.add(trace::EventType::IterationEnd, backward_end + 5 * kMs);
    }
    trace::testing::sort_by_time(rank.events);
    trace.ranks.push_back(rank);
  }
  return trace;
}

// The last replayed iteration's length, with the model extracted at `fraction`.
double replayed_iteration_s(const trace::Trace& trace, double fraction, double beta, int world_size = 0) {
  const WorkloadModel model = extract_workload(trace, ComputeMode::Median, fraction);
  ReplayOptions options;
  options.algorithm = AllreduceAlgorithm::RingAggregated;
  options.beta_bytes_per_s = beta;
  options.platform.beta_bytes_per_s = beta;
  options.iterations = 3;
  options.world_size = world_size;
  options.compute_fraction_during_allreduce = fraction;
  const ReplayResult result = replay_isolated(model, options);
  EXPECT_TRUE(result.failure.empty()) << result.failure;
  return trace::testing::iteration_length_s(result.events.front(), 3);
}

TEST(PacedAutograd, ExtractionGivesAutogradsTimeAlone) {
  const WorkloadModel as_measured = extract_workload(paced_trace(2), ComputeMode::Median);
  EXPECT_NEAR(as_measured.costs[0][0].bucket_ready_s[1], 0.030, 1e-9);
  const WorkloadModel alone = extract_workload(paced_trace(2), ComputeMode::Median, 0.5);
  EXPECT_NEAR(alone.costs[0][0].bucket_ready_s[0], 0.010, 1e-9);  // before any transfer
  EXPECT_NEAR(alone.costs[0][0].bucket_ready_s[1], 0.025, 1e-9);  // 30 - 0.5 x 10
  EXPECT_NEAR(alone.costs[0][0].backward_compute_s, 0.025, 1e-9);
  EXPECT_THROW(extract_workload(paced_trace(2), ComputeMode::Median, 0), WorkloadError);
  EXPECT_THROW(extract_workload(paced_trace(2), ComputeMode::Median, 1.5), WorkloadError);
}

TEST(PacedAutograd, ReplayReproducesTheTraceItCameFrom) {
  EXPECT_NEAR(replayed_iteration_s(paced_trace(2), 0.5, 1e8), 0.050, 1e-6);
  EXPECT_NEAR(replayed_iteration_s(paced_trace(2), 1, 1e8), 0.050, 1e-6);
}

// The predicted trace says which contention the replay applied, and only when it applied one.
TEST(PacedAutograd, PredictedTraceRecordsTheFraction) {
  const WorkloadModel model = extract_workload(paced_trace(2), ComputeMode::Median, 0.5);
  ReplayOptions options;
  options.beta_bytes_per_s = 1e8;
  options.platform.beta_bytes_per_s = 1e8;
  options.iterations = 2;
  options.compute_fraction_during_allreduce = 0.5;
  const trace::RunMeta paced = make_predicted_trace(model, options, replay_isolated(model, options)).meta();
  EXPECT_EQ(paced.settings.at("sim.compute_fraction_during_allreduce"), "0.5");
  EXPECT_EQ(paced.settings.count("sim.overlap_bandwidth_fraction"), 0u);
  options.compute_fraction_during_allreduce = 1;
  const trace::RunMeta plain = make_predicted_trace(model, options, replay_isolated(model, options)).meta();
  EXPECT_EQ(plain.settings.count("sim.compute_fraction_during_allreduce"), 0u);
}

// Twice the bandwidth: bucket 0 transfers B+10 → B+15, autograd does 2.5 ms of work there, so
// bucket 1 is ready at B+27.5 (alone-time 25) and done at B+32.5: 42.5 ms. Replaying the
// measured offsets instead keeps bucket 1 at B+30: 45 ms.
TEST(PacedAutograd, FasterNetworkFreesAutogradSooner) {
  EXPECT_NEAR(replayed_iteration_s(paced_trace(2), 0.5, 2e8), 0.0425, 1e-6);
  EXPECT_NEAR(replayed_iteration_s(paced_trace(2), 1, 2e8), 0.045, 1e-6);
}

// A 1-rank trace has no transfer: 25 ms of autograd alone. At 2 ranks bucket 0 transfers
// B+10 → B+20 at half pace, as in paced_trace(2): 50 ms, where the unpaced replay says 45.
TEST(PacedAutograd, MoreRanksSlowTheOnceAloneAutograd) {
  EXPECT_NEAR(replayed_iteration_s(paced_trace(1), 0.5, 1e8, 2), 0.050, 1e-6);
  EXPECT_NEAR(replayed_iteration_s(paced_trace(1), 1, 1e8, 2), 0.045, 1e-6);
}

}  // namespace
}  // namespace ddpsim::sim
