// libFuzzer target for the trace reader: any bytes must give either a trace or one TraceError
// line, never a crash, hang or sanitizer report. What is read must also write back and read
// again unchanged, and the summary and Chrome export must cope with whatever passed validation.
//
// Input: META '\0' EVENTS to fuzz both files; without a '\0' the whole input is the events file
// and the metadata is FORMAT.md's worked example, so most inputs reach the CSV checks.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/summary.hpp"

namespace {

using namespace ddpsim::trace;

const char* const kExampleMeta = R"({
  "schema": "ddpsim-trace", "schema_version": 1, "source": "measured",
  "tool": {"name": "ddp-train", "version": "0.1.0", "git_sha": "3f2c1ab"},
  "start_time_utc": "2026-11-22T04:00:00Z", "clock": "CLOCK_MONOTONIC",
  "host": "node1", "rank": 0, "local_rank": 0, "world_size": 2, "backend": "gloo",
  "workload": {"name": "mlp", "batch_size": "32"},
  "parameters": [
    {"index": 0, "name": "fc.weight", "numel": 8, "dtype": "float32"},
    {"index": 1, "name": "fc.bias", "numel": 2, "dtype": "float32"},
    {"index": 2, "name": "out.weight", "numel": 4, "dtype": "float32"}
  ],
  "bucket_cap_bytes": 26214400, "first_bucket_cap_bytes": 1048576,
  "bucket_assignments": [
    {"first_iteration": 0, "buckets": [[2, 1, 0]]},
    {"first_iteration": 1, "buckets": [[2], [1, 0]]}
  ],
  "timeout_s": 1800, "skew": {}, "settings": {"comm_hook": "allreduce"}
})";

// The writer turns line breaks inside text fields into spaces; the reader keeps a lone '\r'.
std::string as_written(std::string text) {
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return text;
}

bool same_events(const std::vector<Event>& a, const std::vector<Event>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Event& x = a[i];
    const Event& y = b[i];
    if (x.rank != y.rank || x.iteration != y.iteration || x.type != y.type || x.t_ns != y.t_ns ||
        x.bucket != y.bucket || x.param != y.param || x.bytes != y.bytes ||
        x.dur_ns != y.dur_ns || as_written(x.kind) != y.kind ||
        as_written(x.message) != y.message) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t separator = input.find('\0');
  const std::string meta_text =
      separator == std::string::npos ? std::string(kExampleMeta) : input.substr(0, separator);
  const std::string events_text =
      separator == std::string::npos ? input : input.substr(separator + 1);

  RankTrace rank;
  try {
    rank = parse_rank(meta_text, events_text, "meta.json", "events.csv");
  } catch (const TraceError& error) {
    if (std::strchr(error.what(), '\n') != nullptr) std::abort();  // errors are one line
    return 0;
  }

  // Round trip: write what was read, read it again.
  std::string csv = events_csv_header() + "\n";
  for (const Event& event : rank.events) csv += event_to_csv(event) + "\n";
  RankTrace again;
  try {
    again = parse_rank(meta_to_json(rank.meta), csv, "again.meta.json", "again.events.csv");
  } catch (const TraceError& error) {
    std::abort();  // what the reader accepted, the writer must write readably
  }
  if (again.truncated || !same_events(rank.events, again.events)) std::abort();
  if (meta_to_json(again.meta) != meta_to_json(rank.meta)) std::abort();

  Trace trace;
  trace.ranks.push_back(std::move(rank));
  const Summary summary = summarize(trace);
  (void)summary_to_json(summary);
  (void)summary_to_table(summary);
  (void)to_chrome_trace(trace);
  return 0;
}
