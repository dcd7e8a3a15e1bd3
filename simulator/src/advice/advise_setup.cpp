// What every answer of `ddp-sim advise` shares (advise.hpp): the calibrated replay and the
// paired bootstrap.
#include <cstdio>

#include "ddpsim/sim/advise.hpp"
#include "ddpsim/sim/monte_carlo_runs.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/trace/summary.hpp"

namespace ddpsim::sim {

AdviceSetup prepare_advice(const trace::Trace& trace, const std::optional<trace::MachineProfile>& machine,
                           const std::string& machine_file, std::vector<std::string>* warnings,
                           std::optional<double> unprofiled_iteration_s) {
  AdviceSetup setup;
  // Replay's default model (per-iteration compute, the ring calibrated from the trace with its
  // rate while autograd runs, a star): the one the what-if specs validate; or the machine profile's.
  ReplayRequest request;
  request.compute = ComputeMode::PerIteration;
  request.machine = machine;
  request.machine_file = machine_file;
  request.unprofiled_iteration_s = unprofiled_iteration_s;
  PreparedReplay prepared = prepare_replay(request, trace);
  if (warnings != nullptr) *warnings = prepared.warnings;
  setup.model = std::move(prepared.model);
  setup.options = std::move(prepared.options);
  setup.calibration = std::move(prepared.calibration);
  setup.median_iteration_s = trace::summarize(trace).median_iteration_s;
  const ReplayOptions& options = setup.options;

  char line[320];
  std::snprintf(line, sizeof line, "compute per-iteration over %zu iterations; %s on a star; alpha %.3f us, beta %.4f GB/s (%s",
                setup.model.source_iterations.size(), to_string(options.algorithm),
                options.alpha_s * 1e6, options.beta_bytes_per_s / 1e9,
                setup.calibration ? ("calibrated from " + setup.calibration->fitted_to).c_str()
                                  : "no all-reduce to calibrate from");
  setup.model_description = line;
  if (setup.calibration) {
    std::snprintf(line, sizeof line, ", fit rel. RMS %.1f%%", 100 * setup.calibration->fit.relative_rms);
    setup.model_description += line;
  }
  if (options.overlap_bandwidth_fraction != 1) {
    std::snprintf(line, sizeof line, "; x%.3g of it while autograd runs", options.overlap_bandwidth_fraction);
    setup.model_description += line;
  }
  if (options.allreduces_in_flight == 2) {
    std::snprintf(line, sizeof line, "; two all-reduces in flight at once, x%.3g of one's rate together", options.in_flight_gain);
    setup.model_description += line;
  }
  setup.model_description += ")";
  return setup;
}

std::vector<RunOutcome> bootstrap_replays(const WorkloadModel& model, const ReplayOptions& options, int runs,
                                          std::uint64_t seed) {
  std::vector<RunOutcome> outcomes;
  for (int run = 0; run < runs; ++run) {
    ReplayOptions run_options = options;
    // The seeds `ddp-sim replay --bootstrap` gives its runs.
    const RunSeeds seeds = seeds_of_run(seed, run, /*bootstrap=*/true);
    run_options.skew.seed = seeds.stalls;
    run_options.rank_copy_seed = seeds.rank_copies;
    run_options.resample_seed = seeds.resample;
    outcomes.push_back(outcome_of(replay_isolated_by_class(model, run_options)));
  }
  return outcomes;
}

Interval interval_of(const std::vector<double>& replicates, double level) {
  return {percentile_of(replicates, (1 - level) / 2), percentile_of(replicates, 1 - (1 - level) / 2)};
}

}  // namespace ddpsim::sim
