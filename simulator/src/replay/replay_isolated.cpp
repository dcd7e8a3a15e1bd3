// Running a replay in a child process (replay.hpp: replay_isolated).
//
// SimGrid allows a single engine per process, freezes its configuration once started and
// aborts the process (xbt_die) on some bad inputs, such as an unknown network model or a
// malformed platform file. A forked child gives every replay a fresh engine and turns an
// abort into an error the caller can report in one line.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "ddpsim/process/fork_call.hpp"
#include "ddpsim/process/wait.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/trace/error_reason.hpp"
#include "replay/replay_classes.hpp"

namespace ddpsim::sim {

namespace {

// A flat binary encoding of ReplayResult for the pipe between child and parent.
class Encoder {
 public:
  template <typename T>
  void put(T value) {
    buffer_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void put_string(const std::string& text) {
    put<std::uint64_t>(text.size());
    buffer_ += text;
  }
  const std::string& bytes() const { return buffer_; }

 private:
  std::string buffer_;
};

class Decoder {
 public:
  explicit Decoder(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    if (offset_ + sizeof(T) > bytes_.size()) throw SimulationError("replay child: truncated result");
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  std::string get_string() {
    const auto size = get<std::uint64_t>();
    if (offset_ + size > bytes_.size()) throw SimulationError("replay child: truncated result");
    std::string text = bytes_.substr(offset_, size);
    offset_ += size;
    return text;
  }

 private:
  const std::string& bytes_;
  std::size_t offset_ = 0;
};

constexpr char kOk = 'R';
constexpr char kError = 'E';

// Events per class and each rank's class: W ranks of a few classes stay small in the pipe.
std::string encode(const ClassReplayResult& result) {
  Encoder out;
  out.put(kOk);
  out.put(result.simulated_end_s);
  out.put(result.wall_s);
  out.put(result.messages);
  out.put_string(result.failure);
  out.put<std::uint64_t>(result.allreduce_choices.size());
  for (const AllreduceChoice& choice : result.allreduce_choices) {
    out.put(choice.bytes);
    out.put(static_cast<int>(choice.algorithm));
    out.put(choice.ring_agg_s);
    out.put(choice.tree_s);
  }
  out.put<std::uint64_t>(result.classes.class_of.size());
  for (int index : result.classes.class_of) out.put(index);
  out.put<std::uint64_t>(result.events.size());
  for (const auto& class_events : result.events) {
    out.put<std::uint64_t>(class_events.size());
    for (const trace::Event& event : class_events) {
      out.put(event.rank);
      out.put(event.iteration);
      out.put(static_cast<int>(event.type));
      out.put(event.t_ns);
      out.put(event.bucket);
      out.put(event.param);
      out.put(event.bytes);
      out.put(event.dur_ns);
      out.put_string(event.kind);
      out.put_string(event.message);
    }
  }
  return out.bytes();
}

ClassReplayResult decode(const std::string& bytes) {
  Decoder in(bytes);
  const char tag = in.get<char>();
  if (tag == kError) throw SimulationError(in.get_string());
  if (tag != kOk) throw SimulationError("replay child: unreadable result");
  ClassReplayResult result;
  result.simulated_end_s = in.get<double>();
  result.wall_s = in.get<double>();
  result.messages = in.get<std::int64_t>();
  result.failure = in.get_string();
  result.allreduce_choices.resize(in.get<std::uint64_t>());
  for (AllreduceChoice& choice : result.allreduce_choices) {
    choice.bytes = in.get<std::int64_t>();
    choice.algorithm = static_cast<AllreduceAlgorithm>(in.get<int>());
    choice.ring_agg_s = in.get<double>();
    choice.tree_s = in.get<double>();
  }
  result.classes.class_of.resize(in.get<std::uint64_t>());
  for (int& index : result.classes.class_of) index = in.get<int>();
  result.events.resize(in.get<std::uint64_t>());
  result.classes.members.resize(result.events.size());
  for (std::size_t rank = 0; rank < result.classes.class_of.size(); ++rank) {
    const auto index = static_cast<std::size_t>(result.classes.class_of[rank]);
    if (index >= result.classes.members.size()) throw SimulationError("replay child: unreadable result");
    result.classes.members[index].push_back(static_cast<int>(rank));
  }
  for (auto& class_events : result.events) {
    class_events.resize(in.get<std::uint64_t>());
    for (trace::Event& event : class_events) {
      event.rank = in.get<int>();
      event.iteration = in.get<std::int64_t>();
      event.type = static_cast<trace::EventType>(in.get<int>());
      event.t_ns = in.get<std::int64_t>();
      event.bucket = in.get<int>();
      event.param = in.get<int>();
      event.bytes = in.get<std::int64_t>();
      event.dur_ns = in.get<std::int64_t>();
      event.kind = in.get_string();
      event.message = in.get_string();
    }
  }
  return result;
}

void write_all(int fd, const std::string& bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<std::size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string bytes;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(chunk, static_cast<std::size_t>(n));
  }
  return bytes;
}

// How the child ended when it left no words: killed (SIGKILL is how the kernel's out-of-memory
// killer and a job's memory limit stop a process), an exit status, or no result.
std::string child_end(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    std::string text = "the replay's process was killed by signal " + std::to_string(signal) + " (" +
                       (strsignal(signal) != nullptr ? strsignal(signal) : "unknown") + ")";
    if (signal == SIGKILL) text += ", as the out-of-memory killer or a memory limit stops a process: ask for less memory";
    return text;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return "the replay's process exited with status " + std::to_string(WEXITSTATUS(status)) + " and no reason";
  }
  return "the replay's process ended without a result";
}

// SimGrid's last words before an abort: the "[...] file:line: [category/CRITICAL] reason"
// line, reduced to the reason; without any, how the child ended.
std::string simgrid_reason(const std::string& log, int status) {
  std::istringstream lines(log);
  std::string line;
  std::string reason;
  std::string last_line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.rfind("Backtrace", 0) == 0 || line.rfind("  ->", 0) == 0) continue;
    last_line = line;
    const auto critical = line.find("/CRITICAL] ");
    if (critical != std::string::npos && reason.empty()) reason = line.substr(critical + 11);
  }
  if (!reason.empty()) return reason;
  return last_line.empty() ? child_end(status) : last_line;
}

// replay_classes() in a forked child.
ClassReplayResult replay_classes_isolated(const WorkloadModel& model, const ReplayOptions& options) {
  check_replay_options(model, options);  // plain mistakes are reported without forking

  int result_pipe[2];
  if (::pipe(result_pipe) != 0) throw SimulationError(std::string("pipe: ") + std::strerror(errno));
  std::FILE* child_log = std::tmpfile();
  if (child_log == nullptr) throw SimulationError(std::string("tmpfile: ") + std::strerror(errno));
  // One SimGrid engine per process: the replay runs in a forked copy of this one.
  const auto run_replay = [&] {
    ::close(result_pipe[0]);
    ::dup2(::fileno(child_log), STDERR_FILENO);
    std::string reply;
    try {
      reply = encode(replay_classes(model, options));
    } catch (const std::exception& error) {
      Encoder out;
      out.put(kError);
      out.put_string(trace::error_reason(error, "replaying"));  // never empty, out of memory named
      reply = out.bytes();
    }
    write_all(result_pipe[1], reply);
    ::close(result_pipe[1]);
    return 0;
  };
  pid_t child = -1;
  try {
    child = process::fork_call(run_replay);
  } catch (const std::runtime_error& error) {  // "fork: REASON"
    ::close(result_pipe[0]);
    ::close(result_pipe[1]);
    std::fclose(child_log);
    throw SimulationError(error.what());
  }
  ::close(result_pipe[1]);
  const std::string reply = read_all(result_pipe[0]);
  ::close(result_pipe[0]);
  const int status = process::wait_for(child);

  std::rewind(child_log);
  std::string log;
  char chunk[4096];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, child_log)) > 0) log.append(chunk, n);
  std::fclose(child_log);

  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty()) {
    throw SimulationError("simgrid: " + simgrid_reason(log, status));
  }
  // SimGrid's warnings of a successful run still belong to the user.
  if (!log.empty()) std::fputs(log.c_str(), stderr);
  return decode(reply);
}

}  // namespace

ReplayResult replay_isolated(const WorkloadModel& model, const ReplayOptions& options) {
  return expand(replay_classes_isolated(model, options));
}

ReplayResult replay_isolated_by_class(const WorkloadModel& model, const ReplayOptions& options) {
  return by_class(replay_classes_isolated(model, options));
}

}  // namespace ddpsim::sim
