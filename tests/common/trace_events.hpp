// Hand-built trace events for tests. Tests that build a trace by hand spell out their own
// timings (the closed forms they check depend on them) and write each event through
// EventLog::add, the one place that knows which fields an event starts with.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace::testing {

// Appends the events of one rank's iteration to `events` (a RankTrace's, or a staging list).
struct EventLog {
  std::vector<Event>& events;
  int rank = 0;
  std::int64_t iteration = 0;

  // Fields that do not apply stay as FORMAT.md's empty (-1). Returns the event, for the test
  // to set what else applies (param, dur_ns, kind); valid until the next add.
  Event& add(EventType type, std::int64_t t_ns, int bucket = -1, std::int64_t bytes = -1) {
    Event event;
    event.rank = rank;
    event.iteration = iteration;
    event.type = type;
    event.t_ns = t_ns;
    event.bucket = bucket;
    event.bytes = bytes;
    events.push_back(std::move(event));
    return events.back();
  }
};

// FORMAT.md's order: by t_ns, events of one instant in the order they were added.
inline void sort_by_time(std::vector<Event>& events) {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.t_ns < b.t_ns; });
}

// One iteration's length in one rank's events (iteration_begin to iteration_end), seconds: how
// the replay tests read a simulated iteration.
inline double iteration_length_s(const std::vector<Event>& events, std::int64_t iteration) {
  std::int64_t begin = -1;
  std::int64_t end = -1;
  for (const Event& event : events) {
    if (event.iteration != iteration) continue;
    if (event.type == EventType::IterationBegin) begin = event.t_ns;
    if (event.type == EventType::IterationEnd) end = event.t_ns;
  }
  return static_cast<double>(end - begin) * 1e-9;
}

}  // namespace ddpsim::trace::testing
