// What the two Kineto importers share (internal to the library): reading a profiler file, its
// times, and the events both append. The importers: kineto_sidecar.cpp (our peer job's traces,
// with a sidecar that gives sizes and layout) and kineto_standard.cpp (any torch.profiler trace
// of a DDP job); kineto.cpp picks one per file.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace::detail {

// prof.step() with a schedule labels each iteration "ProfilerStep#N".
inline constexpr const char* kProfilerStepPrefix = "ProfilerStep#";

inline bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Profiler times are (possibly fractional) microseconds.
inline std::int64_t microseconds_to_ns(double microseconds) {
  return static_cast<std::int64_t>(std::llround(microseconds * 1000.0));
}

// The whole file, gunzipped when it is gzip (plain files are read unchanged). TraceError naming
// the file and `what` when it cannot be opened or decompressed.
std::string read_maybe_gzip(const std::string& path, const std::string& what);

// Appends one event of `rank` (bucket, bytes, param: -1 where they do not apply).
void add(std::vector<Event>& events, int rank, std::int64_t iteration, EventType type,
         std::int64_t t_ns, int bucket = -1, std::int64_t bytes = -1, int param = -1);

// One rank's trace from a profile with its sidecar (kineto_sidecar_path) beside it.
RankTrace import_with_sidecar(const std::string& path, int rank, int world_size);

// One rank's trace from a standard torch.profiler trace (no sidecar): file `position` of
// `file_count`.
RankTrace import_standard(const std::string& path, int position, int file_count);

}  // namespace ddpsim::trace::detail
