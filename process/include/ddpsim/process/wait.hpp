// Waiting for a child and stopping it, and what its wait status means.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace ddpsim::process {

// The child's exit status, or 128 + N when signal N ended it (the shell's convention).
int exit_code(int wait_status);

// A wait status in words: "exited with status 3", "died with signal 9 (SIGKILL)".
std::string describe_wait_status(int wait_status);

// "SIGTERM", "SIGKILL", ... or "signal N".
std::string signal_name(int signal_number);

// Blocks until `pid` ends (retrying on EINTR); returns its wait status.
int wait_for(pid_t pid);

// The wait status if `pid` has ended, without blocking.
std::optional<int> try_wait(pid_t pid);

// Stops the process group `leader` leads: SIGTERM first, so ranks can flush their traces,
// then SIGKILL after `grace` if the leader is still there (and in any case to the group's
// members that ignored SIGTERM). Returns the leader's wait status.
int stop_group(pid_t leader, std::chrono::milliseconds grace = std::chrono::seconds(5));

// How wait_until() ended.
struct Waited {
  enum class How { kExited, kTimedOut, kStopRequested };
  How how = How::kExited;
  int wait_status = 0;  // after stop_group() for the two other kinds
};

// Waits for `leader` (which leads its own process group) until it ends, `deadline` passes, or
// `stop_requested()` turns true; in the last two cases the group is stopped with stop_group().
Waited wait_until(pid_t leader, std::chrono::steady_clock::time_point deadline,
                  const std::function<bool()>& stop_requested = {});

}  // namespace ddpsim::process
