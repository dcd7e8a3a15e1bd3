// Running one child command with its output in files and a wall-clock limit.
#pragma once

#include <string>
#include <vector>

namespace ddpsim::experiment {

struct ProcessResult {
  int exit_code = -1;      // the child's status; 128+N when killed by signal N
  bool timed_out = false;  // we killed it after the limit
  bool interrupted = false;  // we killed it because the runner got SIGINT/SIGTERM
  std::string launch_error;  // non-empty when it could not start (e.g. "no such file")
  bool ok() const { return launch_error.empty() && !timed_out && !interrupted && exit_code == 0; }
};

// Runs argv[0] (a path, or a name looked up in PATH) in its own process group, with stdout to
// `stdout_path` and stderr to `stderr_path` (the same path for both is fine; they are appended
// to). The whole group is killed after `timeout_s`: ddp-launch's workers go with it.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdout_path,
                          const std::string& stderr_path, double timeout_s);

// Installs SIGINT/SIGTERM handlers that make run_process kill its child and return
// `interrupted`, so Ctrl-C never leaves training processes behind.
void install_interrupt_handlers();
bool interrupt_requested();

// The whole of a text file; "" when it cannot be read.
std::string read_file(const std::string& path);
// Why a child failed, in one line: its launch error, the time limit (with its log), or its exit
// status and the last non-empty line of `log` (usually the tool's one-line error).
std::string describe_failure(const ProcessResult& result, const std::string& log);

}  // namespace ddpsim::experiment
