#include "commands.hpp"
namespace ddpsim::trace::cli {
Command add_import_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("import", "(not yet)");
  return {sub, [] { return 2; }};
}
}  // namespace ddpsim::trace::cli
