// `ddp-sim timeout-curve` (timeout_curve_command.hpp): flags in, sim::timeout_curve out.
#include "timeout_curve_command.hpp"

#include <iostream>
#include <utility>
#include <memory>

#include "ddpsim/sim/timeout_curve.hpp"
#include "numeric_flags.hpp"
#include "progress.hpp"
#include "replay_flags.hpp"
#include "resource_check.hpp"

namespace ddpsim::cli {
namespace {

struct Flags {
  ReplayFlags replay;
  std::vector<double> timeouts_s;
  double epsilon = 0.01;
  std::string csv_file;
  std::string json_file;
};

// Drawn stalls make P(fail) a frequency: without --runs, this many draws a timeout. Without drawn
// stalls every run replays the same, and one run is the answer.
constexpr int kRunsWithDrawnStalls = 100;

int run(const Flags& flags, bool runs_given) {
  sim::check_timeout_curve(flags.timeouts_s, flags.epsilon);
  const sim::ReplayRequest request = to_request(flags.replay);
  sim::MonteCarloPlan plan = to_plan(flags.replay);
  if (!runs_given && !request.skew.distributions.empty()) plan.runs = kRunsWithDrawnStalls;
  if (!flags.csv_file.empty()) check_output_file(flags.csv_file, "--csv");
  if (!flags.json_file.empty()) check_output_file(flags.json_file, "--json");
  sim::PreparedReplay prepared = sim::prepare_replay(request);
  for (const std::string& warning : prepared.warnings) std::cerr << "ddp-sim: warning: " << warning << "\n";
  check_replay_resources(prepared, static_cast<int>(flags.timeouts_s.size()) * plan.runs, flags.replay.max_memory,
                         "the timeout curve's replay");
  sim::TimeoutCurve curve;
  {
    Progress progress("timeout curve runs", static_cast<long>(flags.timeouts_s.size()) * plan.runs);
    curve = sim::timeout_curve(std::move(prepared), flags.timeouts_s, plan, flags.epsilon, [&progress] { progress.step(); });
  }
  std::cout << sim::timeout_curve_to_text(curve);
  if (!flags.csv_file.empty()) write_output_file(flags.csv_file, sim::timeout_curve_to_csv(curve), "--csv");
  if (!flags.json_file.empty()) write_output_file(flags.json_file, sim::timeout_curve_to_json(curve) + "\n", "--json");
  return 0;
}

}  // namespace

Command add_timeout_curve_command(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  CLI::App* command = app.add_subcommand(
      "timeout-curve", "Failure probability and time to failure per process-group timeout (Monte Carlo)");
  // The curve's own flags first; the replay flags set what every timeout's runs share.
  const std::string curve = "Timeout curve";
  command->add_option("--timeouts", flags->timeouts_s, "Timeouts to try, seconds: T1,T2,...")
      ->required()
      ->delimiter(',')
      ->check(positive_number())
      ->group(curve);
  command->add_option("--epsilon", flags->epsilon, "Report the smallest timeout with P(fail) <= E (default 0.01)")
      ->check(finite_number(0, 1, false, "a probability in [0, 1]"))
      ->group(curve);
  add_replay_options(command, flags->replay);
  command->add_option("--csv", flags->csv_file, "Write one row per timeout as CSV")->group("Output");
  command->add_option("--json", flags->json_file, "Write the curve as JSON")->group("Output");
  return {command, [flags, command] { return run(*flags, command->count("--runs") > 0); }};
}

}  // namespace ddpsim::cli
