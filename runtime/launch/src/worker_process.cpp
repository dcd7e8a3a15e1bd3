#include "worker_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace ddpsim::launch::detail {

namespace {

// Everything exec needs, built before fork: the child only makes async-signal-safe calls.
struct ExecArgs {
  std::vector<std::string> storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

ExecArgs build_exec_args(const WorkerSpec& spec) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const std::size_t equals = text.find('=');
    if (equals != std::string::npos) env[text.substr(0, equals)] = text.substr(equals + 1);
  }
  for (const auto& [name, value] : spec.env) env[name] = value;

  ExecArgs args;
  args.storage.reserve(spec.argv.size() + env.size());
  for (const auto& arg : spec.argv) args.storage.push_back(arg);
  for (const auto& [name, value] : env) args.storage.push_back(name + "=" + value);
  for (std::size_t i = 0; i < args.storage.size(); ++i) {
    char* text = args.storage[i].data();
    (i < spec.argv.size() ? args.argv : args.envp).push_back(text);
  }
  args.argv.push_back(nullptr);
  args.envp.push_back(nullptr);
  return args;
}

class Pipe {
 public:
  Pipe() {
    if (pipe2(fds_, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }
  int release_read() {
    const int fd = fds_[0];
    fds_[0] = -1;
    return fd;
  }
  void close_read() { close_fd(fds_[0]); }
  void close_write() { close_fd(fds_[1]); }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int fds_[2] = {-1, -1};
};

// dup2 onto itself keeps close-on-exec set; the fd must survive exec either way.
void install_fd(int fd, int target) {
  if (fd == target) {
    fcntl(fd, F_SETFD, 0);
  } else {
    dup2(fd, target);
  }
}

// Runs in the forked child: never returns.
[[noreturn]] void exec_child(const ExecArgs& args, pid_t launcher_pid, int stdout_fd, int stderr_fd, int devnull,
                             int exec_error_fd, const sigset_t& signal_mask) {
  setpgid(0, 0);
  // If the launcher dies without stopping us (SIGKILL, OOM), nobody reads our output or stops
  // the other ranks: die with it. Checking the parent afterwards closes the race where it died
  // before prctl.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher_pid) _exit(127);
  install_fd(devnull, STDIN_FILENO);
  install_fd(stdout_fd, STDOUT_FILENO);
  install_fd(stderr_fd, STDERR_FILENO);
  // Ignored signals stay ignored across exec. The launcher ignores SIGPIPE for itself only;
  // the others keep the disposition the launcher inherited (so `nohup ddp-launch` still works).
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &signal_mask, nullptr);
  execvpe(args.argv[0], args.argv.data(), args.envp.data());
  const int error = errno;
  [[maybe_unused]] const ssize_t written = write(exec_error_fd, &error, sizeof error);
  _exit(127);
}

}  // namespace

StartedWorker start_worker(const WorkerSpec& spec, const sigset_t& child_signal_mask) {
  if (spec.argv.empty()) throw std::runtime_error("no program to run");
  const ExecArgs args = build_exec_args(spec);
  Pipe out, err, exec_error;
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) throw std::runtime_error(std::string("/dev/null: ") + std::strerror(errno));

  const pid_t launcher_pid = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    exec_child(args, launcher_pid, out.write_end(), err.write_end(), devnull, exec_error.write_end(),
               child_signal_mask);
  }
  const int fork_errno = errno;
  ::close(devnull);
  if (pid < 0) throw std::runtime_error("cannot run '" + spec.argv[0] + "': fork: " + std::strerror(fork_errno));
  setpgid(pid, pid);  // also from this side, so the group exists before we ever signal it
  out.close_write();
  err.close_write();
  exec_error.close_write();

  // exec closes the close-on-exec error pipe: EOF means the program started, an errno means not.
  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(exec_error.read_end(), &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw std::runtime_error("cannot run '" + spec.argv[0] + "': " + std::strerror(exec_errno));
  }

  StartedWorker worker;
  worker.pid = pid;
  worker.stdout_fd = out.release_read();
  worker.stderr_fd = err.release_read();
  for (const int fd : {worker.stdout_fd, worker.stderr_fd}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return worker;
}

}  // namespace ddpsim::launch::detail
