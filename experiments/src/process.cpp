#include "process.hpp"

#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "ddpsim/process/spawn.hpp"
#include "ddpsim/process/wait.hpp"

namespace ddpsim::experiment {
namespace {

volatile sig_atomic_t g_interrupted = 0;

void on_interrupt(int) { g_interrupted = 1; }

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

bool interrupt_requested() { return g_interrupted != 0; }

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdout_path,
                          const std::string& stderr_path, double timeout_s) {
  process::Command command;
  command.argv = argv;
  command.out = process::Output::append_to(stdout_path);
  command.err = process::Output::append_to(stderr_path);
  command.own_process_group = true;  // a timeout or Ctrl-C stops ddp-launch's workers with it

  ProcessResult result;
  process::Child child;
  try {
    child = process::spawn(command);
  } catch (const process::SpawnError& error) {
    // "cannot run 'PROG': REASON" / "cannot open FILE: REASON": the job's row says why.
    result.launch_error = error.what();
    return result;
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  const process::Waited waited = process::wait_until(child.pid, deadline, interrupt_requested);
  result.timed_out = waited.how == process::Waited::How::kTimedOut;
  result.interrupted = waited.how == process::Waited::How::kStopRequested;
  result.exit_code = process::exit_code(waited.wait_status);
  return result;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The last non-empty line of a log: usually the tool's one-line error.
std::string last_line(const std::string& path) {
  std::istringstream in(read_file(path));
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last.empty() ? "(no output; see " + path + ")" : last;
}

std::string describe_failure(const ProcessResult& result, const std::string& log) {
  if (!result.launch_error.empty()) return result.launch_error;
  if (result.timed_out) return "killed after the time limit; see " + log;
  return "exit " + std::to_string(result.exit_code) + ": " + last_line(log);
}

}  // namespace ddpsim::experiment
