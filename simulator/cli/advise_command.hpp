// `ddp-sim advise TRACE_DIR`: the flags of the advice subcommand, mapped onto advise.hpp.
#pragma once

#include <CLI/CLI.hpp>

#include "command.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::cli {

struct AdviseFlags {
  std::string trace_dir;
  std::string json_file;
  std::string machine;                 // a ddp-machine-profile file (empty: fit the trace)
  std::optional<double> unprofiled_iteration_ms;  // a profiled trace's job without the profiler
  std::vector<double> bucket_caps_mb;  // empty: the library's default search
  int runs = 21;                       // 1 in order + 20 bootstrap replicates
  std::uint64_t seed = 0;
  double epsilon = 0.01;
  double iterations_per_day = 0;       // 0: from the trace's median iteration
  std::vector<std::string> stall_dist; // RANK|all=DIST (replay's --delay-dist syntax); empty: observed
  std::vector<std::string> repeats;    // other runs of the trace's configuration, advised alike
  bool pool = false;                   // advise the trace and its repeats as one run
  std::optional<double> max_memory;    // --max-memory, bytes (resource_check.hpp)
};

CLI::App* add_advise_command(CLI::App& app, AdviseFlags& flags);

// Prints the advice; a bad flag or an unusable trace is one line on stderr and status 2.
int run_advise(const AdviseFlags& flags);

}  // namespace ddpsim::cli
