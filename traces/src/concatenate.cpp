// Runs of one configuration as one trace (concatenate.hpp).
#include "ddpsim/trace/concatenate.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "ddpsim/trace/io.hpp"

namespace ddpsim::trace {
namespace {

constexpr std::int64_t kGapBetweenRunsNs = 1'000'000;

// The earliest and the latest event time over every rank, of the events `keep` accepts.
template <typename Keep>
std::pair<std::int64_t, std::int64_t> time_span(const Trace& run, const Keep& keep) {
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  std::int64_t last = std::numeric_limits<std::int64_t>::min();
  for (const RankTrace& rank : run.ranks) {
    for (const Event& event : rank.events) {
      if (!keep(event)) continue;
      first = std::min(first, event.t_ns);
      last = std::max(last, event.t_ns);
    }
  }
  return {first, last};
}

}  // namespace

Trace concatenate_runs(const std::vector<Trace>& runs) {
  if (runs.empty()) throw TraceError("concatenate_runs", 0, "at least one run", "none");
  Trace joined = runs.front();
  for (const Trace& run : runs) {
    if (run.world_size() != joined.world_size()) {
      throw TraceError(run.dir, 0, "a run of " + std::to_string(joined.world_size()) + " ranks, as " + joined.dir,
                       std::to_string(run.world_size()));
    }
  }
  std::int64_t next_iteration = 0;
  for (const RankTrace& rank : joined.ranks) {
    for (const Event& event : rank.events) next_iteration = std::max(next_iteration, event.iteration + 1);
  }
  std::int64_t end_ns = time_span(joined, [](const Event&) { return true; }).second;

  for (std::size_t r = 1; r < runs.size(); ++r) {
    const Trace& run = runs[r];
    std::map<std::int64_t, std::int64_t> renumbered;  // the run's iteration -> the joined one's
    for (const std::int64_t iteration : without_warmup(run.complete_iterations())) {
      renumbered[iteration] = next_iteration++;
    }
    if (renumbered.empty()) continue;
    const auto kept = [&renumbered](const Event& event) { return renumbered.count(event.iteration) > 0; };
    const std::int64_t shift = end_ns + kGapBetweenRunsNs - time_span(run, kept).first;
    std::int64_t run_end_ns = end_ns;

    for (std::size_t k = 0; k < run.ranks.size(); ++k) {
      std::vector<Event>& events = joined.ranks[k].events;
      for (const Event& event : run.ranks[k].events) {
        if (!kept(event)) continue;
        Event moved = event;
        moved.iteration = renumbered.at(event.iteration);
        moved.t_ns = event.t_ns + shift;
        run_end_ns = std::max(run_end_ns, moved.t_ns);
        events.push_back(std::move(moved));
      }
      joined.ranks[k].truncated = joined.ranks[k].truncated || run.ranks[k].truncated;
      // Each kept iteration under the layout it ran with: a new entry where that differs from
      // the layout in force.
      std::vector<BucketAssignment>& layouts = joined.ranks[k].meta.bucket_assignments;
      for (const auto& [iteration, joined_iteration] : renumbered) {
        const BucketAssignment* ran = run.ranks[k].meta.assignment_for(iteration);
        if (ran == nullptr) continue;
        if (!layouts.empty() && layouts.back().buckets == ran->buckets) continue;
        layouts.push_back({joined_iteration, ran->buckets});
      }
    }
    end_ns = run_end_ns;
  }
  return joined;
}

}  // namespace ddpsim::trace
