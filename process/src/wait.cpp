#include "ddpsim/process/wait.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <thread>

namespace ddpsim::process {

int exit_code(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

std::string signal_name(int signal_number) {
  switch (signal_number) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGSYS: return "SIGSYS";
    default: return "signal " + std::to_string(signal_number);
  }
}

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int signal_number = WTERMSIG(wait_status);
    std::string text = "died with signal " + std::to_string(signal_number) + " (" + signal_name(signal_number) + ")";
    if (WCOREDUMP(wait_status)) text += ", core dumped";
    return text;
  }
  return "ended with wait status " + std::to_string(wait_status);
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::optional<int> try_wait(pid_t pid) {
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid, &status, WNOHANG);
  } while (got < 0 && errno == EINTR);
  if (got == pid) return status;
  return std::nullopt;
}

int stop_group(pid_t leader, std::chrono::milliseconds grace) {
  ::kill(-leader, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (const auto status = try_wait(leader)) {
      ::kill(-leader, SIGKILL);  // members of the group that ignored TERM
      return *status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-leader, SIGKILL);
  return wait_for(leader);
}

Waited wait_until(pid_t leader, std::chrono::steady_clock::time_point deadline,
                  const std::function<bool()>& stop_requested) {
  while (true) {
    if (const auto status = try_wait(leader)) return {Waited::How::kExited, *status};
    if (stop_requested && stop_requested()) return {Waited::How::kStopRequested, stop_group(leader)};
    if (std::chrono::steady_clock::now() > deadline) return {Waited::How::kTimedOut, stop_group(leader)};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace ddpsim::process
