#pragma once
// Splits one worker's output stream into lines and prefixes each, e.g. "[rank 3] ".
//
// Bytes arrive from a pipe in arbitrary chunks; a line is only written once it is complete, so
// lines of different workers never interleave mid-line. A partial line is kept until its newline
// arrives, the stream ends (then it is written with a newline added), or it grows past
// max_partial bytes (then it is written as a line of its own, so a worker printing no newlines,
// such as a progress bar redrawn with '\r', cannot make the launcher buffer without bound).
#include <cstddef>
#include <string>
#include <string_view>

namespace ddpsim::launch {

class LinePrefixer {
 public:
  explicit LinePrefixer(std::string prefix, std::size_t max_partial = 64 * 1024);

  // Takes the next chunk; returns the text to write now (zero or more prefixed lines).
  std::string feed(std::string_view chunk);

  // At end of stream: the kept partial line, prefixed and newline-terminated; "" if none.
  std::string finish();

  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
  std::size_t max_partial_;
  std::string partial_;
};

}  // namespace ddpsim::launch
