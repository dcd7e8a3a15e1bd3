// All-reduces slower while autograd runs (overlap_rates.cpp): the two rates are recovered from
// a trace built with them, and the replay with both reproduces the trace where one rate cannot.
#include <gtest/gtest.h>

#include <algorithm>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/io.hpp"
#include "temp_dir.hpp"
#include "trace_events.hpp"

namespace ddpsim::sim {
namespace {

constexpr std::int64_t kMs = 1000000;
constexpr double kBusySPerByte = 2e-8;  // 1 MB in 20 ms while autograd runs
constexpr double kFreeSPerByte = 1e-8;  // twice as fast after it

// Two ranks alike, iterations 0..5. Backward begins at B = t0 + 5 ms; buckets of 1, 1.5 and
// 1 MB are ready at B + 10, 40 and 60 ms (autograd done at 60). The collective goes at the busy
// rate until 60 ms, then at the free rate with both remaining all-reduces in flight (as Gloo
// runs two at once):
//   bucket 0: 10 → 30 ms (1 MB at the busy rate);
//   bucket 1: 40 → 75 ms (1 MB by 60 at the busy rate, then its last 0.5 MB ...
//   bucket 2: 60 → 75 ms  ... and this 1 MB share the free rate: 1.5 MB in 15 ms).
// The iteration ends 5 ms of optimizer after the last all-reduce: 85 ms in all.
trace::Trace contended_trace() {
  trace::Trace trace;
  const std::int64_t ready_ms[] = {10, 40, 60};
  const std::int64_t begin_ms[] = {10, 40, 60};
  const std::int64_t end_ms[] = {30, 75, 75};
  const std::int64_t bytes[] = {1000000, 1500000, 1000000};
  for (int r = 0; r < 2; ++r) {
    trace::RankTrace rank;
    rank.meta.rank = r;
    rank.meta.world_size = 2;
    for (int p = 0; p < 3; ++p) rank.meta.parameters.push_back({p, "p" + std::to_string(p), bytes[2 - p] / 4, "float32"});
    rank.meta.bucket_assignments = {{0, {{2}, {1}, {0}}}};  // reverse registration order, one each
    for (std::int64_t it = 0; it < 6; ++it) {
      const std::int64_t t0 = it * 1000 * kMs;
      const std::int64_t backward = t0 + 5 * kMs;
      trace::testing::EventLog log{rank.events, r, it};
      log.add(trace::EventType::IterationBegin, t0);
      log.add(trace::EventType::ForwardBegin, t0 + 1 * kMs);
      log.add(trace::EventType::ForwardEnd, t0 + 5 * kMs);
      log.add(trace::EventType::BackwardBegin, backward);
      for (int b = 0; b < 3; ++b) {
        log.add(trace::EventType::BucketReady, backward + ready_ms[b] * kMs, b, bytes[b]);
        log.add(trace::EventType::AllreduceBegin, backward + begin_ms[b] * kMs, b, bytes[b]);
        log.add(trace::EventType::AllreduceEnd, backward + end_ms[b] * kMs, b, bytes[b]);
      }
      log.add(trace::EventType::BackwardEnd, backward + 75 * kMs);
      log.add(trace::EventType::OptimizerBegin, backward + 75 * kMs);
      log.add(trace::EventType::OptimizerEnd, backward + 80 * kMs);
      log.add(trace::EventType::IterationEnd, backward + 80 * kMs);
    }
    trace::testing::sort_by_time(rank.events);
    trace.ranks.push_back(rank);
  }
  return trace;
}

TEST(OverlapRates, RecoversTheRateDuringAndAfterBackward) {
  const OverlapRates rates = fit_overlap_rates(contended_trace());
  ASSERT_TRUE(rates.measured());
  EXPECT_EQ(rates.busy_iterations, 5);  // iteration 0 is warm-up
  EXPECT_EQ(rates.free_iterations, 5);
  // Busy: bucket 0 alone, 1 MB in 20 ms. Free: 3.5 MB less the 2 MB that 40 ms in flight
  // before autograd ended carried, over the 15 ms after it.
  EXPECT_NEAR(rates.busy_s_per_byte, kBusySPerByte, 1e-15);
  EXPECT_NEAR(rates.free_s_per_byte, kFreeSPerByte, 1e-15);
}

TEST(OverlapRates, CalibrationTakesTheRateAfterBackwardAndTheFraction) {
  const Calibration calibration = calibrate(contended_trace(), AllreduceAlgorithm::Ring);
  EXPECT_NE(calibration.method.find("two rates"), std::string::npos) << calibration.method;
  EXPECT_NEAR(calibration.overlap_bandwidth_fraction, 0.5, 1e-9);
  // W = 2: the ring moves 2(W-1)/W = 1 times the bytes.
  EXPECT_NEAR(calibration.beta_bytes_per_s, 1 / kFreeSPerByte, 1e-3);
  EXPECT_NE(calibration_to_json(calibration).find("\"overlap_bandwidth_fraction\": 0.5"), std::string::npos);
}

TEST(OverlapRates, TraceWithoutReadyTimesKeepsOneRate) {
  trace::Trace trace = contended_trace();
  for (auto& rank : trace.ranks) {
    rank.events.erase(std::remove_if(rank.events.begin(), rank.events.end(),
                                     [](const trace::Event& e) { return e.type == trace::EventType::BucketReady; }),
                      rank.events.end());
  }
  EXPECT_FALSE(fit_overlap_rates(trace).measured());
}

double replayed_iteration_s(double fraction, double beta) {
  const WorkloadModel model = extract_workload(contended_trace(), ComputeMode::Median);
  ReplayOptions options;
  options.algorithm = AllreduceAlgorithm::RingAggregated;
  options.alpha_s = 0;
  options.beta_bytes_per_s = beta;
  options.platform.alpha_s = 0;
  options.platform.beta_bytes_per_s = beta;
  options.iterations = 3;
  options.overlap_bandwidth_fraction = fraction;
  const ReplayResult result = replay_isolated(model, options);
  EXPECT_TRUE(result.failure.empty()) << result.failure;
  return trace::testing::iteration_length_s(result.events.front(), 3);  // the last replayed (1..3)
}

TEST(OverlapRates, ReplayWithBothRatesReproducesTheTrace) {
  // One stream: bucket 0 at 10 ms takes 20 ms (busy); bucket 1 at 40 ms carries 1 MB by 60 ms
  // and its last 0.5 MB in 5 ms; bucket 2 waits until 65 ms and takes 10 ms: done at 75 ms,
  // as measured, so the iteration is 85 ms.
  EXPECT_NEAR(replayed_iteration_s(0.5, 1 / kFreeSPerByte), 0.085, 1e-6);
  // One rate over the same bytes and in-flight time (3.5 MB in 55 ms) ends the last bucket
  // at 40 + 1.5·55/3.5 = 63.57 ms, then 1 MB more: 79.29 ms, an 89.3 ms iteration.
  const double one_rate_s_per_byte = 0.055 / 3.5e6;
  EXPECT_NEAR(replayed_iteration_s(1, 1 / one_rate_s_per_byte), 0.005 + 0.04 + 2.5e6 * one_rate_s_per_byte + 0.005,
              1e-6);
}

// A 1-rank baseline has no all-reduce to fit the fraction from: a benchmark's is told with the
// benchmark's bandwidth. Told, it is used as it is; not told, a told bandwidth keeps one rate.
TEST(OverlapRates, ToldFractionGoesWithAToldBandwidth) {
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", contended_trace());
  ReplayRequest request;
  request.trace_dir = dir / "measured";
  request.compute = ComputeMode::Median;
  request.iterations = 3;
  request.bandwidth = 1 / kFreeSPerByte;
  request.latency = 0;
  EXPECT_DOUBLE_EQ(prepare_replay(request).options.overlap_bandwidth_fraction, 1.0);
  request.overlap_bandwidth_fraction = 0.5;
  const PreparedReplay told = prepare_replay(request);
  EXPECT_DOUBLE_EQ(told.options.overlap_bandwidth_fraction, 0.5);
  const ReplayResult result = replay_isolated(told.model, told.options);
  EXPECT_NEAR(trace::testing::iteration_length_s(result.events.front(), 3), 0.085, 1e-6);  // as above
}

TEST(OverlapRates, FractionOutsideZeroToOneIsRefused) {
  const WorkloadModel model = extract_workload(contended_trace(), ComputeMode::Median);
  ReplayOptions options;
  options.beta_bytes_per_s = 1e8;
  options.platform.beta_bytes_per_s = 1e8;
  for (double bad : {0.0, -0.5, 1.5}) {
    options.overlap_bandwidth_fraction = bad;
    EXPECT_THROW(check_replay_options(model, options), SimulationError) << bad;
  }
}

}  // namespace
}  // namespace ddpsim::sim
