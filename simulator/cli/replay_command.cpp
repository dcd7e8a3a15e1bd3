// `ddp-sim replay` (replay_command.hpp): flags in, prepare_replay + run_monte_carlo, report out.
// A what-if at the measured world size replays kWhatIfRuns times unless --runs says otherwise.
#include "replay_command.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "ddpsim/sim/json_values.hpp"
#include "ddpsim/sim/monte_carlo_runs.hpp"
#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/report.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/summary.hpp"
#include "progress.hpp"
#include "replay_flags.hpp"

namespace ddpsim::cli {
namespace {

struct Flags {
  ReplayFlags replay;
  std::string out_dir;
  std::string json_file;
};

// A what-if at the measured world size without --runs gets this many runs, 2..N resampling the
// measured iterations, so that it prints its median with a 90 % interval (issue 16). Cheap there
// (each run replays as many ranks as were measured); a scale-out asks for it with --runs.
constexpr int kWhatIfRuns = 21;

// One Monte Carlo replay and its report (the report points into it).
struct Replayed {
  std::vector<sim::RunOutcome> outcomes;
  sim::ReplayResult result;
  trace::Trace predicted;
  sim::ReplayReport report;
};

void replay(const sim::PreparedReplay& prepared, const sim::MonteCarloPlan& plan, const std::string& trace_dir,
            Replayed& out) {
  {
    Progress progress("replay runs", plan.runs);  // its line ends before the report starts
    out.outcomes = sim::run_monte_carlo(prepared, plan, &out.result, [&progress] { progress.step(); });
  }
  out.predicted = sim::make_predicted_trace(prepared.model, prepared.options, out.result);
  out.report = sim::ReplayReport{};
  out.report.trace_dir = trace_dir;
  out.report.model = &prepared.model;
  out.report.options = &prepared.options;
  out.report.result = &out.result;
  out.report.calibration = prepared.calibration;
  out.report.compute_stretch = prepared.compute_stretch;
  out.report.measured = trace::summarize(prepared.measured);
  out.report.predicted = trace::summarize(out.predicted);
}

int run(const Flags& flags, bool runs_given) {
  const sim::ReplayRequest request = to_request(flags.replay);
  sim::MonteCarloPlan plan = to_plan(flags.replay);
  if (!flags.out_dir.empty()) check_output_dir(flags.out_dir, "--out");
  if (!flags.json_file.empty()) check_output_file(flags.json_file, "--json");
  const sim::PreparedReplay prepared = sim::prepare_replay(request);

  // Run 0 is the one reported in detail; it is the same in a longer plan (same seed, the
  // measured iterations in order).
  Replayed replayed;
  replay(prepared, plan, request.trace_dir, replayed);
  if (!runs_given && plan.runs == 1 && prepared.world_size() == prepared.model.world_size &&
      !sim::whatif_changes(replayed.report).empty()) {
    plan.runs = kWhatIfRuns;
    plan.bootstrap = true;
    replay(prepared, plan, request.trace_dir, replayed);
  }
  if (!flags.out_dir.empty()) trace::write_trace(flags.out_dir, replayed.predicted);
  const sim::IterationDistribution distribution = sim::summarize_runs(
      replayed.outcomes, sim::samples_per_iteration(prepared.model, prepared.world_size()));
  std::cout << sim::report_to_text(replayed.report) << sim::distribution_to_text(distribution);
  std::optional<sim::MedianInterval> interval;
  if (plan.bootstrap) {
    interval = sim::median_interval({replayed.outcomes.begin() + 1, replayed.outcomes.end()});
    std::cout << sim::interval_to_text(*interval);
  }
  for (const std::string& note : replayed.report.measured.notes) std::cout << "measured " << note << "\n";
  if (!flags.json_file.empty()) {
    nlohmann::json json = sim::report_json(replayed.report);
    json["distribution"] = sim::distribution_json(distribution);
    if (interval) {
      json["interval"] = {{"median_iteration_s", {interval->low_s, interval->high_s}},
                          {"level", interval->level},
                          {"replicates", interval->replicates}};
    }
    write_output_file(flags.json_file, json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "--json");
  }
  return 0;
}

}  // namespace

Command add_replay_command(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  CLI::App* command = app.add_subcommand("replay", "Predict a run from a recorded trace");
  add_replay_options(command, flags->replay);
  command->add_option("--out", flags->out_dir, "Write the predicted run as a trace into DIR");
  command->add_option("--json", flags->json_file, "Write the report as JSON");
  return {command, [flags, command] { return run(*flags, command->count("--runs") > 0); }};
}

}  // namespace ddpsim::cli
