#include "ddpsim/process/spawn.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ddpsim/process/wait.hpp"

extern char** environ;

namespace ddpsim::process {
namespace {

std::string reason(int error) { return std::strerror(error); }

// An owned file descriptor, closed when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Moves a close-on-exec descriptor above 0-2, so that installing the child's standard streams
// in order can never overwrite a descriptor still to be installed (a caller with a closed
// stdout gets fd 1 for its next pipe).
Fd above_stdio(Fd fd) {
  if (fd.get() > STDERR_FILENO) return fd;
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  if (moved < 0) throw SpawnError("fcntl: " + reason(errno));
  return Fd(moved);
}

struct PipeFds {
  Fd read;
  Fd write;
};

PipeFds make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw SpawnError("pipe: " + reason(errno));
  return {above_stdio(Fd(fds[0])), above_stdio(Fd(fds[1]))};
}

Fd open_append(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw SpawnError("cannot open " + path + ": " + reason(errno));
  return above_stdio(Fd(fd));
}

// Everything exec needs, as C arrays, built before fork.
struct ExecArgs {
  std::vector<std::string> storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

ExecArgs exec_args(const Command& command) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const std::size_t equals = text.find('=');
    if (equals != std::string::npos) env[text.substr(0, equals)] = text.substr(equals + 1);
  }
  for (const auto& [name, value] : command.env) env[name] = value;

  ExecArgs args;
  args.storage = command.argv;
  for (const auto& [name, value] : env) args.storage.push_back(name + "=" + value);
  for (std::size_t i = 0; i < args.storage.size(); ++i) {
    (i < command.argv.size() ? args.argv : args.envp).push_back(args.storage[i].data());
  }
  args.argv.push_back(nullptr);
  args.envp.push_back(nullptr);
  return args;
}

// The descriptors the child installs as its standard streams (-1: keep the inherited one).
struct ChildStdio {
  int in = -1;
  int out = -1;
  int err = -1;
};

// In the forked child: only async-signal-safe calls. Never returns.
[[noreturn]] void exec_child(const Command& command, const ExecArgs& args, const ChildStdio& stdio,
                             pid_t parent, int exec_error_fd) {
  if (command.own_process_group) ::setpgid(0, 0);
  if (command.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
  }
  // All three sources are above 2 (above_stdio), and dup2 clears close-on-exec on the copy.
  if (stdio.in >= 0) ::dup2(stdio.in, STDIN_FILENO);
  if (stdio.out >= 0) ::dup2(stdio.out, STDOUT_FILENO);
  if (stdio.err >= 0) ::dup2(stdio.err, STDERR_FILENO);
  ::signal(SIGPIPE, SIG_DFL);
  if (command.signal_mask != nullptr) ::sigprocmask(SIG_SETMASK, command.signal_mask, nullptr);
  ::execvpe(args.argv[0], args.argv.data(), args.envp.data());
  const int error = errno;
  [[maybe_unused]] const ssize_t written = ::write(exec_error_fd, &error, sizeof error);
  ::_exit(127);
}

}  // namespace

Child spawn(const Command& command) {
  if (command.argv.empty() || command.argv[0].empty()) throw SpawnError("cannot run '': no program given");
  const ExecArgs args = exec_args(command);

  Fd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (devnull.get() < 0) throw SpawnError("cannot open /dev/null: " + reason(errno));
  devnull = above_stdio(std::move(devnull));

  // The parent's ends (pipes) and the child's ends, per stream.
  Fd out_read, out_write, err_read, err_write;
  const auto prepare = [](const Output& output, Fd& read_end, Fd& write_end) {
    if (output.kind == Output::Kind::kPipe) {
      PipeFds fds = make_pipe();
      read_end = std::move(fds.read);
      write_end = std::move(fds.write);
    } else if (output.kind == Output::Kind::kAppendToFile) {
      write_end = open_append(output.path);
    }
  };
  prepare(command.out, out_read, out_write);
  const bool shared_file = command.out.kind == Output::Kind::kAppendToFile &&
                           command.err.kind == Output::Kind::kAppendToFile && command.out.path == command.err.path;
  if (!shared_file) prepare(command.err, err_read, err_write);

  ChildStdio stdio;
  stdio.in = devnull.get();
  stdio.out = out_write.get();
  stdio.err = shared_file ? out_write.get() : err_write.get();

  // exec closes this close-on-exec pipe: EOF means the program started, an errno means not.
  PipeFds exec_error = make_pipe();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(command, args, stdio, parent, exec_error.write.get());
  const int fork_error = errno;
  if (pid < 0) throw SpawnError("cannot run '" + command.argv[0] + "': fork: " + reason(fork_error));
  if (command.own_process_group) ::setpgid(pid, pid);  // before the caller can signal the group
  exec_error.write.reset();
  out_write.reset();
  err_write.reset();

  int exec_errno = 0;
  ssize_t got;
  do {
    got = ::read(exec_error.read.get(), &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    wait_for(pid);
    throw SpawnError("cannot run '" + command.argv[0] + "': " + reason(exec_errno));
  }
  return Child{pid, out_read.release(), err_read.release()};
}

}  // namespace ddpsim::process
