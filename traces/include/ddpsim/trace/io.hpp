// Writing and reading traces on disk (traces/FORMAT.md).
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace {

// A trace that breaks the format. what() is one line: "FILE:LINE: expected …, got …"
// (LINE is 0 when the problem is not tied to a line, e.g. a missing file).
class TraceError : public std::runtime_error {
 public:
  TraceError(const std::string& file, long line, const std::string& expected,
             const std::string& got);
  const std::string& file() const { return file_; }
  long line() const { return line_; }

 private:
  std::string file_;
  long line_;
};

std::string meta_file_name(int rank);    // "rank-R.meta.json"
std::string events_file_name(int rank);  // "rank-R.events.csv"

// Streams one rank's trace into a directory.
//
// Thread-safe: DDP's autograd hooks and comm-hook callbacks fire on threads other than the
// training loop's, so record() may be called from any thread. Events are buffered in memory
// and written, sorted by time, when an iteration_end (or a failure) is recorded, so
// the hot path never touches the disk and a crash loses at most the running iteration.
// Record every event of an iteration before its iteration_end: an event that arrives after
// the flush with an earlier t_ns than what is on disk breaks the file's time order, and
// read_rank reports it rather than hiding it.
class TraceWriter {
 public:
  // Creates `dir` if needed and writes the metadata file and the CSV header at once.
  TraceWriter(std::string dir, RunMeta meta);
  ~TraceWriter();  // flushes
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Buffers one event (its rank is set to the writer's); an iteration_end or a failure
  // flushes. A write that fails (a full disk) throws TraceError naming the events file, once;
  // from then on nothing more is written, so the file ends at most in one cut line and every
  // iteration written before stays readable.
  void record(const Event& event);
  // Shorthand for an event with only type, iteration and time.
  void record(EventType type, std::int64_t iteration, std::int64_t t_ns);
  // Writes every buffered event and flushes the file.
  void flush();
  // Records the layout in force from `first_iteration` and rewrites the metadata atomically.
  // A layout equal to the one in force is ignored.
  void set_bucket_assignment(std::int64_t first_iteration,
                             std::vector<std::vector<int>> buckets);
  // Rewrites the metadata atomically with extra settings (merged into meta.settings).
  void set_setting(const std::string& key, const std::string& value);

  const RunMeta& meta() const { return meta_; }
  const std::string& dir() const { return dir_; }

 private:
  void write_meta_locked();
  void flush_locked();

  std::string dir_;
  RunMeta meta_;
  std::mutex mutex_;
  std::vector<Event> pending_;
  std::FILE* events_ = nullptr;
  std::string events_path_;
  bool write_failed_ = false;  // after a failed write, the file is left as it is
};

// Monotonic clock in nanoseconds: the one clock every trace timestamp uses.
std::int64_t now_ns();
// Current UTC time as ISO 8601, to the second: "YYYY-MM-DDThh:mm:ssZ".
std::string utc_now_iso8601();

// Serialization, exposed for tests and for tools that build traces in memory.
std::string meta_to_json(const RunMeta& meta);
RunMeta meta_from_json(const std::string& text, const std::string& file);  // throws TraceError
// The CSV header line and one event's line, both without the trailing newline. Text fields
// are CSV-quoted when they hold ',' or '"'; line breaks in them become spaces (one event, one line).
std::string events_csv_header();
std::string event_to_csv(const Event& event);

// Reads and validates one rank's pair of files. Throws TraceError at the first problem.
RankTrace read_rank(const std::string& meta_path, const std::string& events_path);
// The same checks on the files' contents already in memory (read_rank reads the files and
// calls this; fuzzers and tests call it directly). The names are used in error messages.
RankTrace parse_rank(const std::string& meta_text, const std::string& events_text,
                     const std::string& meta_name, const std::string& events_name);
// Reads and validates a whole trace directory (every rank, cross-rank consistency).
Trace read_trace(const std::string& dir);
// Writes a whole in-memory trace (e.g. a simulated or imported run) to `dir`: every file is
// written beside its place before any replaces an old one, so a failed write (a full disk)
// leaves the directory as it was; removes rank files of ranks beyond trace.world_size() left
// there by an earlier run.
void write_trace(const std::string& dir, const Trace& trace);
// Writes `text` to a temporary file beside `path`, then renames it over `path`: a reader (or a
// crash, or a full disk) sees the old file or the new one, never a part. Throws TraceError
// naming the file (the temporary file is removed). `what` says what the file is for.
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& what = "a writable file");

}  // namespace ddpsim::trace
