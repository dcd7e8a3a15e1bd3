// Progress over an experiment's runs on stderr: a redrawn bar on a terminal, one plain line
// per run otherwise (logs and CI stay readable).
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace ddpsim::experiment {

class Progress {
 public:
  Progress(std::ostream& out, size_t total, bool terminal);
  void starting(const std::string& run);         // before a run starts
  void finished(const std::string& run, const std::string& result);  // after it ends
  void note(const std::string& what, const std::string& result);  // a line that is not a run
  void done();                                    // ends the bar's line

 private:
  void draw(const std::string& label);
  std::ostream& out_;
  size_t total_;
  size_t completed_ = 0;
  bool terminal_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace ddpsim::experiment
