// Running a function in a forked copy of this process (fork without exec): for work that must
// not share this process's global state, such as a SimGrid engine, of which a process can
// hold one.
#pragma once

#include <sys/types.h>

#include <functional>

namespace ddpsim::process {

// Forks; the child runs `body` and exits with its return value (1 if it throws) through
// _exit, so the parent's atexit handlers and static destructors never run twice. stdio is
// flushed first, so nothing buffered is written by both. Returns the child's pid to the
// parent; throws std::runtime_error "fork: REASON" when fork fails.
pid_t fork_call(const std::function<int()>& body);

}  // namespace ddpsim::process
