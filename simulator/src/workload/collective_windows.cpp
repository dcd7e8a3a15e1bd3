// collective_windows.hpp.
#include "workload/collective_windows.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace ddpsim::sim {

std::map<std::int64_t, std::vector<CollectiveWindow>> collective_windows(const trace::Trace& trace) {
  std::vector<trace::Timelines> timelines;
  for (const trace::RankTrace& rank : trace.ranks) timelines.push_back(trace::build_timelines(rank));
  return collective_windows(timelines, trace::without_warmup(trace.complete_iterations()));
}

std::map<std::int64_t, std::vector<CollectiveWindow>> collective_windows(const std::vector<trace::Timelines>& timelines,
                                                                         const std::vector<std::int64_t>& iterations) {
  struct Window {
    std::int64_t begin_ns = std::numeric_limits<std::int64_t>::min();
    std::int64_t end_ns = std::numeric_limits<std::int64_t>::min();
    std::int64_t bytes = 0;
    std::size_t ranks = 0;  // that began and ended it
  };
  std::map<std::int64_t, std::vector<CollectiveWindow>> result;
  for (const std::int64_t iteration : iterations) {
    std::map<int, Window> windows;  // [bucket]
    for (const trace::Timelines& rank : timelines) {
      const auto timeline = rank.find(iteration);
      if (timeline == rank.end()) continue;
      for (const trace::BucketAllreduce& allreduce : timeline->second.allreduces) {
        if (allreduce.bucket < 0) continue;
        Window& window = windows[allreduce.bucket];
        window.begin_ns = std::max(window.begin_ns, allreduce.interval.begin);
        window.end_ns = std::max(window.end_ns, allreduce.interval.end);
        window.bytes = std::max(window.bytes, allreduce.bytes);
        ++window.ranks;
      }
    }
    std::vector<CollectiveWindow>& kept = result[iteration];
    for (const auto& [bucket, window] : windows) {
      (void)bucket;
      if (window.ranks == timelines.size()) kept.push_back({window.begin_ns, window.end_ns, window.bytes});
    }
  }
  return result;
}

std::vector<std::pair<std::int64_t, std::int64_t>> merged_intervals(
    std::vector<std::pair<std::int64_t, std::int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> merged;
  for (const auto& [begin, end] : intervals) {
    if (end <= begin) continue;
    if (merged.empty() || begin > merged.back().second) {
      merged.emplace_back(begin, end);
    } else {
      merged.back().second = std::max(merged.back().second, end);
    }
  }
  return merged;
}

std::int64_t union_length_ns(std::vector<std::pair<std::int64_t, std::int64_t>> intervals) {
  std::int64_t total = 0;
  for (const auto& [begin, end] : merged_intervals(std::move(intervals))) total += end - begin;
  return total;
}

std::int64_t overlapped_length_ns(const std::vector<std::pair<std::int64_t, std::int64_t>>& intervals) {
  // Sweep the ends in time order (an end before a begin at the same instant: touching
  // intervals do not overlap), adding the time during which two or more were open.
  std::vector<std::pair<std::int64_t, int>> edges;
  for (const auto& [begin, end] : intervals) {
    if (end <= begin) continue;
    edges.emplace_back(begin, +1);
    edges.emplace_back(end, -1);
  }
  std::sort(edges.begin(), edges.end());
  std::int64_t total = 0;
  int open = 0;
  std::int64_t since = 0;
  for (const auto& [t, step] : edges) {
    if (open >= 2) total += t - since;
    open += step;
    since = t;
  }
  return total;
}

std::map<std::int64_t, std::int64_t> autograd_done_ns(const std::vector<trace::Timelines>& timelines,
                                                      const std::vector<std::int64_t>& iterations) {
  std::map<std::int64_t, std::int64_t> done;
  for (const trace::Timelines& rank : timelines) {
    for (const std::int64_t iteration : iterations) {
      for (const auto& [bucket, t_ns] : rank.at(iteration).bucket_ready) {
        (void)bucket;
        auto [it, inserted] = done.emplace(iteration, t_ns);
        if (!inserted) it->second = std::max(it->second, t_ns);
      }
    }
  }
  return done;
}

}  // namespace ddpsim::sim
