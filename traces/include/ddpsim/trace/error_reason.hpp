// The reason a tool prints after "TOOL: " for an exception it caught: the exception's text on
// one line, never empty and never ending in a colon. An exception without a reason of its own
// (std::bad_alloc's what() is "std::bad_alloc"; SimGrid's are sometimes empty) is named by
// what was being done when it was thrown. Every CLI's main reports through this.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "ddpsim/trace/one_line.hpp"

namespace ddpsim::trace {

// `doing`: what the tool was doing, as "replaying", "importing the profile", ...
inline std::string error_reason(const std::exception& error, const std::string& doing) {
  if (dynamic_cast<const std::bad_alloc*>(&error) != nullptr) {
    return "out of memory while " + doing + " (" + error.what() +
           "): ask for less, or raise the memory limit (ulimit -v, the job's memory)";
  }
  std::string text = error.what();
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\t')) text.pop_back();
  text = one_line(text);
  if (text.empty()) return doing + " failed with an error that gave no reason";
  if (text.back() == ':') return text + " no reason given (while " + doing + ")";
  return text;
}

// For catch (...): an exception that is not a std::exception.
inline std::string unknown_error_reason(const std::string& doing) {
  return doing + " failed with an exception that is not a std::exception (no reason given)";
}

}  // namespace ddpsim::trace
