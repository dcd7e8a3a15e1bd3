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
#include "ddpsim/sim/run_to_run.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/summary.hpp"
#include "progress.hpp"
#include "repeats.hpp"
#include "replay_flags.hpp"
#include "resource_check.hpp"

namespace ddpsim::cli {
namespace {

struct Flags {
  ReplayFlags replay;
  std::string out_dir;
  std::string json_file;
  std::vector<std::string> repeats;
  bool pool = false;
};

int run(const Flags& flags, bool runs_given) {
  sim::ReplayRequest request = to_request(flags.replay);
  sim::MonteCarloPlan plan = to_plan(flags.replay);
  if (flags.pool) request.pooled_runs = flags.repeats;
  if (!flags.out_dir.empty()) check_output_dir(flags.out_dir, "--out");
  if (!flags.json_file.empty()) check_output_file(flags.json_file, "--json");
  const sim::PreparedReplay prepared = sim::prepare_replay(request);
  for (const std::string& warning : prepared.warnings) std::cerr << "ddp-sim: warning: " << warning << "\n";
  const trace::Summary measured = trace::summarize(prepared.measured);
  std::optional<sim::RunToRunSpread> spread;
  if (!flags.repeats.empty()) {
    // Each run's own median, the replayed one's too: pooled, prepared.measured holds them all.
    if (flags.pool) {
      const trace::Trace replayed = trace::read_trace(request.trace_dir);
      spread = run_to_run_of_repeats(flags.repeats, request.trace_dir, replayed,
                                     trace::summarize(replayed).median_iteration_s);
    } else {
      spread = run_to_run_of_repeats(flags.repeats, request.trace_dir, prepared.measured, measured.median_iteration_s);
    }
  }
  plan.runs_asked = runs_given;
  plan = sim::plan_for(prepared, plan, measured);  // a what-if without --runs: 21 runs, for its interval
  // Before anything per rank; --out writes every rank's events, --json lists every rank's times.
  check_replay_resources(prepared, plan.runs, flags.replay.max_memory, "the replay",
                         {!flags.out_dir.empty(), !flags.json_file.empty()});

  // Run 0 is the one reported in detail.
  sim::ReplayResult result;
  std::vector<sim::RunOutcome> outcomes;
  {
    Progress progress("replay runs", plan.runs);  // its line ends before the report starts
    outcomes = sim::run_monte_carlo(prepared, plan, &result, [&progress] { progress.step(); });
  }
  const sim::IterationDistribution distribution =
      sim::summarize_runs(outcomes, sim::samples_per_iteration(prepared.model, prepared.world_size()));
  if (!flags.out_dir.empty()) {
    trace::write_trace(flags.out_dir, sim::make_predicted_trace(prepared.model, prepared.options, result));
  }

  sim::ReplayReport report;
  report.trace_dir = request.trace_dir;
  report.model = &prepared.model;
  report.options = &prepared.options;
  report.result = &result;
  report.calibration = prepared.calibration;
  report.machine_given = request.machine.has_value();
  report.compute_stretch = prepared.compute_stretch;
  report.unprofiled_iteration_s = request.unprofiled_iteration_s;
  report.unprofiled_scale = prepared.unprofiled_scale;
  report.measured = measured;
  report.predicted = sim::summarize_prediction(prepared.model, prepared.options, result);
  if (flags.pool) {
    std::cout << sim::pooled_runs_to_text(flags.repeats.size() + 1, prepared.measured.complete_iterations().size())
              << "\n";
  }
  std::cout << sim::report_to_text(report) << sim::distribution_to_text(distribution);
  std::optional<sim::MedianInterval> interval;
  if (plan.bootstrap) {
    interval = sim::median_interval({outcomes.begin() + 1, outcomes.end()});
    std::cout << sim::interval_to_text(*interval);
  }
  std::optional<sim::MedianInterval> run_to_run;
  if (spread) {
    run_to_run = interval ? sim::widened(*interval, *spread) : sim::widened(report.predicted.median_iteration_s, *spread);
    std::cout << sim::run_to_run_interval_to_text(*run_to_run, *spread);
  } else if (interval) {
    std::cout << "  (which iterations this one run recorded; another run also differs by the machine's drift: "
                 "--repeats with other runs of it widens the interval by that)\n";
  }
  for (const std::string& note : report.measured.notes) std::cout << "measured " << note << "\n";
  if (!flags.json_file.empty()) {
    nlohmann::json json = sim::report_json(report);
    json["distribution"] = sim::distribution_json(distribution);
    if (interval) {
      json["interval"] = {{"median_iteration_s", {interval->low_s, interval->high_s}},
                          {"level", interval->level},
                          {"replicates", interval->replicates}};
    }
    if (run_to_run) {
      json["run_to_run_interval"] = {{"median_iteration_s", {run_to_run->low_s, run_to_run->high_s}},
                                     {"level", spread->level},
                                     {"runs", spread->runs},
                                     {"ratios", {spread->ratio_low, spread->ratio_high}}};
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
  CLI::Option* repeats = command->add_option("--repeats", flags->repeats,
                      "Other measured runs of the replayed trace's configuration: also print the "
                      "interval widened by how much their medians differ from run to run");
  repeats->group("Runs");
  add_pool_flag(command, flags->pool, repeats);  // in --repeats' group
  command->add_option("--out", flags->out_dir, "Write the predicted run as a trace into DIR")->group("Output");
  command->add_option("--json", flags->json_file, "Write the report as JSON")->group("Output");
  return {command, [flags, command] { return run(*flags, command->count("--runs") > 0); }};
}

}  // namespace ddpsim::cli
