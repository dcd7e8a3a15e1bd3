// What every `ddp-sim` subcommand file shares: how it registers, how it reports bad usage,
// and how it writes its output files.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <string>

namespace ddpsim::cli {

// A subcommand as main.cpp sees it: its CLI11 app (parsed or not) and what runs it. Each
// subcommand file keeps its flags alive in the closure, so main only registers and dispatches.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// An input or usage error found by the CLI itself: printed as one line, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Before any work: a path the command will write must be a writable file or creatable in an
// existing writable directory; a directory there is refused by name. Creates nothing, so a
// command that fails later leaves nothing partial behind.
void check_output_file(const std::string& path, const std::string& flag);
// The same for a directory the command will create or fill (replay --out).
void check_output_dir(const std::string& path, const std::string& flag);

// Writes `text` as the whole file; UsageError naming the flag when it cannot.
void write_output_file(const std::string& path, const std::string& text, const std::string& flag);

}  // namespace ddpsim::cli
