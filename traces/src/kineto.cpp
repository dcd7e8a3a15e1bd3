// Import of PyTorch profiler (Kineto) traces, one file per rank (kineto_standard.cpp); one
// rank's profile of a bigger job is replicated to every rank. Also the file reading and event
// helpers of kineto_detail.hpp.
#include "ddpsim/trace/kineto.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <zlib.h>

#include "ddpsim/trace/io.hpp"
#include "kineto_detail.hpp"

namespace ddpsim::trace {
namespace detail {

std::string read_maybe_gzip(const std::string& path, const std::string& what) {
  gzFile file = gzopen(path.c_str(), "rb");  // reads plain files unchanged too
  if (file == nullptr) throw TraceError(path, 0, what, "a file that cannot be opened");
  std::string text;
  char buffer[1 << 16];
  int got = 0;
  while ((got = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(got));
  int error = Z_OK;
  const char* message = gzerror(file, &error);
  const std::string error_text = message == nullptr ? "" : message;
  gzclose(file);
  if (got < 0 || (error != Z_OK && error != Z_STREAM_END)) {
    throw TraceError(path, 0, what, "a file that cannot be decompressed (" + error_text + ")");
  }
  return text;
}

void add(std::vector<Event>& events, int rank, std::int64_t iteration, EventType type,
         std::int64_t t_ns, int bucket, std::int64_t bytes, int param) {
  // Event's fields in declaration order; no duration, kind or message.
  events.push_back(Event{rank, iteration, type, t_ns, bucket, param, bytes, -1, {}, {}});
}

}  // namespace detail

Trace import_kineto(const std::vector<std::string>& rank_files) {
  if (rank_files.empty()) {
    throw TraceError("<none>", 0, "one profiler trace file per rank", "no files");
  }
  Trace trace;
  const int world_size = static_cast<int>(rank_files.size());
  // Each file's rank is its distributedInfo's (its place in the list where it has none): the
  // files may come in any order, each rank once.
  std::vector<std::string> path_of_rank(static_cast<std::size_t>(world_size));
  for (int position = 0; position < world_size; ++position) {
    const std::string& path = rank_files[static_cast<std::size_t>(position)];
    RankTrace imported = detail::import_standard(path, position, world_size);
    if (world_size > 1) {
      std::string& first = path_of_rank[static_cast<std::size_t>(imported.meta.rank)];
      if (!first.empty()) {
        throw TraceError(path, 0, "each rank's profile once",
                         "rank " + std::to_string(imported.meta.rank) + " again (also " + first + ")");
      }
      first = path;
    }
    trace.ranks.push_back(std::move(imported));
  }
  std::sort(trace.ranks.begin(), trace.ranks.end(),
            [](const RankTrace& a, const RankTrace& b) { return a.meta.rank < b.meta.rank; });
  // One rank's profile of a bigger job: the other ranks are copies of it (said in settings).
  if (world_size == 1 && trace.ranks.front().meta.world_size > 1) {
    const RankTrace source = trace.ranks.front();
    const int job_size = source.meta.world_size;
    constexpr int kMaxReplicated = 4096;
    if (job_size > kMaxReplicated) {
      throw TraceError(rank_files.front(), 0,
                       "a job of at most " + std::to_string(kMaxReplicated) +
                           " ranks to replicate one rank's profile into",
                       std::to_string(job_size) + " ranks");
    }
    trace.ranks.clear();
    for (int r = 0; r < job_size; ++r) {
      RankTrace copy = source;
      copy.meta.rank = r;
      copy.meta.local_rank = r;
      copy.meta.settings["replicated_from_rank"] = std::to_string(source.meta.rank);
      for (Event& event : copy.events) event.rank = r;
      trace.ranks.push_back(std::move(copy));
    }
  }
  return trace;
}

std::string describe_import(const Trace& trace) {
  const RunMeta& meta = trace.ranks.front().meta;
  const auto setting = [&meta](const char* key) {
    const auto found = meta.settings.find(key);
    return found == meta.settings.end() ? std::string() : found->second;
  };
  std::ostringstream out;
  // The iterations complete on every rank: what a what-if can resample. A torch.profiler
  // schedule that repeats (repeat=0, its default) writes its last, often short, cycle over the
  // others.
  const auto steps = static_cast<long>(trace.complete_iterations().size());
  out << "steps: " << steps << " profiled step" << (steps == 1 ? "" : "s");
  if (!setting("steps_from").empty()) out << " (cut at DDP's forwards: the profile has no ProfilerStep)";
  // Steps whose all-reduces differ from the layout (none at all: gradient accumulation under
  // no_sync()) are left out: a what-if's iteration is then a step that all-reduces.
  if (const std::string skipped = setting("skipped_steps"); !skipped.empty()) {
    out << " (" << 1 + std::count(skipped.begin(), skipped.end(), ' ')
        << " left out whose all-reduces differ from the others': " << skipped
        << "; with gradient accumulation under no_sync() a what-if's iteration is a step that all-reduces)";
  }
  // Gloo's workers recorded these steps' spans out of the order they took the work.
  if (const std::string paired = setting("gloo_spans_paired_by_size"); !paired.empty()) {
    out << " (Gloo spans of " << paired << " paired with their launches by size, as the other steps show them)";
  }
  if (steps < kFewProfiledSteps) {
    out << ": few for a what-if to resample; profile more (schedule(..., active=10, repeat=1): a schedule that "
           "repeats writes its last cycle over the others)";
  }
  out << "\n";
  const std::size_t buckets = meta.bucket_assignments.empty() ? 0 : meta.bucket_assignments.front().buckets.size();
  if (setting("parameters") == "per-gradient") {
    const auto alone = std::count_if(meta.parameters.begin(), meta.parameters.end(), [](const Parameter& p) { return p.alone; });
    out << "parameters: " << meta.parameters.size() << " gradients with their shapes in " << buckets
        << (buckets == 1 ? " bucket" : " buckets") << ": re-bucketing is exact\n"
        << "buckets: " << setting("bucket_caps");
    if (alone > 0) {
      out << "; " << alone << (alone == 1 ? " parameter" : " parameters")
          << " in a bucket of its own out of gradient-ready order, kept so at every cap (as DDP buckets a sparse "
             "gradient)";
    }
    out << "\n";
  } else {
    out << "parameters: one per bucket (" << buckets << "): re-bucketing is approximate, as "
        << setting("parameters_reason") << "\n";
  }
  return out.str();
}

}  // namespace ddpsim::trace
