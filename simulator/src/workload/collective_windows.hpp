// The all-reduces of a trace as the collective saw them, shared by the calibration's busy-time
// fit (calibrate.cpp) and the two-rate fit (overlap_rates.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "ddpsim/trace/model.hpp"
#include "ddpsim/trace/timeline.hpp"

namespace ddpsim::sim {

// One bucket's all-reduce in one iteration, from the last rank's begin to the last rank's end:
// the network cannot progress before every rank has started it. Only all-reduces every rank
// began and ended; end may precede begin (clocks of different ranks), which carries no time.
struct CollectiveWindow {
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t bytes = 0;
};

// [iteration] → its windows in bucket order, for the trace's complete iterations but warm-up.
std::map<std::int64_t, std::vector<CollectiveWindow>> collective_windows(const trace::Trace& trace);

// The same from every rank's timelines (timelines[r]: rank r's), for `iterations`.
std::map<std::int64_t, std::vector<CollectiveWindow>> collective_windows(const std::vector<trace::Timelines>& timelines,
                                                                         const std::vector<std::int64_t>& iterations);

// [iteration] → when the last rank's autograd finished (its last bucket_ready), for those of
// `iterations` where some rank recorded one (timelines[r]: rank r's).
std::map<std::int64_t, std::int64_t> autograd_done_ns(const std::vector<trace::Timelines>& timelines,
                                                      const std::vector<std::int64_t>& iterations);

// The union of [begin, end) intervals as disjoint ones, ascending (empty ones ignored).
std::vector<std::pair<std::int64_t, std::int64_t>> merged_intervals(
    std::vector<std::pair<std::int64_t, std::int64_t>> intervals);

// The length of the union of [begin, end) intervals (empty ones ignored).
std::int64_t union_length_ns(std::vector<std::pair<std::int64_t, std::int64_t>> intervals);

// The time covered by two or more of the [begin, end) intervals (empty ones ignored): how long
// two all-reduces were in flight at once (Gloo runs two, ReplayOptions::allreduces_in_flight).
std::int64_t overlapped_length_ns(const std::vector<std::pair<std::int64_t, std::int64_t>>& intervals);

}  // namespace ddpsim::sim
