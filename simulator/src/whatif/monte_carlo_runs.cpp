// The Monte Carlo loop (monte_carlo_runs.hpp).
#include "ddpsim/sim/monte_carlo_runs.hpp"

#include <sstream>

#include "ddpsim/sim/report.hpp"
#include "ddpsim/trace/splitmix.hpp"
#include "ddpsim/trace/summary.hpp"

namespace ddpsim::sim {
namespace {

// Names the rank-copy stream: mixed into the run's seed, it gives a stream that shares
// nothing with the stall draws, which hash (seed, rank, iteration) from the seed itself.
constexpr std::uint64_t kRankCopyStream = 0x72616e6b2d636f70ULL;  // "rank-cop"

// The trace format's clock is int64 nanoseconds: about 292 years.
constexpr double kLongestRecordableS = 9.2e9;

// plan_for's rule but for whether the replay is a what-if: no runs asked for, one run, the
// trace's world size.
bool may_choose(const PreparedReplay& prepared, const MonteCarloPlan& plan) {
  return !plan.runs_asked && plan.runs == 1 && prepared.world_size() == prepared.model.world_size;
}

}  // namespace

RunSeeds seeds_of_run(std::uint64_t seed, int run, bool bootstrap) {
  RunSeeds seeds;
  seeds.stalls = seed + static_cast<std::uint64_t>(run);
  seeds.rank_copies = trace::splitmix64(trace::splitmix64(seeds.stalls) ^ kRankCopyStream);
  if (bootstrap && run > 0) seeds.resample = 2 * seeds.stalls + 1;
  return seeds;
}

void check_plan(const MonteCarloPlan& plan) {
  if (plan.runs < 1) throw RequestError("--runs: expected at least 1, got " + std::to_string(plan.runs));
  if (plan.bootstrap && plan.runs < 11) {
    throw RequestError("--bootstrap: expected --runs of at least 11 (1 + 10 resampled), got " +
                       std::to_string(plan.runs));
  }
}

MonteCarloPlan plan_for(const PreparedReplay& prepared, const MonteCarloPlan& plan) {
  if (!may_choose(prepared, plan)) return plan;
  return plan_for(prepared, plan, trace::summarize(prepared.measured));
}

MonteCarloPlan plan_for(const PreparedReplay& prepared, const MonteCarloPlan& plan, const trace::Summary& measured) {
  if (!may_choose(prepared, plan) ||
      whatif_changes(prepared.model, prepared.options, prepared.compute_stretch, measured).empty()) {
    return plan;
  }
  MonteCarloPlan chosen = plan;
  chosen.runs = kWhatIfRuns;
  chosen.bootstrap = true;
  return chosen;
}

std::vector<RunOutcome> run_monte_carlo(const PreparedReplay& prepared, const MonteCarloPlan& plan,
                                        ReplayResult* first_result, const std::function<void()>& on_run_done) {
  check_plan(plan);
  std::vector<RunOutcome> outcomes;
  for (int run = 0; run < plan.runs; ++run) {
    const RunSeeds seeds = seeds_of_run(plan.seed, run, plan.bootstrap);
    ReplayOptions options = prepared.options;
    options.skew.seed = seeds.stalls;
    options.rank_copy_seed = seeds.rank_copies;
    options.resample_seed = seeds.resample;
    ReplayResult result = replay_isolated_by_class(prepared.model, options);  // per class: W need not fit
    if (!(result.simulated_end_s < kLongestRecordableS)) {
      std::ostringstream message;
      message << "the predicted run lasts " << result.simulated_end_s
              << " s: expected at most 9.2e9 s (the trace's int64 nanosecond clock); check --latency, "
                 "--bandwidth, --slowdown and --delay";
      throw SimulationError(message.str());
    }
    outcomes.push_back(outcome_of(result));
    if (run == 0 && first_result != nullptr) *first_result = std::move(result);
    if (on_run_done) on_run_done();
  }
  return outcomes;
}

}  // namespace ddpsim::sim
