// Writing traces: the streaming TraceWriter used while a run goes, and write_trace for whole
// in-memory traces (simulated or imported runs).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "ddpsim/trace/io.hpp"
#include "rank_files.hpp"

namespace ddpsim::trace {

namespace fs = std::filesystem;

namespace {

void create_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw TraceError(dir, 0, "a directory that can be created", ec ? ec.message() : "a file");
  }
}

}  // namespace

namespace {

fs::path temp_path_of(const fs::path& final_path) {
  return final_path.parent_path() / ("." + final_path.filename().string() + ".tmp");
}

// Writes `text` to the temporary file beside `path`; a write that fails (a full disk) leaves
// no temporary file behind.
void stage_file(const std::string& path, const std::string& text, const std::string& what) {
  const fs::path temp_path = temp_path_of(path);
  errno = 0;
  std::FILE* out = std::fopen(temp_path.c_str(), "wb");
  if (out == nullptr) throw TraceError(path, 0, what, std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size() && std::fflush(out) == 0;
  const int write_errno = errno;
  const bool closed = std::fclose(out) == 0;
  if (!written || !closed) {
    std::error_code ignored;
    fs::remove(temp_path, ignored);
    throw TraceError(path, 0, what, std::strerror(write_errno != 0 ? write_errno : errno));
  }
}

// rename() is atomic on POSIX: a reader (or a crash) sees the old file or the new, never a mix.
void commit_file(const std::string& path, const std::string& what) {
  const fs::path temp_path = temp_path_of(path);
  std::error_code ec;
  fs::rename(temp_path, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp_path, ignored);
    throw TraceError(path, 0, what, ec.message());
  }
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text, const std::string& what) {
  stage_file(path, text, what);
  commit_file(path, what);
}

TraceWriter::TraceWriter(std::string dir, RunMeta meta) : dir_(std::move(dir)), meta_(std::move(meta)) {
  create_directory(dir_);
  write_meta_locked();  // no other thread can see the writer yet
  events_path_ = (fs::path(dir_) / events_file_name(meta_.rank)).string();
  events_ = std::fopen(events_path_.c_str(), "w");
  if (events_ == nullptr) throw TraceError(events_path_, 0, "a writable file", std::strerror(errno));
  const std::string header = events_csv_header() + "\n";
  if (std::fputs(header.c_str(), events_) < 0 || std::fflush(events_) != 0) {
    const int error = errno;
    std::fclose(events_);
    events_ = nullptr;
    throw TraceError(events_path_, 0, "room to write the trace", std::strerror(error));
  }
}

TraceWriter::~TraceWriter() {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    flush_locked();
  } catch (const TraceError&) {
    // Already reported to whoever recorded the event that failed to go out, or lost with the
    // process: a destructor cannot report it.
  }
  if (events_ != nullptr) std::fclose(events_);
}

void TraceWriter::record(const Event& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.push_back(event);
  pending_.back().rank = meta_.rank;
  // A finished iteration goes to disk at once, and so does a failure: the process may be
  // about to die, and the failure is the one event the post-mortem needs.
  if (event.type == EventType::IterationEnd || event.type == EventType::Failure) flush_locked();
}

void TraceWriter::record(EventType type, std::int64_t iteration, std::int64_t t_ns) {
  Event event;
  event.type = type;
  event.iteration = iteration;
  event.t_ns = t_ns;
  record(event);
}

void TraceWriter::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_locked();
}

void TraceWriter::flush_locked() {
  if (events_ == nullptr) return;
  // Threads record in the order they get the lock, not in time order; stable sorting keeps
  // the recording order of events with equal timestamps (FORMAT.md: ties keep their order).
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Event& a, const Event& b) { return a.t_ns < b.t_ns; });
  std::string chunk;
  for (const Event& event : pending_) {
    chunk += event_to_csv(event);
    chunk += '\n';
  }
  pending_.clear();
  if (write_failed_) return;  // the file keeps what it had: complete lines, at most one cut
  errno = 0;
  if (std::fwrite(chunk.data(), 1, chunk.size(), events_) != chunk.size() ||
      std::fflush(events_) != 0) {
    write_failed_ = true;
    throw TraceError(events_path_, 0, "room to write the trace",
                     std::strerror(errno != 0 ? errno : EIO));
  }
}

void TraceWriter::set_bucket_assignment(std::int64_t first_iteration,
                                        std::vector<std::vector<int>> buckets) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<BucketAssignment>& layouts = meta_.bucket_assignments;
  if (!layouts.empty() && layouts.back().first_iteration <= first_iteration &&
      layouts.back().buckets == buckets) {
    return;  // the layout in force already
  }
  // A layout for an iteration at or before the last recorded one replaces what was recorded
  // from there on (it was never used: DDP sets the layout before the iteration runs).
  while (!layouts.empty() && layouts.back().first_iteration >= first_iteration) layouts.pop_back();
  if (layouts.empty() || layouts.back().buckets != buckets) {
    layouts.push_back(BucketAssignment{first_iteration, std::move(buckets)});
  }
  write_meta_locked();
}

void TraceWriter::set_setting(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(mutex_);
  meta_.settings[key] = value;
  write_meta_locked();
}

void TraceWriter::write_meta_locked() {
  write_file_atomically((fs::path(dir_) / meta_file_name(meta_.rank)).string(), meta_to_json(meta_));
}

void write_trace(const std::string& dir, const Trace& trace) {
  create_directory(dir);
  // Every file is written beside its place first; only when all are written do they replace
  // the old ones. A write that fails (a full disk, at any rank) leaves the directory as it
  // was: no rank of the new trace mixed with ranks of an old one.
  std::vector<std::string> staged;
  const auto stage = [&](const std::string& path, const std::string& text) {
    try {
      stage_file(path, text, "a writable file");
    } catch (...) {
      std::error_code ignored;
      for (const std::string& done : staged) fs::remove(temp_path_of(done), ignored);
      throw;
    }
    staged.push_back(path);
  };
  for (const RankTrace& rank : trace.ranks) {
    stage((fs::path(dir) / meta_file_name(rank.meta.rank)).string(), meta_to_json(rank.meta));
    std::string text = events_csv_header() + "\n";
    for (const Event& event : rank.events) {
      text += event_to_csv(event);
      text += '\n';
    }
    stage((fs::path(dir) / events_file_name(rank.meta.rank)).string(), text);
  }
  // Rank files beyond this trace's world size are left over from an earlier, larger run in
  // the same directory; kept, they would make the new trace fail validation.
  for (const auto& [rank, path] : detail::rank_files_in(dir)) {
    if (rank >= trace.world_size()) fs::remove(path);
  }
  for (const std::string& path : staged) commit_file(path, "a writable file");
}

}  // namespace ddpsim::trace
