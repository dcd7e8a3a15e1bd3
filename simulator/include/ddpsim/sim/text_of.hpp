// How the simulator writes a number into a one-line error ("--flag: expected ..., got TEXT"):
// the stream's default, 6 significant digits (1e+20, nan, inf), as a reader types it.
// One home for the error messages of prepared_replay.cpp, sweep_grid.cpp, calibration_json.cpp
// and ddp-sim advise.
#pragma once

#include <sstream>
#include <string>

namespace ddpsim::sim {

inline std::string text_of(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

}  // namespace ddpsim::sim
