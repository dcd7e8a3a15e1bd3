// Starting a program in a child process (fork + exec), with its standard streams where the
// caller wants them. Every program ddpsim starts goes through spawn(): ddp-launch's workers,
// ddp-experiment's jobs and replays, the tests' command runs.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpsim::process {

// Where one of the child's output streams goes.
struct Output {
  enum class Kind { kInherit, kPipe, kAppendToFile };
  Kind kind = Kind::kInherit;
  std::string path;  // kAppendToFile only; created if missing (0644)

  static Output inherit() { return {}; }
  static Output pipe() { return {Kind::kPipe, {}}; }
  static Output append_to(std::string file) { return {Kind::kAppendToFile, std::move(file)}; }
};

struct Command {
  std::vector<std::string> argv;          // argv[0]: a path, or a name looked up in PATH
  std::map<std::string, std::string> env;  // set on top of this process's environment
  Output out;                              // stdout
  Output err;                              // stderr; the same file as `out` shares its descriptor
  // A process group of its own, led by the child, so that stop_group() reaches whatever the
  // program starts (ddp-launch's ranks, a script's children). Set by both parent and child,
  // so the group exists before spawn() returns.
  bool own_process_group = false;
  // The child gets SIGKILL when this process dies, even by SIGKILL or the OOM killer: nobody
  // would read its pipes or stop its peers any more.
  bool die_with_parent = false;
  // The signal mask the program starts with; null keeps the caller's. (A caller that blocked
  // signals for signalfd passes the mask from before.)
  const sigset_t* signal_mask = nullptr;
};

// The started child. The read ends of kPipe outputs are close-on-exec and owned by the caller;
// -1 for the other kinds.
struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// The program could not be started: "cannot run 'PROG': REASON" (exec failed, e.g. "No such
// file or directory"), or "cannot open FILE: REASON" for an output file. A child whose exec
// failed has been reaped when this is thrown.
class SpawnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Starts `command`. Standard input is /dev/null. SIGPIPE is back to its default in the child
// (ignored signals stay ignored across exec, and a caller may ignore SIGPIPE for itself); the
// other dispositions are inherited, so `nohup` still works through us. Everything exec needs
// is built before fork: the child only makes async-signal-safe calls.
Child spawn(const Command& command);

}  // namespace ddpsim::process
