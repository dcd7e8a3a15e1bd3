// A one-rank trace's all-reduces cross no network: their windows are the rank's own work on the
// bucket (a comm hook's averaging pass), which a replay at any world size still does before the
// transfer (Note [local all-reduce work]).
#include <gtest/gtest.h>

#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/replay.hpp"
#include "minimal_workload.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

constexpr double kLocal = 6e-11;  // s per byte: the averaging pass ddp-train's hook makes on loopback

testing::SyntheticRun one_rank_run() {
  testing::SyntheticRun run;
  run.world_size = 1;
  run.local_seconds_per_byte = kLocal;
  run.rank_skew = 0;
  run.straggler_extra_s = 0;
  // The last bucket, all-reduced after autograd, holds the largest parameter (8 MiB), and no
  // finalize tail hides its end (Note [reducer finalize]).
  run.param_numel = {2097152, 512, 1048576, 1024, 524288, 256, 262144, 128};
  run.backward_tail_s = 0;
  return run;
}

// The pass over the last bucket: 8 MiB at 60 ps per byte, about 0.5 ms.
double last_pass_s(const WorkloadModel& model) {
  return kLocal * static_cast<double>(model.bucket_bytes.back());
}

double replayed_iteration_s(const WorkloadModel& model, const ReplayOptions& options) {
  return testing::median_iteration_s(make_predicted_trace(model, options, replay_isolated(model, options)));
}

// Every iteration but the rebuild's, at `world_size` ranks on the synthetic run's own network.
ReplayOptions options_at(const testing::SyntheticRun& run, int world_size) {
  ReplayOptions options = testing::star_options(AllreduceAlgorithm::RingAggregated, run.alpha_s, run.beta_bytes_per_s);
  options.iterations = run.iterations - 1;
  options.world_size = world_size;
  return options;
}

// The replay with the pass less the replay without it.
double pass_cost_s(const WorkloadModel& model, const ReplayOptions& options) {
  WorkloadModel without = model;
  without.local_seconds_per_byte = 0;
  return replayed_iteration_s(model, options) - replayed_iteration_s(without, options);
}

TEST(LocalAllreduceWork, IsFittedFromAOneGlooRankTracesWindowsOnly) {
  const testing::SyntheticRun run = one_rank_run();
  const WorkloadModel one = extract_workload(testing::make_synthetic_trace(run), ComputeMode::PerIteration);
  EXPECT_NEAR(one.local_seconds_per_byte, kLocal, 1e-3 * kLocal);
  // With more ranks the windows hold transfers too, and the trace's network fit takes them.
  testing::SyntheticRun two = run;
  two.world_size = 2;
  EXPECT_EQ(extract_workload(testing::make_synthetic_trace(two), ComputeMode::PerIteration).local_seconds_per_byte, 0);
  // A lone NCCL rank's window is the stream's queue, not the rank's work.
  trace::Trace nccl = testing::make_synthetic_trace(run);
  for (trace::RankTrace& rank : nccl.ranks) rank.meta.backend = "nccl";
  EXPECT_EQ(extract_workload(nccl, ComputeMode::PerIteration).local_seconds_per_byte, 0);
}

TEST(LocalAllreduceWork, AOneRankTraceIsReplayedAsItRan) {
  const testing::SyntheticRun run = one_rank_run();
  const trace::Trace trace = testing::make_synthetic_trace(run);
  const WorkloadModel model = extract_workload(trace, ComputeMode::PerIteration);
  const ReplayOptions options = options_at(run, 1);
  const double measured = testing::median_iteration_s(trace);
  EXPECT_NEAR(replayed_iteration_s(model, options), measured, 0.01 * measured);
  // Without it the pass over the last bucket, after autograd, goes missing.
  EXPECT_NEAR(pass_cost_s(model, options), last_pass_s(model), 0.05 * last_pass_s(model));
}

TEST(LocalAllreduceWork, PrecedesEachTransferAtMoreRanks) {
  // The same job recorded on 1 rank and on 2: replayed at 2 ranks on the 2-rank run's network,
  // the 1-rank trace gives the 2-rank run's iteration, its pass before each transfer.
  const testing::SyntheticRun run = one_rank_run();
  testing::SyntheticRun two = run;
  two.world_size = 2;
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::PerIteration);
  const ReplayOptions options = options_at(run, 2);
  const double measured = testing::median_iteration_s(testing::make_synthetic_trace(two));
  EXPECT_NEAR(replayed_iteration_s(model, options), measured, 0.01 * measured);
  EXPECT_NEAR(pass_cost_s(model, options), last_pass_s(model), 0.05 * last_pass_s(model));
  // Gloo's two workers (--allreduces-in-flight 2=G): the pass is the rank's, before either lane.
  ReplayOptions lanes = options;
  lanes.allreduces_in_flight = 2;
  lanes.in_flight_gain = 1;
  EXPECT_NEAR(pass_cost_s(model, lanes), last_pass_s(model), 0.05 * last_pass_s(model));
}

}  // namespace
}  // namespace ddpsim::sim
