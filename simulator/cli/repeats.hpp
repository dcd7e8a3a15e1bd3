// --repeats DIR...: other measured runs of a trace's configuration (replay widens its interval
// by how much they differ; advise says which answers hold on every run).
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "ddpsim/sim/run_to_run.hpp"
#include "ddpsim/trace/model.hpp"

namespace ddpsim::cli {

// Reads every directory and checks it before any replay: a directory that is not a trace,
// holds a run of another configuration (trace/configuration.hpp), is the source trace itself
// or is given twice is refused as one line (UsageError) naming it and `source` ("the replayed
// trace").
std::vector<trace::Trace> read_repeats(const std::vector<std::string>& dirs, const std::string& source_dir,
                                       const trace::Trace& source, const std::string& source_name);

// --pool (needs --repeats): the trace and its --repeats as one run (trace/concatenate.hpp), so
// the answer draws from every run's iterations, not only the trace's. `description` says so for
// the subcommand; without it, the prediction's (replay, sweep). It joins --repeats' help group.
void add_pool_flag(CLI::App* command, bool& pool, CLI::Option* repeats, const std::string& description);
void add_pool_flag(CLI::App* command, bool& pool, CLI::Option* repeats);

// The run-to-run spread (run_to_run.hpp) of the replayed run's median iteration
// (`replayed_median_s`, its summary's) and of every run in `dirs` (read_repeats checks them
// against `replayed`). UsageError naming --repeats when a run, the replayed one included, has no
// complete iteration.
sim::RunToRunSpread run_to_run_of_repeats(const std::vector<std::string>& dirs, const std::string& replayed_dir,
                                          const trace::Trace& replayed, double replayed_median_s);
// The same for runs already read (read_repeats): `runs[i]` came from `dirs[i]`.
sim::RunToRunSpread run_to_run_of_repeats(const std::vector<std::string>& dirs, const std::vector<trace::Trace>& runs,
                                          double replayed_median_s);

}  // namespace ddpsim::cli
