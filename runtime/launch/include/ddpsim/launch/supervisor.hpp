#pragma once
// Starts worker processes and watches them until they all end, as torchrun does on one node.
//
// - Each worker runs in its own process group, so stopping a worker also stops what it started
//   (a shell script's `sleep`), and a Ctrl-C in the terminal reaches only the launcher (the
//   terminal's foreground group), which forwards it exactly once to every worker group. Workers
//   read stdin from /dev/null: a background process group reading the terminal would be
//   stopped by SIGTTIN. If the launcher itself is killed, the kernel kills the workers
//   (PR_SET_PDEATHSIG), so none is left orphaned.
// - Each line of a worker's stdout/stderr goes to the launcher's stdout/stderr prefixed with
//   "[rank R] " (see LinePrefixer).
// - The first worker that exits non-zero or dies by a signal fails the job: the others get
//   SIGTERM, then SIGKILL after the grace period, and one line names the culprit.
// - SIGINT/SIGTERM/SIGHUP to the launcher are forwarded to the workers (SIGKILL after the grace
//   period, or at once on a second signal).
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace ddpsim::launch {

struct WorkerSpec {
  int rank = 0;                   // names the worker in output prefixes and messages
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  // Set on top of the launcher's own environment.
  std::vector<std::pair<std::string, std::string>> env;
};

struct SupervisorOptions {
  std::chrono::milliseconds grace_period{5000};  // SIGTERM -> SIGKILL
  std::string program_name = "ddp-launch";       // prefixes the launcher's own messages
  int stdout_fd = 1;
  int stderr_fd = 2;
};

// Exit statuses of run_workers.
inline constexpr int kExitWorkerFailed = 1;
inline constexpr int kExitCannotStart = 2;  // e.g. the program does not exist
// A forwarded signal S gives 128 + S, as a shell reports a process killed by S.

// Runs the workers to completion; returns the launcher's exit status: 0 only when every worker
// exited 0. Not thread-safe: it blocks SIGCHLD/SIGINT/SIGTERM/SIGHUP while it runs.
int run_workers(const std::vector<WorkerSpec>& workers, const SupervisorOptions& options);

}  // namespace ddpsim::launch
