// `ddp-sim timeout-curve TRACE_DIR --timeouts T1,T2,...`: failure probability and time to
// failure per process-group timeout (sim/timeout_curve.hpp), as text, CSV and JSON.
#pragma once

#include "command.hpp"

namespace ddpsim::cli {

Command add_timeout_curve_command(CLI::App& app);

}  // namespace ddpsim::cli
