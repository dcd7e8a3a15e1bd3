#include "ddpsim/launch/supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "ddpsim/launch/line_prefixer.hpp"
#include "ddpsim/process/spawn.hpp"
#include "ddpsim/process/wait.hpp"

namespace ddpsim::launch {

namespace {

using Clock = std::chrono::steady_clock;

// After the last worker ends, how long its pipes may stay open: a process it started in the
// background and left running still holds them, and must not keep the launcher alive.
constexpr std::chrono::milliseconds kDrainAfterExit{1000};

struct OutputStream {
  int fd = -1;       // read end of the worker's pipe; -1 once closed
  int target = -1;   // the launcher's stdout or stderr
  LinePrefixer prefixer;
};

struct Worker {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  OutputStream out, err;
};

struct Failure {
  int rank;
  pid_t pid;
  int wait_status;
  bool others_were_running;
};

// Writes everything, retrying on EINTR/EAGAIN. Returns false once the reader is gone (EPIPE):
// the launcher keeps supervising even if nobody reads its output any more.
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd wait_writable{fd, POLLOUT, 0};
      poll(&wait_writable, 1, 100);
    } else {
      return false;
    }
  }
  return true;
}

// Blocks the signals the supervisor waits for and reads them from a signalfd instead of
// handlers, so they are handled in the poll loop with no races. Restores everything on exit.
class SignalGuard {
 public:
  SignalGuard() {
    sigemptyset(&watched_);
    for (const int signal_number : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&watched_, signal_number);
    if (sigprocmask(SIG_BLOCK, &watched_, &previous_mask_) != 0) {
      throw std::runtime_error(std::string("sigprocmask: ") + std::strerror(errno));
    }
    fd_ = signalfd(-1, &watched_, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd_ < 0) {
      sigprocmask(SIG_SETMASK, &previous_mask_, nullptr);
      throw std::runtime_error(std::string("signalfd: ") + std::strerror(errno));
    }
    // A closed stdout (`ddp-launch ... | head`) must not kill the launcher and orphan the job.
    previous_sigpipe_ = signal(SIGPIPE, SIG_IGN);
  }
  ~SignalGuard() {
    signal(SIGPIPE, previous_sigpipe_);
    close(fd_);
    // Drop what is still pending (e.g. SIGCHLD) before unblocking, so the default action of a
    // forwarded SIGINT does not kill the launcher after we decided how to exit.
    timespec zero{0, 0};
    while (sigtimedwait(&watched_, nullptr, &zero) > 0) {
    }
    sigprocmask(SIG_SETMASK, &previous_mask_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  int fd() const { return fd_; }
  const sigset_t& previous_mask() const { return previous_mask_; }

  // The signals received since the last call.
  std::vector<int> drain() {
    std::vector<int> received;
    signalfd_siginfo info;
    while (read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      received.push_back(static_cast<int>(info.ssi_signo));
    }
    return received;
  }

 private:
  sigset_t watched_;
  sigset_t previous_mask_;
  sighandler_t previous_sigpipe_ = SIG_DFL;
  int fd_ = -1;
};

class Supervisor {
 public:
  explicit Supervisor(const SupervisorOptions& options) : options_(options) {}

  int run(const std::vector<WorkerSpec>& specs) {
    SignalGuard signals;
    workers_.reserve(specs.size());
    for (const WorkerSpec& spec : specs) {
      try {
        start(spec, signals.previous_mask());
      } catch (const std::runtime_error& error) {
        message(error.what());
        stop_all(SIGKILL);
        wait_for_all();
        close_all_streams();
        return kExitCannotStart;
      }
    }
    try {
      loop(signals);
    } catch (...) {
      // Never leave workers running behind an internal error.
      stop_all(SIGKILL);
      wait_for_all();
      throw;
    }
    return exit_status();
  }

 private:
  void start(const WorkerSpec& spec, const sigset_t& child_mask) {
    process::Command command;
    command.argv = spec.argv;
    command.env.insert(spec.env.begin(), spec.env.end());
    command.out = process::Output::pipe();
    command.err = process::Output::pipe();
    command.own_process_group = true;  // the worker and whatever it starts are stopped together
    command.die_with_parent = true;    // a launcher killed by SIGKILL/OOM must not leave ranks behind
    command.signal_mask = &child_mask;  // our mask from before we blocked signals for signalfd
    const process::Child started = process::spawn(command);  // "cannot run 'PROG': REASON"
    for (const int fd : {started.stdout_fd, started.stderr_fd}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    const std::string prefix = "[rank " + std::to_string(spec.rank) + "] ";
    workers_.push_back(Worker{spec.rank, started.pid, true,
                              OutputStream{started.stdout_fd, options_.stdout_fd, LinePrefixer(prefix)},
                              OutputStream{started.stderr_fd, options_.stderr_fd, LinePrefixer(prefix)}});
  }

  void loop(SignalGuard& signals) {
    while (true) {
      const Clock::time_point now = Clock::now();
      if (kill_deadline_ && now >= *kill_deadline_) {
        stop_all(SIGKILL);
        kill_deadline_.reset();
      }
      if (running_count() == 0) {
        if (!drain_deadline_) drain_deadline_ = now + kDrainAfterExit;
        if (open_stream_count() == 0 || now >= *drain_deadline_) break;
      }

      std::vector<pollfd> fds{{signals.fd(), POLLIN, 0}};
      std::vector<OutputStream*> streams{nullptr};
      for (Worker& worker : workers_) {
        for (OutputStream* stream : {&worker.out, &worker.err}) {
          if (stream->fd < 0) continue;
          fds.push_back({stream->fd, POLLIN, 0});
          streams.push_back(stream);
        }
      }
      const int ready = poll(fds.data(), fds.size(), poll_timeout_ms(now));
      if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      // Output first: a worker's last words should come before the line announcing its death.
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) read_stream(*streams[i]);
      }
      if (fds[0].revents != 0) {
        for (const int signal_number : signals.drain()) on_signal(signal_number);
      }
    }
    close_all_streams();
  }

  int poll_timeout_ms(Clock::time_point now) const {
    std::optional<Clock::time_point> next;
    for (const auto& deadline : {kill_deadline_, drain_deadline_}) {
      if (deadline && (!next || *deadline < *next)) next = deadline;
    }
    if (!next) return -1;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(*next - now).count() + 1;
    return static_cast<int>(std::max<long long>(0, wait));
  }

  void read_stream(OutputStream& stream) {
    char buffer[65536];
    while (stream.fd >= 0) {
      const ssize_t n = read(stream.fd, buffer, sizeof buffer);
      if (n > 0) {
        emit(stream.target, stream.prefixer.feed(std::string_view(buffer, static_cast<std::size_t>(n))));
        if (static_cast<std::size_t>(n) < sizeof buffer) return;  // drained for now
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EAGAIN) {
        return;
      } else {  // EOF, or an error that will not go away
        close_stream(stream);
      }
    }
  }

  void close_stream(OutputStream& stream) {
    if (stream.fd < 0) return;
    emit(stream.target, stream.prefixer.finish());
    close(stream.fd);
    stream.fd = -1;
  }

  void close_all_streams() {
    for (Worker& worker : workers_) {
      // Whatever is already in the pipe still belongs to the output.
      read_stream(worker.out);
      read_stream(worker.err);
      close_stream(worker.out);
      close_stream(worker.err);
    }
  }

  void emit(int target, const std::string& text) {
    if (text.empty()) return;
    bool& broken = target == options_.stdout_fd ? stdout_broken_ : stderr_broken_;
    if (!broken) broken = !write_all(target, text);
  }

  void message(const std::string& text) { emit(options_.stderr_fd, options_.program_name + ": " + text + "\n"); }

  void on_signal(int signal_number) {
    if (signal_number == SIGCHLD) {
      reap();
      return;
    }
    if (received_signal_ == 0) {
      received_signal_ = signal_number;
      const int running = running_count();
      message("received " + process::signal_name(signal_number) + "; forwarding it to " + std::to_string(running) +
              " running worker" + (running == 1 ? "" : "s"));
      stop_all(signal_number);
      arm_kill_deadline();
    } else {
      message("received " + process::signal_name(signal_number) + " again; killing the workers");
      stop_all(SIGKILL);
    }
  }

  void reap() {
    for (Worker& worker : workers_) {
      if (!worker.running) continue;
      int status = 0;
      pid_t got;
      do {
        got = waitpid(worker.pid, &status, WNOHANG);
      } while (got < 0 && errno == EINTR);
      if (got != worker.pid) continue;
      worker.running = false;
      const bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      if (failed && !failure_ && received_signal_ == 0) {
        failure_ = Failure{worker.rank, worker.pid, status, running_count() > 0};
        // Its own group too: what it started (a script's children) may still hold its pipes.
        kill(-worker.pid, SIGTERM);
        stop_all(SIGTERM);
        arm_kill_deadline();
      }
    }
  }

  void arm_kill_deadline() {
    if (!kill_deadline_) kill_deadline_ = Clock::now() + options_.grace_period;
  }

  // Signals every running worker's process group (the worker and whatever it started).
  void stop_all(int signal_number) {
    for (const Worker& worker : workers_) {
      if (worker.running) kill(-worker.pid, signal_number);
    }
  }

  void wait_for_all() {
    for (Worker& worker : workers_) {
      if (!worker.running) continue;
      int status = 0;
      while (waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
      }
      worker.running = false;
    }
  }

  int running_count() const {
    int count = 0;
    for (const Worker& worker : workers_) count += worker.running ? 1 : 0;
    return count;
  }

  int open_stream_count() const {
    int count = 0;
    for (const Worker& worker : workers_) count += (worker.out.fd >= 0 ? 1 : 0) + (worker.err.fd >= 0 ? 1 : 0);
    return count;
  }

  int exit_status() {
    if (failure_) {
      message("rank " + std::to_string(failure_->rank) + " (pid " + std::to_string(failure_->pid) + ") " +
              process::describe_wait_status(failure_->wait_status) +
              (failure_->others_were_running ? "; stopped the other workers" : ""));
      return kExitWorkerFailed;
    }
    if (received_signal_ != 0) return 128 + received_signal_;
    return 0;
  }

  SupervisorOptions options_;
  std::vector<Worker> workers_;
  std::optional<Failure> failure_;
  int received_signal_ = 0;
  std::optional<Clock::time_point> kill_deadline_;
  std::optional<Clock::time_point> drain_deadline_;
  bool stdout_broken_ = false;
  bool stderr_broken_ = false;
};

}  // namespace

int run_workers(const std::vector<WorkerSpec>& workers, const SupervisorOptions& options) {
  return Supervisor(options).run(workers);
}

}  // namespace ddpsim::launch
