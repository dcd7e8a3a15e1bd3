#pragma once
// Runs a real process for the launcher integration tests: captures stdout and stderr, measures
// the elapsed time, and can react to output (e.g. send a signal once the workers are ready).
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace ddpsim::launch::testing {

struct ProcessResult {
  int wait_status = 0;
  std::string out;
  std::string err;
  std::chrono::duration<double> elapsed{0};
  bool timed_out = false;  // killed by run_process after `timeout`

  bool exited() const;
  int exit_code() const;      // -1 unless exited()
  int term_signal() const;    // 0 unless killed by a signal
};

struct RunOptions {
  std::chrono::seconds timeout{30};
  // Called after each chunk of stdout with everything read so far and the child's pid.
  std::function<void(const std::string& out_so_far, pid_t pid)> on_stdout;
  // Called about every 10 ms while the child runs, with its pid (e.g. to kill it once a file
  // it writes appears).
  std::function<void(pid_t pid)> on_poll;
};

ProcessResult run_process(const std::vector<std::string>& argv, const RunOptions& options = {});

// Options that only set the timeout.
inline RunOptions within(int seconds) {
  RunOptions options;
  options.timeout = std::chrono::seconds(seconds);
  return options;
}

// Lines of `text` (without the newlines).
std::vector<std::string> lines_of(const std::string& text);

}  // namespace ddpsim::launch::testing
