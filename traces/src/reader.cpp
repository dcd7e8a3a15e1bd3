// Reading and validating traces (FORMAT.md, "Validation"): one rank's pair of files, then a
// whole directory with the cross-rank checks. Every problem is a one-line TraceError.
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>

#include "csv.hpp"
#include "ddpsim/trace/io.hpp"
#include "json_lines.hpp"
#include "rank_files.hpp"

namespace ddpsim::trace {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kNumColumns = 10;
enum Column { kRank, kIteration, kEvent, kTns, kBucket, kParam, kBytes, kDurNs, kKind, kMessage };
constexpr const char* kColumnNames[kNumColumns] = {"rank", "iteration", "event", "t_ns",
                                                   "bucket", "param", "bytes", "dur_ns",
                                                   "kind", "message"};

std::string in_quotes(const std::string& text) { return "\"" + text + "\""; }

// Validates the lines of one events file against its (already validated) metadata.
class EventsParser {
 public:
  EventsParser(const RunMeta& meta, const std::string& file) : meta_(meta), file_(file) {}

  void parse_line(std::string_view line, long line_number, std::vector<Event>& out) {
    line_ = line_number;
    std::string problem;
    if (!detail::split_csv_line(line, fields_, problem)) fail(problem, in_quotes(std::string(line)));
    if (fields_.size() != kNumColumns) {
      fail(std::to_string(kNumColumns) + " fields (" + events_csv_header() + ")",
           std::to_string(fields_.size()));
    }

    Event event;
    const std::int64_t rank = required_int(kRank);
    if (rank != meta_.rank) {
      fail("rank " + std::to_string(meta_.rank) + " (the file's rank)", std::to_string(rank));
    }
    event.rank = meta_.rank;

    event.iteration = required_int(kIteration);
    if (event.iteration < last_iteration_) {
      fail("iteration >= " + std::to_string(last_iteration_) + " (iterations never decrease)",
           std::to_string(event.iteration));
    }
    last_iteration_ = event.iteration;

    const std::optional<EventType> type = event_type_from_string(fields_[kEvent]);
    if (!type) {
      fail("an event name from FORMAT.md (iteration_begin, grad_ready, allreduce_begin, ...)",
           in_quotes(fields_[kEvent]));
    }
    event.type = *type;

    event.t_ns = required_int(kTns);
    if (event.t_ns < last_t_ns_) {
      fail("t_ns >= " + std::to_string(last_t_ns_) + " (time never decreases)",
           std::to_string(event.t_ns));
    }
    last_t_ns_ = event.t_ns;

    event.bucket = checked_bucket(optional_int(kBucket), event.iteration);
    event.param = checked_param(optional_int(kParam));
    event.bytes = optional_int(kBytes);
    event.dur_ns = optional_int(kDurNs);
    event.kind = fields_[kKind];
    event.message = fields_[kMessage];
    check_needed_fields(event);
    out.push_back(std::move(event));
  }

 private:
  [[noreturn]] void fail(const std::string& expected, const std::string& got) const {
    throw TraceError(file_, line_, expected, got);
  }

  // An empty field is "not applicable" (-1); anything else must be a non-negative integer.
  std::int64_t optional_int(Column column) const {
    const std::string& text = fields_[column];
    if (text.empty()) return -1;
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || value < 0) {
      fail(std::string(kColumnNames[column]) + " to be a non-negative integer", in_quotes(text));
    }
    return value;
  }

  std::int64_t required_int(Column column) const {
    const std::int64_t value = optional_int(column);
    if (value < 0) fail(std::string(kColumnNames[column]) + " to be present", "an empty field");
    return value;
  }

  int checked_bucket(std::int64_t bucket, std::int64_t iteration) const {
    if (bucket < 0) return -1;
    const BucketAssignment* layout = meta_.assignment_for(iteration);
    if (layout == nullptr) {
      fail("a bucket layout in force for iteration " + std::to_string(iteration) +
               " (bucket_assignments)",
           "bucket " + std::to_string(bucket) + " with no layout");
    }
    const auto num_buckets = static_cast<std::int64_t>(layout->buckets.size());
    if (bucket >= num_buckets) {
      fail("bucket in [0, " + std::to_string(num_buckets) + ") (the layout of iteration " +
               std::to_string(iteration) + ")",
           std::to_string(bucket));
    }
    return static_cast<int>(bucket);
  }

  int checked_param(std::int64_t param) const {
    if (param < 0) return -1;
    const auto num_params = static_cast<std::int64_t>(meta_.parameters.size());
    if (param >= num_params) {
      fail("param in [0, " + std::to_string(num_params) + ")", std::to_string(param));
    }
    return static_cast<int>(param);
  }

  void need(bool present, const Event& event, Column column) const {
    if (!present) {
      fail(std::string("field \"") + kColumnNames[column] + "\" for " + to_string(event.type),
           "an empty field");
    }
  }

  void check_needed_fields(const Event& event) const {
    switch (event.type) {
      case EventType::GradReady:
        need(event.param >= 0, event, kParam);
        break;
      case EventType::BucketReady:
      case EventType::AllreduceBegin:
      case EventType::AllreduceEnd:
        need(event.bucket >= 0, event, kBucket);
        need(event.bytes >= 0, event, kBytes);
        break;
      case EventType::Delay:
        need(event.dur_ns >= 0, event, kDurNs);
        need(!event.kind.empty(), event, kKind);
        break;
      case EventType::Failure:
        need(!event.kind.empty(), event, kKind);
        break;
      case EventType::Collective:
        need(event.dur_ns >= 0, event, kDurNs);
        need(!event.kind.empty(), event, kKind);
        break;
      case EventType::EvalEnd:
        need(!event.message.empty(), event, kMessage);
        break;
      default:
        break;
    }
  }

  const RunMeta& meta_;
  const std::string& file_;
  long line_ = 0;
  std::vector<std::string> fields_;
  std::int64_t last_iteration_ = 0;
  std::int64_t last_t_ns_ = 0;
};

std::string read_file_text(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw TraceError(path, 0, "a trace file", "no such file");
  if (fs::is_directory(path, ec)) throw TraceError(path, 0, "a trace file", "a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path, 0, "a readable trace file", "a file that cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

RankTrace parse_rank(const std::string& meta_text, const std::string& events_text,
                     const std::string& meta_name, const std::string& events_name) {
  RankTrace trace;
  trace.meta = meta_from_json(meta_text, meta_name);
  trace.meta_path = meta_name;
  trace.events_path = events_name;

  // A last line without its newline is a write the rank did not finish: drop it.
  std::string_view text(events_text);
  const std::size_t last_newline = text.rfind('\n');
  const std::size_t complete_end = last_newline == std::string_view::npos ? 0 : last_newline + 1;
  trace.truncated = complete_end < text.size();
  text = text.substr(0, complete_end);

  const std::string header = events_csv_header();
  EventsParser parser(trace.meta, events_name);
  long line_number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t newline = text.find('\n', pos);
    std::string_view line = text.substr(pos, newline - pos);
    pos = newline + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // a file saved on Windows
    if (line_number == 1) {
      if (line != header) throw TraceError(events_name, 1, in_quotes(header), in_quotes(std::string(line)));
      continue;
    }
    if (line.empty()) continue;  // pandas skips blank lines too
    parser.parse_line(line, line_number, trace.events);
  }
  if (line_number == 0) {
    throw TraceError(events_name, 1, "the header line " + in_quotes(header),
                     trace.truncated ? "a cut line " + in_quotes(events_text) : "an empty file");
  }
  return trace;
}

RankTrace read_rank(const std::string& meta_path, const std::string& events_path) {
  const std::string meta_text = read_file_text(meta_path);
  const std::string events_text = read_file_text(events_path);
  return parse_rank(meta_text, events_text, meta_path, events_path);
}

namespace {

std::string describe_parameter(const Parameter& p) {
  return p.name + " (" + std::to_string(p.numel) + " x " + p.dtype + ")";
}

// The cross-rank checks: each rank's metadata must agree with rank 0's on what the run was.
void check_against_rank0(const RankTrace& rank0, const RankTrace& other, int expected_rank,
                         const std::string& meta_text) {
  const RunMeta& ref = rank0.meta;
  const RunMeta& meta = other.meta;
  const std::string& file = other.meta_path;
  const std::string ref_name = fs::path(rank0.meta_path).filename().string();
  if (meta.rank != expected_rank) {
    throw TraceError(file, detail::json_key_line(meta_text, "rank"),
                     "rank " + std::to_string(expected_rank) + " (from the file name)",
                     std::to_string(meta.rank));
  }
  if (meta.world_size != ref.world_size) {
    throw TraceError(file, detail::json_key_line(meta_text, "world_size"),
                     "world_size " + std::to_string(ref.world_size) + " (as in " + ref_name + ")",
                     std::to_string(meta.world_size));
  }
  if (meta.schema_version != ref.schema_version) {
    throw TraceError(file, detail::json_key_line(meta_text, "schema_version"),
                     "schema_version " + std::to_string(ref.schema_version) + " (as in " +
                         ref_name + ")",
                     std::to_string(meta.schema_version));
  }
  const long parameters_line = detail::json_key_line(meta_text, "parameters");
  if (meta.parameters.size() != ref.parameters.size()) {
    throw TraceError(file, parameters_line,
                     std::to_string(ref.parameters.size()) + " parameters (as in " + ref_name + ")",
                     std::to_string(meta.parameters.size()));
  }
  for (std::size_t i = 0; i < ref.parameters.size(); ++i) {
    const std::string want = describe_parameter(ref.parameters[i]);
    const std::string have = describe_parameter(meta.parameters[i]);
    if (want != have) {
      throw TraceError(file, parameters_line,
                       "parameters[" + std::to_string(i) + "] = " + want + " (as in " + ref_name + ")",
                       have);
    }
  }
}

}  // namespace

Trace read_trace(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw TraceError(dir, 0, "a trace directory",
                     fs::exists(dir, ec) ? "a file that is not a directory" : "no such directory");
  }
  Trace trace;
  trace.dir = dir;
  const auto meta_path = [&](int rank) { return (fs::path(dir) / meta_file_name(rank)).string(); };
  const auto events_path = [&](int rank) {
    return (fs::path(dir) / events_file_name(rank)).string();
  };

  for (int rank = 0; rank == 0 || rank < trace.ranks.front().meta.world_size; ++rank) {
    const std::string meta_text = read_file_text(meta_path(rank));
    const std::string events_text = read_file_text(events_path(rank));
    RankTrace rank_trace = parse_rank(meta_text, events_text, meta_path(rank), events_path(rank));
    if (rank == 0) {
      if (rank_trace.meta.rank != 0) {
        throw TraceError(meta_path(0), detail::json_key_line(meta_text, "rank"),
                         "rank 0 (from the file name)", std::to_string(rank_trace.meta.rank));
      }
    } else {
      check_against_rank0(trace.ranks.front(), rank_trace, rank, meta_text);
    }
    trace.ranks.push_back(std::move(rank_trace));
  }

  const int world_size = trace.world_size();
  for (const auto& [rank, path] : detail::rank_files_in(dir)) {
    if (rank >= world_size) {
      throw TraceError(path, 0,
                       "rank files 0.." + std::to_string(world_size - 1) + " only (world_size " +
                           std::to_string(world_size) + ")",
                       "a file of rank " + std::to_string(rank));
    }
  }
  return trace;
}

}  // namespace ddpsim::trace
