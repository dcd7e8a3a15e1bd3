// One rank's events regrouped per iteration into intervals: the one place where a begin event
// is paired with its end (FORMAT.md), so that the summary, the Chrome export and the simulator
// agree on how events pair up.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace {

struct Interval {
  std::int64_t begin = -1;
  std::int64_t end = -1;

  bool complete() const { return begin >= 0 && end >= begin; }
  std::int64_t duration_ns() const { return complete() ? end - begin : 0; }
};

// One bucket's all-reduce: an allreduce_begin matched with the next allreduce_end of the same
// bucket in the same iteration (FORMAT.md).
struct BucketAllreduce {
  int bucket = 0;
  std::int64_t bytes = 0;  // the begin's, else the end's (a trace built in code may omit one), else 0
  Interval interval;
  // Its place among the iteration's all-reduces by when they ended (the file order of the
  // allreduce_end events: by t_ns, ties in file order); increasing, not necessarily 0, 1, 2.
  int end_order = 0;
};

struct IterationTimeline {
  std::int64_t iteration = 0;
  Interval whole;  // iteration_begin .. iteration_end
  Interval forward;
  Interval backward;
  Interval optimizer;
  std::int64_t last_grad_ready = -1;
  std::vector<BucketAllreduce> allreduces;  // matched pairs, in the order they began
  std::vector<Interval> delays;             // injected sleeps

  bool complete() const { return whole.complete(); }
};

// Every iteration that has at least one event, by iteration number.
std::map<std::int64_t, IterationTimeline> build_timelines(const RankTrace& rank);

using Timelines = std::map<std::int64_t, IterationTimeline>;

// Trace::iteration_times from timelines already built (timelines[r]: rank r's), for the
// iterations `complete` (Trace::complete_iterations).
std::vector<IterationTime> iteration_times_of(const std::vector<Timelines>& timelines,
                                              const std::vector<std::int64_t>& complete);

// Length of the intersection of two intervals, 0 when disjoint or incomplete.
std::int64_t overlap_ns(const Interval& a, const Interval& b);

}  // namespace ddpsim::trace
