// How the simulator writes a number into a one-line error ("--flag: expected ..., got TEXT"):
// the stream's default, 6 significant digits (1e+20, nan, inf), as a reader types it; and a
// user's text, kept on one line.
// One home for the error messages of prepared_replay.cpp, sweep_grid.cpp, calibration_json.cpp
// and ddp-sim advise.
#pragma once

#include <sstream>
#include <string>

#include "ddpsim/trace/one_line.hpp"

namespace ddpsim::sim {

inline std::string text_of(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// A user's text as typed, but with control characters (a line break in a quoted flag value)
// as '?', so the error stays one line.
inline std::string text_of(const std::string& value) { return trace::one_line(value); }

}  // namespace ddpsim::sim
