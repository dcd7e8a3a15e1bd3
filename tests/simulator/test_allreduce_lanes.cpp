// Two all-reduces at once (ReplayOptions::allreduces_in_flight, Gloo's two worker threads): they
// share one rate, G times one's when two are in flight, re-evaluated whenever one starts or
// ends or autograd stops; a calibration's rate, counted over the time any was in flight,
// becomes one all-reduce's. Closed forms throughout: 1 MB buckets at 1e8 B/s on a 2-rank ring,
// 10 ms each alone.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/io.hpp"
#include "temp_dir.hpp"
#include "trace_events.hpp"

namespace ddpsim::sim {
namespace {

constexpr std::int64_t kMs = 1000000;
constexpr std::int64_t kBucketBytes = 1000000;
constexpr double kBeta = 1e8;

// Two ranks alike, iterations 0..5: backward begins at B = t0 + 5 ms, bucket b is ready at
// B + ready_ms[b] (the last one when autograd ends) and its all-reduce ends at B + end_ms[b];
// the optimizer takes 5 ms after the last.
trace::Trace lanes_trace(const std::vector<std::int64_t>& ready_ms, const std::vector<std::int64_t>& end_ms) {
  trace::Trace trace;
  const int buckets = static_cast<int>(ready_ms.size());
  std::int64_t last_end_ms = 0;
  for (std::int64_t end : end_ms) last_end_ms = std::max(last_end_ms, end);
  for (int r = 0; r < 2; ++r) {
    trace::RankTrace rank;
    rank.meta.rank = r;
    rank.meta.world_size = 2;
    std::vector<std::vector<int>> assignment;
    for (int p = 0; p < buckets; ++p) {
      rank.meta.parameters.push_back({p, "p" + std::to_string(p), kBucketBytes / 4, "float32"});
      assignment.push_back({buckets - 1 - p});  // bucket b holds the parameters in reverse, as DDP's
    }
    rank.meta.bucket_assignments = {{0, assignment}};
    for (std::int64_t it = 0; it < 6; ++it) {
      const std::int64_t t0 = it * 1000 * kMs;
      const std::int64_t backward = t0 + 5 * kMs;
      trace::testing::EventLog log{rank.events, r, it};
      log.add(trace::EventType::IterationBegin, t0);
      log.add(trace::EventType::ForwardBegin, t0);
      log.add(trace::EventType::ForwardEnd, backward);
      log.add(trace::EventType::BackwardBegin, backward);
      for (int b = 0; b < buckets; ++b) {
        log.add(trace::EventType::BucketReady, backward + ready_ms[b] * kMs, b, kBucketBytes);
        log.add(trace::EventType::AllreduceBegin, backward + ready_ms[b] * kMs, b, kBucketBytes);
        log.add(trace::EventType::AllreduceEnd, backward + end_ms[b] * kMs, b, kBucketBytes);
      }
      const std::int64_t backward_end = backward + last_end_ms * kMs;
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

ReplayOptions lane_options(int lanes, double gain, double busy_fraction = 1) {
  ReplayOptions options;
  options.algorithm = AllreduceAlgorithm::RingAggregated;
  options.beta_bytes_per_s = kBeta;
  options.platform.beta_bytes_per_s = kBeta;
  options.iterations = 3;
  options.allreduces_in_flight = lanes;
  options.in_flight_gain = gain;
  options.overlap_bandwidth_fraction = busy_fraction;
  return options;
}

// The last replayed iteration's all-reduce ends, ms after its backward began, by bucket.
std::map<int, double> replayed_ends_ms(const trace::Trace& trace, const ReplayOptions& options) {
  const WorkloadModel model = extract_workload(trace, ComputeMode::Median);
  const ReplayResult result = replay_isolated(model, options);
  EXPECT_TRUE(result.failure.empty()) << result.failure;
  std::int64_t last = 0;
  for (const trace::Event& event : result.events.front()) last = std::max(last, event.iteration);
  std::int64_t backward_ns = 0;
  std::map<int, double> ends;
  for (const trace::Event& event : result.events.front()) {
    if (event.iteration != last) continue;
    if (event.type == trace::EventType::BackwardBegin) backward_ns = event.t_ns;
    if (event.type == trace::EventType::AllreduceEnd) ends[event.bucket] = static_cast<double>(event.t_ns);
  }
  for (auto& [bucket, end] : ends) end = (end - static_cast<double>(backward_ns)) / 1e6;
  return ends;
}

TEST(AllreduceLanes, TwoReadyTogetherShareTheGainedRate) {
  const trace::Trace trace = lanes_trace({10, 10}, {20, 30});
  // One stream: 10 → 20, then 20 → 30.
  auto ends = replayed_ends_ms(trace, lane_options(1, 1));
  EXPECT_NEAR(ends[0], 20, 1e-6);
  EXPECT_NEAR(ends[1], 30, 1e-6);
  // Two at once at 1.5x one's rate together: 20 ms of work at 1.5 per ms ends both at 10 + 13.33.
  ends = replayed_ends_ms(trace, lane_options(2, 1.5));
  EXPECT_NEAR(ends[0], 10 + 20 / 1.5, 1e-6);
  EXPECT_NEAR(ends[1], 10 + 20 / 1.5, 1e-6);
}

TEST(AllreduceLanes, ALaterBucketSlowsTheOneInFlightFromWhenItStarts) {
  const trace::Trace trace = lanes_trace({10, 15}, {25, 30});
  // Gain 1: bucket 0 alone does 5 ms of work by 15, then each goes at half: bucket 0's other 5 ms
  // end at 25; bucket 1 did 5 ms by then and ends its last 5 alone at 30.
  auto ends = replayed_ends_ms(trace, lane_options(2, 1));
  EXPECT_NEAR(ends[0], 25, 1e-6);
  EXPECT_NEAR(ends[1], 30, 1e-6);
}

TEST(AllreduceLanes, AThirdBucketWaitsForALane) {
  const trace::Trace trace = lanes_trace({10, 10, 10}, {30, 30, 40});
  // Buckets 0 and 1 share the rate (gain 1) to 30; bucket 2 then runs alone to 40.
  auto ends = replayed_ends_ms(trace, lane_options(2, 1));
  EXPECT_NEAR(ends[0], 30, 1e-6);
  EXPECT_NEAR(ends[1], 30, 1e-6);
  EXPECT_NEAR(ends[2], 40, 1e-6);
}

TEST(AllreduceLanes, TheRateWhileAutogradRunsAppliesUntilItEnds) {
  const trace::Trace trace = lanes_trace({10, 20}, {30, 35});
  // At half the rate while autograd runs (to 20): bucket 0 does 5 ms of work by 20; then both
  // at half each (gain 1): bucket 0's other 5 ms end at 30; bucket 1, 5 ms done, ends alone at 35.
  auto ends = replayed_ends_ms(trace, lane_options(2, 1, 0.5));
  EXPECT_NEAR(ends[0], 30, 1e-6);
  EXPECT_NEAR(ends[1], 35, 1e-6);
}

// A run recorded with two at once at gain 1.5 and half the rate during backward: calibrated,
// its rates count bytes over the time any was in flight; turned into one all-reduce's with
// the gain, they are the ones it was made with, and the replay reproduces it.
TEST(AllreduceLanes, CalibrationTurnsTheInFlightRateIntoOnesRate) {
  const trace::Trace recipe = lanes_trace({10, 30, 30}, {0, 0, 0});  // ready times only
  const WorkloadModel model = extract_workload(recipe, ComputeMode::Median);
  ReplayOptions made = lane_options(2, 1.5, 0.5);
  made.iterations = 6;
  const ReplayResult run = replay_isolated(model, made);
  ASSERT_TRUE(run.failure.empty()) << run.failure;
  const trace::Trace measured = make_predicted_trace(model, made, run);

  const Calibration calibration = calibrate(measured, AllreduceAlgorithm::RingAggregated);
  EXPECT_NEAR(calibration.two_in_flight_busy, 0, 1e-6);  // bucket 0 alone during backward
  EXPECT_GT(calibration.two_in_flight_free, 0.5);
  const auto [beta, fraction] = single_allreduce_rates(calibration, 1.5);
  EXPECT_NEAR(beta / kBeta, 1, 1e-3);
  EXPECT_NEAR(fraction, 0.5, 1e-3);
  // Without the gain the in-flight rate is faster than one's: gain 1 leaves it as measured.
  EXPECT_GT(single_allreduce_rates(calibration, 1.0).first, 1.1 * kBeta);

  test_support::TempDir dir;
  trace::write_trace(dir / "measured", measured);
  ReplayRequest request;
  request.trace_dir = dir / "measured";
  request.compute = ComputeMode::Median;
  request.iterations = 3;
  request.in_flight_gain = 1.5;
  const PreparedReplay prepared = prepare_replay(request);
  EXPECT_EQ(prepared.options.allreduces_in_flight, 2);
  const ReplayResult replayed = replay_isolated(prepared.model, prepared.options);
  ASSERT_TRUE(replayed.failure.empty()) << replayed.failure;
  EXPECT_NEAR(trace::testing::iteration_length_s(replayed.events.front(), 3),
              trace::testing::iteration_length_s(run.events.front(), 3), 1e-5);
}

TEST(AllreduceLanes, APeerThatNeverJoinsTimesOut) {
  const trace::Trace trace = lanes_trace({10, 10}, {20, 30});
  const WorkloadModel model = extract_workload(trace, ComputeMode::Median);
  ReplayOptions options = lane_options(2, 1.2);
  options.timeout_s = 0.05;
  options.skew.delays.push_back({1, 200.0, -1});  // rank 1 stalls 200 ms every iteration
  const ReplayResult result = replay_isolated(model, options);
  EXPECT_NE(result.failure.find("timeout"), std::string::npos) << result.failure;
}

TEST(AllreduceLanes, OptionsOutsideTheModelAreRefused) {
  const WorkloadModel model = extract_workload(lanes_trace({10, 10}, {20, 30}), ComputeMode::Median);
  ReplayOptions options = lane_options(2, 2.5);
  EXPECT_THROW(check_replay_options(model, options), SimulationError);
  options = lane_options(3, 1.2);
  EXPECT_THROW(check_replay_options(model, options), SimulationError);
  options = lane_options(2, 1.2);
  options.algorithm = AllreduceAlgorithm::Ring;
  EXPECT_THROW(check_replay_options(model, options), SimulationError);
  options = lane_options(2, 1.2);
  options.simgrid_config = {"network/model:LV08"};
  EXPECT_THROW(check_replay_options(model, options), SimulationError);
  EXPECT_NO_THROW(check_replay_options(model, lane_options(2, 1.2)));
  EXPECT_DOUBLE_EQ(parse_allreduces_in_flight("2=1.12"), 1.12);
  for (const char* bad : {"2", "2=", "3=1.1", "2=x", "2=0", "2=2.5", "=1.1"}) {
    EXPECT_THROW(parse_allreduces_in_flight(bad), RequestError) << bad;
  }
}

}  // namespace
}  // namespace ddpsim::sim
