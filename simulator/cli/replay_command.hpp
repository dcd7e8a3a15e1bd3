// `ddp-sim replay TRACE_DIR`: predict a run from a recorded trace (one what-if, N Monte Carlo
// runs), print the measured run next to the predicted one, optionally write both.
#pragma once

#include "command.hpp"

namespace ddpsim::cli {

Command add_replay_command(CLI::App& app);

}  // namespace ddpsim::cli
