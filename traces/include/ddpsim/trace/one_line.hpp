// A user's text as a one-line error shows it ("FLAG: expected ..., got TEXT"): control
// characters (a line break typed into a flag value or a metadata field) become '?'. The one
// rule for the trace library's, ddp-sim's and ddp-train's errors (found by the fuzzers).
#pragma once

#include <string>

namespace ddpsim::trace {

inline std::string one_line(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return text;
}

}  // namespace ddpsim::trace
