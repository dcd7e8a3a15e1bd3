// ddp-trace: check, summarize, export and import ddpsim traces (traces/FORMAT.md).
#include <exception>
#include <iostream>
#include <vector>

#include "commands.hpp"
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
    std::cerr << "ddp-trace: " << error.what() << " (see ddp-trace --help)\n";
    return 2;
  }
  try {
    for (const cli::Command& command : commands) {
      if (command.subcommand->parsed()) return command.run();
    }
  } catch (const ddpsim::trace::TraceError& error) {
    std::cerr << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "ddp-trace: " << error.what() << "\n";
    return 1;
  }
  return 2;
}
