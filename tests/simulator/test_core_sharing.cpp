// Ranks that share one machine's cores, paced as they share them (--core-sharing paced): a
// rank computes at s(W_trace) / s(k) of its measured pace, k the ranks computing at that
// instant, a rank slowed xF counting 1/F. And the resume cost after each of a slowed rank's
// injected sleeps (--sleep-resume-cost). Closed forms throughout, on 1 core (s(k) = max(1, k)).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "ddpsim/sim/monte_carlo.hpp"
#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/trace/io.hpp"
#include "minimal_workload.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"

namespace ddpsim::sim {
namespace {

constexpr double kAlpha = 50e-6;
constexpr double kBeta = 1e9;
constexpr std::int64_t kBytes = 4 << 20;
constexpr double kMs = 1e-3;

// Two ranks alike: forward 10 ms; autograd 20 ms, its two gradients ready at 10 and 20 ms,
// one bucket with the last; the optimizer 4 ms; no steps between them.
WorkloadModel two_rank_workload() {
  WorkloadModel model = testing::communication_only_workload(2, kBytes);
  model.source_meta.parameters.push_back({1, "bias", 1, "float32"});
  for (auto& rank_costs : model.costs) {
    RankIterationCosts& costs = rank_costs.at(0);
    costs.forward_s = 10 * kMs;
    costs.backward_compute_s = 20 * kMs;
    costs.grad_ready_s = {10 * kMs, 20 * kMs};
    costs.bucket_ready_s = {20 * kMs};
    costs.optimizer_s = 4 * kMs;
  }
  return model;
}

// Measured with both ranks on 1 core.
ReplayOptions paced_on_one_core() {
  ReplayOptions options = testing::star_options(AllreduceAlgorithm::RingAggregated, kAlpha, kBeta);
  options.core_slowdown = [](double ranks) { return std::max(1.0, ranks); };
  options.core_trace_ranks = 2;
  return options;
}

// When `rank` recorded its first event of `type`, seconds.
double at_s(const ReplayResult& result, int rank, trace::EventType type, int param = -1) {
  for (const trace::Event& event : result.events.at(static_cast<std::size_t>(rank))) {
    if (event.type == type && (param < 0 || event.param == param)) return static_cast<double>(event.t_ns) * 1e-9;
  }
  ADD_FAILURE() << "rank " << rank << " has no such event";
  return -1;
}

double allreduce_s() { return testing::ring_allreduce_s(2, kBytes, kAlpha, kBeta); }

double iteration_s(const WorkloadModel& model, const ReplayOptions& options) {
  const ReplayResult result = replay_isolated(model, options);
  EXPECT_TRUE(result.failure.empty()) << result.failure;
  return job_iteration_times_s(result).at(0);
}

// Ranks that compute side by side, as when measured, go at the measured pace.
TEST(CoreSharing, RanksInStepComputeAsMeasured) {
  const WorkloadModel model = two_rank_workload();
  const ReplayOptions plain = testing::star_options(AllreduceAlgorithm::RingAggregated, kAlpha, kBeta);
  EXPECT_NEAR(iteration_s(model, paced_on_one_core()), iteration_s(model, plain), 1e-9);
  EXPECT_NEAR(iteration_s(model, plain), 34 * kMs + allreduce_s(), 1e-9);
}

// Rank 1 stalls 40 ms: rank 0 has the core to itself, 2x its measured pace (forward 5 ms,
// autograd 10 ms), then waits; rank 1 then computes alone, as fast (5 + 10 ms from 40 ms). The
// optimizers run side by side: 40 + 15 ms, the all-reduce, 4 ms (uniform: 74 ms + it).
TEST(CoreSharing, APeerThatStallsLeavesItsCoreToTheOthers) {
  const WorkloadModel model = two_rank_workload();
  ReplayOptions options = paced_on_one_core();
  options.skew.delays.push_back(trace::parse_delay("1=40@0"));
  const ReplayResult result = replay_isolated(model, options);
  ASSERT_TRUE(result.failure.empty()) << result.failure;
  EXPECT_NEAR(at_s(result, 0, trace::EventType::ForwardEnd), 5 * kMs, 1e-9);
  EXPECT_NEAR(at_s(result, 0, trace::EventType::GradReady, 1), 15 * kMs, 1e-9);
  EXPECT_NEAR(at_s(result, 1, trace::EventType::ForwardEnd), 45 * kMs, 1e-9);
  EXPECT_NEAR(at_s(result, 1, trace::EventType::GradReady, 1), 55 * kMs, 1e-9);
  EXPECT_NEAR(job_iteration_times_s(result).at(0), 59 * kMs + allreduce_s(), 1e-9);
  options.core_slowdown = nullptr;  // uniform
  EXPECT_NEAR(iteration_s(model, options), 74 * kMs + allreduce_s(), 1e-9);
}

// Rank 1 slowed x3 (sleeping 2/3 of the time) counts 1/3: with rank 0 computing, 4/3 ranks
// share the core, pace 2 / (4/3) = 1.5. Rank 0's forward and autograd take 20 / 1.5 = 13.3 and
// 20 ms in all; rank 1 meanwhile does 20 ms x 1.5 / 3 = 10 ms of work: its forward ends at
// 20 ms. Alone it goes 2 / 3 (1/3 of a rank needs no more than the core): autograd 30 ms, to
// 50 ms. The optimizers: rank 0's 4 ms take 2.67 ms, rank 1 does 1.33 ms of its 4 meanwhile and
// the rest alone in 4 ms: 56.67 ms + the all-reduce.
TEST(CoreSharing, ASlowedRankCountsOneOverItsFactor) {
  const WorkloadModel model = two_rank_workload();
  ReplayOptions options = paced_on_one_core();
  options.slowdown[1] = 3.0;
  const ReplayResult result = replay_isolated(model, options);
  ASSERT_TRUE(result.failure.empty()) << result.failure;
  EXPECT_NEAR(at_s(result, 0, trace::EventType::ForwardEnd), 20 * kMs / 3, 1e-9);
  EXPECT_NEAR(at_s(result, 0, trace::EventType::GradReady, 1), 20 * kMs, 1e-9);
  EXPECT_NEAR(at_s(result, 1, trace::EventType::ForwardEnd), 20 * kMs, 1e-9);
  EXPECT_NEAR(at_s(result, 1, trace::EventType::GradReady, 0), 35 * kMs, 1e-9);
  EXPECT_NEAR(at_s(result, 1, trace::EventType::GradReady, 1), 50 * kMs, 1e-9);
  EXPECT_NEAR(job_iteration_times_s(result).at(0), (50 + 20.0 / 3) * kMs + allreduce_s(), 1e-9);
}

// A run in which rank 1 stalls 40 ms every iteration (rank 0 computes alone, then waits), read
// at the pace its ranks had (extract_workload with s) and replayed paced, gives its own
// iterations back; read as measured, the paced replay would speed the lone compute up twice.
TEST(CoreSharing, ATraceReadAtItsOwnPaceReplaysPacedAsItRan) {
  ReplayOptions options = paced_on_one_core();
  options.iterations = 4;
  options.skew.delays.push_back(trace::parse_delay("1=40"));
  const trace::Trace ran = make_predicted_trace(two_rank_workload(), options, replay_isolated(two_rank_workload(), options));
  const std::vector<double> measured = testing::iteration_times_s(ran);  // iterations 0..3
  ASSERT_EQ(measured.size(), 4u);
  options.skew.delays.clear();  // the trace's own stalls are replayed as measured
  options.iterations = 3;       // 1..3: iteration 0 is the bucket rebuild, not replayed
  const WorkloadModel paced = extract_workload(ran, ComputeMode::PerIteration, 1, options.core_slowdown);
  EXPECT_NEAR(paced.costs[0][0].forward_s, 10 * kMs, 1e-9);  // measured 5 ms, alone: 10 ms of work at x2
  const std::vector<double> again = job_iteration_times_s(replay_isolated(paced, options));
  ASSERT_EQ(again.size(), 3u);
  for (std::size_t i = 0; i < again.size(); ++i) EXPECT_NEAR(again[i], measured[i + 1], 1e-6) << i;
  const WorkloadModel as_measured = extract_workload(ran, ComputeMode::PerIteration);
  EXPECT_LT(job_iteration_times_s(replay_isolated(as_measured, options)).at(0), measured[1] - 5 * kMs);
}

// Both slowdowns of autograd at once: the peer's compute on the shared core and its own rank's
// transfers (Gloo's threads on the same cores, compute_fraction_during_allreduce 0.5). The
// workload of two_rank_workload with a bucket per gradient, so bucket 0 transfers while
// autograd goes on; rank 1 stalls 40 ms, so rank 0 computes alone at first. Read back with both
// (extract_workload with s and the fraction), the paced replay gives the run's iterations again;
// read with either alone, it does not.
TEST(CoreSharing, ATraceReadAtItsPaceAndItsTransfersReplaysAsItRan) {
  WorkloadModel model = two_rank_workload();
  model.buckets = {{0}, {1}};
  model.bucket_bytes = {kBytes, kBytes};
  for (auto& rank_costs : model.costs) rank_costs.at(0).bucket_ready_s = {10 * kMs, 20 * kMs};
  ReplayOptions options = paced_on_one_core();
  options.compute_fraction_during_allreduce = 0.5;
  options.iterations = 4;
  options.skew.delays.push_back(trace::parse_delay("1=40"));
  const trace::Trace ran = make_predicted_trace(model, options, replay_isolated(model, options));
  const std::vector<double> measured = testing::iteration_times_s(ran);
  ASSERT_EQ(measured.size(), 4u);
  options.skew.delays.clear();
  options.iterations = 3;
  const auto replayed = [&](double fraction, const std::function<double(double)>& core_slowdown) {
    return job_iteration_times_s(replay_isolated(extract_workload(ran, ComputeMode::PerIteration, fraction, core_slowdown), options));
  };
  const std::vector<double> again = replayed(0.5, options.core_slowdown);
  ASSERT_EQ(again.size(), 3u);
  for (std::size_t i = 0; i < again.size(); ++i) EXPECT_NEAR(again[i], measured[i + 1], 1e-6) << i;
  // Bucket 0's transfer beside autograd (1 ms at 1e9 B/s) is the only difference: >= 0.5 ms.
  EXPECT_GT(replayed(1, options.core_slowdown).at(0), measured[1] + 0.4 * kMs);
  EXPECT_LT(replayed(0.5, nullptr).at(0), measured[1] - 5 * kMs);
}

// ddp-train --slowdown 1=2 sleeps after rank 1's forward, after each gradient and after the
// optimizer step, and each resume costs 1 ms more compute, stretched x2 with the rest: forward
// 2 (10 + 1), gradients at 2 (10 + 1) and 2 (20 + 2) ms into autograd, the optimizer 2 (4 + 1):
// 8 ms more than without. Rank 0, not slowed, sleeps never and pays nothing.
TEST(SleepResumeCost, ASlowedRankPaysItOncePerSleepStretched) {
  const WorkloadModel model = two_rank_workload();
  ReplayOptions options = testing::star_options(AllreduceAlgorithm::RingAggregated, kAlpha, kBeta);
  options.slowdown[1] = 2.0;
  EXPECT_NEAR(iteration_s(model, options), 68 * kMs + allreduce_s(), 1e-9);
  options.sleep_resume_cost_s = 1 * kMs;
  const ReplayResult result = replay_isolated(model, options);
  ASSERT_TRUE(result.failure.empty()) << result.failure;
  EXPECT_NEAR(at_s(result, 0, trace::EventType::ForwardEnd), 10 * kMs, 1e-9);
  EXPECT_NEAR(at_s(result, 1, trace::EventType::ForwardEnd), 22 * kMs, 1e-9);
  EXPECT_NEAR(at_s(result, 1, trace::EventType::GradReady, 0), 44 * kMs, 1e-9);
  EXPECT_NEAR(at_s(result, 1, trace::EventType::GradReady, 1), 66 * kMs, 1e-9);
  // The bucket is ready with its last gradient, after that gradient's resume.
  EXPECT_NEAR(at_s(result, 1, trace::EventType::AllreduceBegin), 66 * kMs, 1e-9);
  EXPECT_NEAR(job_iteration_times_s(result).at(0), 76 * kMs + allreduce_s(), 1e-9);
}

// From a request: 4 ranks measured in step on 4 cores, replayed as 8. Paced, all 8 compute at
// once at s(4) / s(8) = 1/2 of the measured pace, and the steps between the phases take the
// uniform stretch x2: the same run as uniform sharing.
TEST(CoreSharing, PacedRequestInStepEqualsTheUniformStretch) {
  testing::SyntheticRun run;  // 4 ranks
  run.rank_skew = 0;
  run.jitter = {1.0};
  run.straggler_extra_s = 0;
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  ReplayRequest uniform;
  uniform.trace_dir = dir / "measured";
  uniform.world_size = 8;
  uniform.iterations = 4;
  uniform.cores = 4;
  ReplayRequest paced = uniform;
  paced.core_sharing = CoreSharing::Paced;
  const PreparedReplay with_uniform = prepare_replay(uniform);
  const PreparedReplay with_paced = prepare_replay(paced);
  EXPECT_DOUBLE_EQ(with_uniform.compute_stretch, 2.0);
  EXPECT_DOUBLE_EQ(with_paced.compute_stretch, 1.0);  // paced as it runs instead
  ASSERT_TRUE(static_cast<bool>(with_paced.options.core_slowdown));
  EXPECT_DOUBLE_EQ(with_paced.options.core_slowdown(8) / with_paced.options.core_slowdown(4), 2.0);
  const ReplayResult a = replay_isolated(with_uniform.model, with_uniform.options);
  const ReplayResult b = replay_isolated(with_paced.model, with_paced.options);
  EXPECT_NEAR(b.simulated_end_s, a.simulated_end_s, 1e-6);
  ReplayRequest unshared = uniform;
  unshared.cores = 0;
  const PreparedReplay with_own_cores = prepare_replay(unshared);
  EXPECT_GT(b.simulated_end_s, replay_isolated(with_own_cores.model, with_own_cores.options).simulated_end_s + 0.1);
  paced.cores = 0;
  EXPECT_THROW(prepare_replay(paced), RequestError);  // paced what? no cores given
}

}  // namespace
}  // namespace ddpsim::sim
