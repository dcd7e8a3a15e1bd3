// `ddp-sim calibrate TRACE_DIR`: fit the network's latency and bandwidth to the trace's
// all-reduces (sim/calibrate.hpp).
#pragma once

#include "command.hpp"

namespace ddpsim::cli {

Command add_calibrate_command(CLI::App& app);

}  // namespace ddpsim::cli
