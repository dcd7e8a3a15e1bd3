// --max-memory, and the check every replaying subcommand makes before its first replay: the
// replay's estimated memory (resource_estimate.hpp) against what this process may use
// (memory_limit.hpp), refused in one line when it does not fit; a replay estimated to take
// long is said so before it starts.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/resource_estimate.hpp"

namespace ddpsim::cli {

// --max-memory SIZE (2G, 512M, ...) into `bytes`, in the Runs group.
void add_max_memory_option(CLI::App* command, std::optional<double>& bytes);

// sim::RequestError naming the estimate and the limit when `estimate`, `processes` of it at
// once (a sweep's --jobs), does not fit; `what` names it in the message.
void check_resources(const sim::ResourceEstimate& estimate, std::optional<double> max_memory, const std::string& what,
                     int processes = 1);
// The same for `runs` runs of `prepared`, keeping `outputs` of every rank.
void check_replay_resources(const sim::PreparedReplay& prepared, int runs, std::optional<double> max_memory,
                            const std::string& what, sim::RankOutputs outputs = {});

}  // namespace ddpsim::cli
