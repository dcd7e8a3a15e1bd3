// Compute on shared cores as a trace ran it (extract_workload's core_slowdown): how many of the
// trace's ranks computed at each instant, and so how much work a rank did in a span of its own
// compute at the pace they left it. The inverse of the paced replay (ReplayOptions::
// core_slowdown), so that replaying a trace paced gives back its own phases where its ranks
// compute as they did, and only a what-if that moves them moves the pace.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ddpsim/trace/timeline.hpp"

namespace ddpsim::sim {

class MeasuredPace {
 public:
  // timelines[r]: rank r's. A rank computes from forward_begin to forward_end, from
  // backward_begin to its last gradient or bucket ready, and from optimizer_begin to
  // optimizer_end (a slowed rank's injected sleeps inside count, as the model replays them).
  // Every rank's clock is taken as one: ranks that share cores share a machine.
  MeasuredPace(const std::vector<trace::Timelines>& timelines, const std::function<double(double)>& core_slowdown,
               int trace_ranks);

  // The work done between two instants at the pace measured, in seconds at the pace of all
  // `trace_ranks` computing at once: the integral of s(trace_ranks) / s(k(t)), k(t) >= 1 the
  // ranks computing at t.
  double work_s(std::int64_t from_ns, std::int64_t to_ns) const;

 private:
  double integral_ns(std::int64_t t_ns) const;  // of the pace, from the first change point

  std::vector<std::int64_t> at_ns_;  // where k changes, ascending
  std::vector<double> before_ns_;    // the integral up to at_ns_[i]
  std::vector<double> pace_;         // the pace on [at_ns_[i], at_ns_[i + 1])
  double alone_pace_ = 1;            // the pace with one rank computing (outside every span)
};

}  // namespace ddpsim::sim
