#include "ddpsim/trace/timeline.hpp"

#include <algorithm>
#include <utility>

namespace ddpsim::trace {

namespace {

void set_begin(Interval& interval, std::int64_t t) {
  if (interval.begin < 0) interval.begin = t;  // the first begin wins
}

void set_end(Interval& interval, std::int64_t t) { interval.end = t; }  // the last end wins

}  // namespace

std::map<std::int64_t, IterationTimeline> build_timelines(const RankTrace& rank) {
  std::map<std::int64_t, IterationTimeline> timelines;
  // Open all-reduces per (iteration, bucket): where the begin was and what it carried.
  std::map<std::pair<std::int64_t, int>, std::size_t> open_allreduce;
  int ends_matched = 0;  // numbers the matched ends in file order (end_order)
  for (const Event& event : rank.events) {
    IterationTimeline& timeline = timelines[event.iteration];
    timeline.iteration = event.iteration;
    switch (event.type) {
      case EventType::IterationBegin:
        set_begin(timeline.whole, event.t_ns);
        if (event.kind == "no_sync") timeline.no_sync = true;
        break;
      case EventType::IterationEnd: set_end(timeline.whole, event.t_ns); break;
      case EventType::ForwardBegin: set_begin(timeline.forward, event.t_ns); break;
      case EventType::ForwardEnd: set_end(timeline.forward, event.t_ns); break;
      case EventType::BackwardBegin: set_begin(timeline.backward, event.t_ns); break;
      case EventType::BackwardEnd: set_end(timeline.backward, event.t_ns); break;
      case EventType::OptimizerBegin: set_begin(timeline.optimizer, event.t_ns); break;
      case EventType::OptimizerEnd: set_end(timeline.optimizer, event.t_ns); break;
      case EventType::GradReady:
        timeline.last_grad_ready = std::max(timeline.last_grad_ready, event.t_ns);
        if (event.param >= 0) timeline.first_grad_ready.emplace(event.param, event.t_ns);  // the first wins
        break;
      case EventType::BucketReady:
        if (event.bucket >= 0) timeline.bucket_ready.emplace(event.bucket, event.t_ns);
        break;
      case EventType::AllreduceBegin: {
        BucketAllreduce allreduce;
        allreduce.bucket = event.bucket;
        allreduce.bytes = event.bytes;  // -1 when absent: the end's then (clamped to 0 below)
        allreduce.interval.begin = event.t_ns;
        timeline.allreduces.push_back(allreduce);
        open_allreduce[{event.iteration, event.bucket}] = timeline.allreduces.size() - 1;
        break;
      }
      case EventType::AllreduceEnd: {
        timeline.last_allreduce_end = std::max(timeline.last_allreduce_end, event.t_ns);
        const auto open = open_allreduce.find({event.iteration, event.bucket});
        if (open == open_allreduce.end()) break;  // an end without a begin: nothing to pair
        BucketAllreduce& allreduce = timeline.allreduces[open->second];
        allreduce.interval.end = event.t_ns;
        if (allreduce.bytes < 0) allreduce.bytes = event.bytes;
        allreduce.end_order = ends_matched++;
        open_allreduce.erase(open);
        break;
      }
      case EventType::Delay:
        timeline.delays.push_back(
            Stall{Interval{event.t_ns, event.t_ns + std::max<std::int64_t>(event.dur_ns, 0)}, event.kind});
        break;
      case EventType::EvalBegin:
        timeline.evals.push_back(EvalPhase{Interval{event.t_ns, -1}, {}});
        break;
      case EventType::EvalEnd: {
        // It closes the latest open evaluation; a second begin before an end reopens it.
        auto& evals = timeline.evals;
        if (evals.empty() || evals.back().interval.begin < 0 || evals.back().interval.end >= 0) {
          evals.push_back(EvalPhase{Interval{-1, event.t_ns}, event.message});
        } else {
          evals.back().interval.end = event.t_ns;
          evals.back().message = event.message;
        }
        break;
      }
      case EventType::Failure:
      case EventType::Collective:
        break;
    }
  }
  // All-reduces still open (the rank died, or the iteration was cut) are not measurements.
  for (auto& [iteration, timeline] : timelines) {
    auto& list = timeline.allreduces;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [](const BucketAllreduce& a) { return !a.interval.complete(); }),
               list.end());
    for (BucketAllreduce& allreduce : list) allreduce.bytes = std::max<std::int64_t>(allreduce.bytes, 0);
  }
  return timelines;
}

std::vector<IterationTime> iteration_times_of(const std::vector<Timelines>& timelines,
                                              const std::vector<std::int64_t>& complete) {
  std::vector<IterationTime> times;
  for (const std::int64_t iteration : complete) {
    IterationTime time;
    time.iteration = iteration;
    for (const Timelines& rank : timelines) time.rank_ns.push_back(rank.at(iteration).whole.duration_ns());
    times.push_back(std::move(time));
  }
  return times;
}

std::int64_t overlap_ns(const Interval& a, const Interval& b) {
  if (!a.complete() || !b.complete()) return 0;
  return std::max<std::int64_t>(0, std::min(a.end, b.end) - std::max(a.begin, b.begin));
}

std::vector<IterationTime> Trace::iteration_times() const {
  std::vector<Timelines> timelines;
  for (const RankTrace& rank : ranks) timelines.push_back(build_timelines(rank));
  return iteration_times_of(timelines, complete_iterations());
}

}  // namespace ddpsim::trace
