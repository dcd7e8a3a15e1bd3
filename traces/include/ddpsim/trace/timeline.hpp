// One rank's events regrouped per iteration into intervals: the one place where a begin event
// is paired with its end (FORMAT.md), so that the summary, the Chrome export and the simulator
// agree on how events pair up.
#pragma once

#include <cstdint>
#include <map>
#include <string>
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

// An injected sleep (a delay event): `kind` is slowdown, delay, distribution or measured.
struct Stall {
  Interval interval;  // t_ns .. t_ns + dur_ns
  std::string kind;
};

// An evaluation (eval_begin .. eval_end), recorded under the iteration it follows; `message` is
// the eval_end's. An eval_end without a begin keeps begin -1 (not complete()), an eval_begin
// without an end keeps end -1.
struct EvalPhase {
  Interval interval;
  std::string message;
};

struct IterationTimeline {
  std::int64_t iteration = 0;
  Interval whole;  // iteration_begin .. iteration_end
  Interval forward;
  Interval backward;
  Interval optimizer;
  bool no_sync = false;  // iteration_begin's kind: a gradient-accumulation step without all-reduces
  std::map<int, std::int64_t> first_grad_ready;  // parameter -> its first grad_ready
  std::int64_t last_grad_ready = -1;
  std::map<int, std::int64_t> bucket_ready;  // bucket -> its first bucket_ready
  std::vector<BucketAllreduce> allreduces;   // matched pairs, in the order they began
  std::int64_t last_allreduce_end = -1;      // the latest allreduce_end, matched or not
  std::vector<Stall> delays;                 // injected sleeps, in file order
  std::vector<EvalPhase> evals;              // in file order

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
