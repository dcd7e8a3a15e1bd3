// collective_windows.hpp.
#include "collective_windows.hpp"

#include <algorithm>
#include <limits>
#include <set>

namespace ddpsim::sim {

std::map<std::int64_t, std::vector<CollectiveWindow>> collective_windows(const trace::Trace& trace) {
  const std::vector<std::int64_t> iterations = trace::without_warmup(trace.complete_iterations());
  const std::set<std::int64_t> wanted(iterations.begin(), iterations.end());
  struct Window {
    std::int64_t begin_ns = std::numeric_limits<std::int64_t>::min();
    std::int64_t end_ns = std::numeric_limits<std::int64_t>::min();
    std::int64_t bytes = 0;
    int begins = 0;
    int ends = 0;
  };
  std::map<std::int64_t, std::map<int, Window>> windows;  // [iteration][bucket]
  for (const auto& rank : trace.ranks) {
    for (const trace::Event& event : rank.events) {
      if (!wanted.count(event.iteration) || event.bucket < 0) continue;
      if (event.type == trace::EventType::AllreduceBegin) {
        Window& window = windows[event.iteration][event.bucket];
        window.begin_ns = std::max(window.begin_ns, event.t_ns);
        window.bytes = std::max(window.bytes, event.bytes);
        ++window.begins;
      } else if (event.type == trace::EventType::AllreduceEnd) {
        Window& window = windows[event.iteration][event.bucket];
        window.end_ns = std::max(window.end_ns, event.t_ns);
        ++window.ends;
      }
    }
  }
  std::map<std::int64_t, std::vector<CollectiveWindow>> result;
  for (const auto& [iteration, buckets] : windows) {
    std::vector<CollectiveWindow>& kept = result[iteration];
    for (const auto& [bucket, window] : buckets) {
      (void)bucket;
      if (window.begins != trace.world_size() || window.ends != trace.world_size()) continue;
      kept.push_back({window.begin_ns, window.end_ns, window.bytes});
    }
  }
  return result;
}

std::int64_t union_length_ns(std::vector<std::pair<std::int64_t, std::int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::int64_t total = 0;
  std::int64_t open_begin = 0;
  std::int64_t open_end = std::numeric_limits<std::int64_t>::min();
  for (const auto& [begin, end] : intervals) {
    if (end <= begin) continue;
    if (begin > open_end) {
      if (open_end > open_begin) total += open_end - open_begin;
      open_begin = begin;
      open_end = end;
    } else {
      open_end = std::max(open_end, end);
    }
  }
  if (open_end > open_begin) total += open_end - open_begin;
  return total;
}

}  // namespace ddpsim::sim
