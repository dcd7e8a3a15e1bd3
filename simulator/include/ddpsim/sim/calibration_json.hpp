// Reading back the calibration JSON that calibration_to_json writes (`ddp-sim calibrate
// --json FILE`), so `ddp-sim replay --calibration FILE` reuses a fit instead of fitting again.
#pragma once

#include <string>

#include "ddpsim/sim/calibrate.hpp"

namespace ddpsim::sim {

// The inverse of calibration_to_json: every field it writes but "warnings" (derived again by
// calibration_warnings). Doubles round-trip exactly (nlohmann::json prints the shortest text
// that reads back to the same double), so a replay from the file predicts what a replay that
// fits again predicts. Throws CalibrationError, one line naming `source`, on text that is not
// such a calibration.
Calibration calibration_from_json(const std::string& json_text, const std::string& source);

// Reads and parses the file at `path` (CalibrationError naming it when unreadable).
Calibration read_calibration(const std::string& path);

}  // namespace ddpsim::sim
