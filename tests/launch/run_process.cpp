#include "run_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <stdexcept>

#include "ddpsim/process/spawn.hpp"
#include "ddpsim/process/wait.hpp"

namespace ddpsim::launch::testing {

bool ProcessResult::exited() const { return WIFEXITED(wait_status); }
int ProcessResult::exit_code() const { return exited() ? WEXITSTATUS(wait_status) : -1; }
int ProcessResult::term_signal() const { return WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0; }

ProcessResult run_process(const std::vector<std::string>& argv, const RunOptions& options) {
  process::Command command;
  command.argv = argv;
  command.out = process::Output::pipe();
  command.err = process::Output::pipe();
  const auto start = std::chrono::steady_clock::now();
  const process::Child child = process::spawn(command);
  const pid_t pid = child.pid;

  ProcessResult result;
  int out_fd = child.stdout_fd;
  int err_fd = child.stderr_fd;
  const auto deadline = start + options.timeout;
  while (out_fd >= 0 || err_fd >= 0) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline && !result.timed_out) {
      result.timed_out = true;
      kill(pid, SIGKILL);
    }
    // Something the killed process started may still hold the pipes: stop waiting for them.
    if (result.timed_out && now >= deadline + std::chrono::seconds(5)) break;
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    poll(fds, 2, options.on_poll ? 10 : 100);
    if (options.on_poll) options.on_poll(pid);
    for (int i = 0; i < 2; ++i) {
      int& fd = i == 0 ? out_fd : err_fd;
      if (fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buffer, static_cast<std::size_t>(n));
        if (i == 0 && options.on_stdout) options.on_stdout(result.out, pid);
      } else if (n == 0 || errno != EINTR) {
        close(fd);
        fd = -1;
      }
    }
  }
  for (const int fd : {out_fd, err_fd}) {
    if (fd >= 0) close(fd);
  }
  result.wait_status = process::wait_for(pid);
  result.elapsed = std::chrono::steady_clock::now() - start;
  return result;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

}  // namespace ddpsim::launch::testing
