// How ddp-trace's subcommands plug into main.cpp: each one lives in its own file and exposes
// a single add_*_command() that declares its options on a CLI11 subcommand and returns the
// function to run when the user picks it.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace ddpsim::trace::cli {

struct Command {
  CLI::App* subcommand = nullptr;
  std::function<int()> run;  // exit status; may throw TraceError (main prints it, exits 2)
};

Command add_validate_command(CLI::App& app);
Command add_summary_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_import_command(CLI::App& app);

}  // namespace ddpsim::trace::cli
