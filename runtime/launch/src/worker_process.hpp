#pragma once
// Starting one worker process: fork + exec with its stdout/stderr on pipes (private to the
// launcher).
#include <sys/types.h>
#include <signal.h>

#include <string>

#include "ddpsim/launch/supervisor.hpp"

namespace ddpsim::launch::detail {

struct StartedWorker {
  pid_t pid = -1;
  int stdout_fd = -1;  // read ends, non-blocking, close-on-exec
  int stderr_fd = -1;
};

// Starts `spec` in a new process group of its own. `child_signal_mask` is the mask the worker
// starts with (the launcher's mask from before it blocked signals for signalfd). Throws
// std::runtime_error "cannot run 'PROG': REASON" when the program cannot be executed; the
// failed child has been reaped by then.
StartedWorker start_worker(const WorkerSpec& spec, const sigset_t& child_signal_mask);

}  // namespace ddpsim::launch::detail
