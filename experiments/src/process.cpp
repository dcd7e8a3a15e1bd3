#include "process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace ddpsim::experiment {
namespace {

volatile sig_atomic_t g_interrupted = 0;

void on_interrupt(int) { g_interrupted = 1; }

int open_for_append(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

// Terminates the child's process group: TERM first so ranks can flush their traces, KILL if
// it is still there a few seconds later.
int stop_group(pid_t pid) {
  ::kill(-pid, SIGTERM);
  int status = 0;
  for (int i = 0; i < 50; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ::kill(-pid, SIGKILL);  // stragglers of the group that ignored TERM
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return status;
}

int decode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

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
  ProcessResult result;
  const int out_fd = open_for_append(stdout_path);
  const int err_fd = stdout_path == stderr_path ? out_fd : open_for_append(stderr_path);
  if (out_fd < 0 || err_fd < 0) {
    result.launch_error = "cannot open " + (out_fd < 0 ? stdout_path : stderr_path) + ": " +
                          std::strerror(errno);
    if (out_fd >= 0) ::close(out_fd);
    if (err_fd >= 0 && err_fd != out_fd) ::close(err_fd);
    return result;
  }
  // exec failures travel back through a close-on-exec pipe: EOF means exec succeeded.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    result.launch_error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::execvp(args[0], args.data());
    const int error = errno;
    (void)!::write(report[1], &error, sizeof error);
    ::_exit(127);
  }
  ::close(report[1]);
  ::close(out_fd);
  if (err_fd != out_fd) ::close(err_fd);
  if (pid < 0) {
    ::close(report[0]);
    result.launch_error = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  ::setpgid(pid, pid);  // also here: the child may not have run yet when we kill the group

  int exec_error = 0;
  if (::read(report[0], &exec_error, sizeof exec_error) == sizeof exec_error) {
    ::close(report[0]);
    ::waitpid(pid, nullptr, 0);
    result.launch_error = argv[0] + ": " + std::strerror(exec_error);
    return result;
  }
  ::close(report[0]);

  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (g_interrupted) {
      result.interrupted = true;
      status = stop_group(pid);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      result.timed_out = true;
      status = stop_group(pid);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.exit_code = decode(status);
  return result;
}

}  // namespace ddpsim::experiment
