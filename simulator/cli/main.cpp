// ddp-sim: replay a recorded DDP trace on a simulated platform (SimGrid), or calibrate the
// network model from it. One file per subcommand maps its flags onto the simulator library:
//
//   replay TRACE_DIR          replay_command.cpp        (the shared replay flags: replay_flags.cpp)
//   timeout-curve TRACE_DIR   timeout_curve_command.cpp
//   sweep TRACE_DIR           sweep_command.cpp
//   calibrate TRACE_DIR       calibrate_command.cpp
//   advise TRACE_DIR          advise_command.cpp
//
// Exit status: 0 success, 2 bad usage or input (one line on stderr), 1 anything else
// (including a sweep with failed points).
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <vector>

#include "advise_command.hpp"
#include "calibrate_command.hpp"
#include "command.hpp"
#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/error_reason.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/skew.hpp"
#include "replay_command.hpp"
#include "replay_flags.hpp"
#include "sweep_command.hpp"
#include "timeout_curve_command.hpp"

namespace cli = ddpsim::cli;

namespace {

// The subcommands, in --help's order.
std::vector<cli::Command> add_commands(CLI::App& app) {
  std::vector<cli::Command> commands = {cli::add_replay_command(app), cli::add_timeout_curve_command(app),
                                        cli::add_sweep_command(app), cli::add_calibrate_command(app)};
  auto advise_flags = std::make_shared<cli::AdviseFlags>();
  commands.push_back({cli::add_advise_command(app, *advise_flags), [advise_flags] { return cli::run_advise(*advise_flags); }});
  return commands;
}

// Bad input, wherever it was found, is one line and status 2; anything else is status 1. Every
// line has a reason after its colon (error_reason.hpp), out of memory and SimGrid's silences too.
int run_reporting_errors(const cli::Command& command) {
  const std::string doing = "running ddp-sim " + command.app->get_name();
  const auto report = [&doing](const std::exception& error) {
    std::cerr << "ddp-sim: " << ddpsim::trace::error_reason(error, doing) << "\n";
  };
  try {
    return command.run();
  } catch (const ddpsim::trace::TraceError& error) {
    report(error);
  } catch (const ddpsim::trace::SkewError& error) {
    report(error);
  } catch (const ddpsim::sim::WorkloadError& error) {
    report(error);
  } catch (const ddpsim::sim::CalibrationError& error) {
    report(error);
  } catch (const ddpsim::sim::RequestError& error) {
    report(error);
  } catch (const ddpsim::sim::SimulationError& error) {
    report(error);
  } catch (const cli::UsageError& error) {
    report(error);
  } catch (const std::exception& error) {
    report(error);
    return 1;
  } catch (...) {
    std::cerr << "ddp-sim: " << ddpsim::trace::unknown_error_reason(doing) << "\n";
    return 1;
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ddp-sim: replay a recorded DDP trace on a simulated platform (SimGrid 3.32)", "ddp-sim"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print the help of every subcommand and exit");  // before the subcommands
  const std::vector<cli::Command> commands = add_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    for (const cli::Command& command : commands) cli::hide_old_names(command.app);
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    for (const cli::Command& command : commands) cli::hide_old_names(command.app);
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    std::cerr << "ddp-sim: " << ddpsim::trace::error_reason(error, "reading the command line") << "\n";
    return 2;
  }
  for (const cli::Command& command : commands) {
    if (command.app->parsed()) return run_reporting_errors(command);
  }
  return 2;  // unreachable: require_subcommand(1)
}
