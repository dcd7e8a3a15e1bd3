// ddp-trace: check, summarize, export and import ddpsim traces (traces/FORMAT.md).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "preflight.hpp"
#include "ddpsim/trace/error_reason.hpp"
#include "ddpsim/trace/io.hpp"

int main(int argc, char** argv) {
  namespace cli = ddpsim::trace::cli;
  CLI::App app{"ddp-trace: check, summarize, export and import ddpsim traces", "ddp-trace"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print the help of every subcommand and exit");  // before the subcommands
  const std::vector<cli::Command> commands = {
      cli::add_validate_command(app),
      cli::add_summary_command(app),
      cli::add_export_command(app),
      cli::add_import_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help
    std::cerr << "ddp-trace: " << ddpsim::trace::error_reason(error, "reading the command line") << " (see ddp-trace --help)\n";
    return 2;
  }
  std::string doing = "running ddp-trace";
  try {
    for (const cli::Command& command : commands) {
      if (!command.subcommand->parsed()) continue;
      doing += " " + command.subcommand->get_name();
      return command.run();
    }
  } catch (const ddpsim::trace::TraceError& error) {
    std::cerr << ddpsim::trace::error_reason(error, doing) << "\n";
    return 2;
  } catch (const cli::UsageError& error) {
    std::cerr << "ddp-trace: " << ddpsim::trace::error_reason(error, doing) << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "ddp-trace: " << ddpsim::trace::error_reason(error, doing) << "\n";
    return 1;
  } catch (...) {
    std::cerr << "ddp-trace: " << ddpsim::trace::unknown_error_reason(doing) << "\n";
    return 1;
  }
  return 2;
}
