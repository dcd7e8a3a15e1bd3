// Chrome trace export (chrome://tracing, ui.perfetto.dev): one process per rank with a compute
// and a comm track, so that the overlap of all-reduces with backward is visible at a glance.
#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/summary.hpp"
#include "ddpsim/trace/timeline.hpp"

namespace ddpsim::trace {

namespace {

using nlohmann::json;

constexpr int kComputeTrack = 0;
constexpr int kCommTrack = 1;

// Chrome traces count in microseconds; timestamps start at the trace's first event so that
// the viewer does not show hours of CLOCK_MONOTONIC uptime.
class ChromeWriter {
 public:
  explicit ChromeWriter(std::int64_t origin_ns) : origin_ns_(origin_ns) {}

  void metadata(const char* what, int pid, int tid, const std::string& name) {
    events_.push_back({{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid},
                       {"args", {{"name", name}}}});
  }

  void slice(const std::string& name, const char* category, int pid, int tid,
             const Interval& interval, json args = json::object()) {
    if (!interval.complete()) return;
    events_.push_back({{"name", name}, {"cat", category}, {"ph", "X"}, {"pid", pid},
                       {"tid", tid}, {"ts", micros(interval.begin)},
                       {"dur", static_cast<double>(interval.duration_ns()) / 1e3},
                       {"args", std::move(args)}});
  }

  void instant(const std::string& name, int pid, int tid, std::int64_t t_ns, json args) {
    events_.push_back({{"name", name}, {"cat", "failure"}, {"ph", "i"}, {"s", "p"}, {"pid", pid},
                       {"tid", tid}, {"ts", micros(t_ns)}, {"args", std::move(args)}});
  }

  json finish() && {
    return {{"traceEvents", std::move(events_)}, {"displayTimeUnit", "ms"}};
  }

 private:
  double micros(std::int64_t t_ns) const { return static_cast<double>(t_ns - origin_ns_) / 1e3; }

  std::int64_t origin_ns_;
  json events_ = json::array();
};

std::int64_t earliest_event_ns(const Trace& trace) {
  std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
  for (const RankTrace& rank : trace.ranks) {
    if (!rank.events.empty()) earliest = std::min(earliest, rank.events.front().t_ns);
  }
  return earliest == std::numeric_limits<std::int64_t>::max() ? 0 : earliest;
}

void export_rank(const RankTrace& rank, ChromeWriter& out) {
  const int pid = rank.meta.rank;
  out.metadata("process_name", pid, 0, "rank " + std::to_string(pid) + " (" + rank.meta.host + ")");
  out.metadata("thread_name", pid, kComputeTrack, "compute");
  out.metadata("thread_name", pid, kCommTrack, "comm");

  for (const auto& [iteration, timeline] : build_timelines(rank)) {
    const json iteration_args = {{"iteration", iteration}};
    out.slice("forward", "compute", pid, kComputeTrack, timeline.forward, iteration_args);
    out.slice("backward", "compute", pid, kComputeTrack, timeline.backward, iteration_args);
    out.slice("optimizer", "compute", pid, kComputeTrack, timeline.optimizer, iteration_args);
    for (const Stall& delay : timeline.delays) {
      out.slice("delay", "skew", pid, kComputeTrack, delay.interval, iteration_args);
    }
    for (const BucketAllreduce& allreduce : timeline.allreduces) {
      out.slice("allreduce bucket " + std::to_string(allreduce.bucket), "comm", pid, kCommTrack,
                allreduce.interval,
                {{"bucket", allreduce.bucket}, {"bytes", allreduce.bytes}, {"iteration", iteration}});
    }
  }
  for (const Event& event : rank.events) {
    if (event.type != EventType::Failure) continue;
    json args = {{"kind", event.kind}, {"message", event.message}, {"iteration", event.iteration}};
    if (event.bucket >= 0) args["bucket"] = event.bucket;
    if (event.dur_ns >= 0) args["waited_ns"] = event.dur_ns;
    out.instant("failure: " + event.kind, pid, kCommTrack, event.t_ns, std::move(args));
  }
}

}  // namespace

std::string to_chrome_trace(const Trace& trace) {
  ChromeWriter out(earliest_event_ns(trace));
  for (const RankTrace& rank : trace.ranks) export_rank(rank, out);
  // Messages come from the trace files and may hold any bytes: replace invalid UTF-8 rather
  // than throw halfway through an export.
  return std::move(out).finish().dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace ddpsim::trace
