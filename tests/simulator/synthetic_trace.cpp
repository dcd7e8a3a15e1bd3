// Builds the synthetic trace (synthetic_trace.hpp).
#include "synthetic_trace.hpp"

#include <algorithm>
#include <cmath>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/trace/stats.hpp"
#include "trace_events.hpp"
#include "workload/reducer_finalize.hpp"

namespace ddpsim::sim::testing {

using trace::Event;
using trace::EventType;

namespace {

std::int64_t ns(double seconds) { return std::llround(seconds * 1e9); }

}  // namespace

trace::Trace make_synthetic_trace(const SyntheticRun& run) {
  const int world = run.world_size;
  const int num_params = static_cast<int>(run.param_numel.size());

  trace::RunMeta meta;
  meta.source = "measured";
  meta.tool = {"synthetic", "0", "test"};
  meta.start_time_utc = "2026-11-22T04:00:00Z";
  meta.host = "synthetic";
  meta.world_size = world;
  meta.backend = "gloo";
  meta.workload_name = "synthetic";
  meta.workload = {{"batch_size", "32"}};
  for (int p = 0; p < num_params; ++p) {
    meta.parameters.push_back({p, "param" + std::to_string(p), run.param_numel[static_cast<std::size_t>(p)], "float32"});
  }
  std::vector<int> all_reversed;
  for (int p = num_params - 1; p >= 0; --p) all_reversed.push_back(p);
  meta.bucket_assignments = {{0, {all_reversed}}, {1, run.buckets}};
  meta.timeout_s = 1800;

  // Autograd produces gradients in reverse registration order, spread over backward_s in
  // proportion to their size.
  std::int64_t total_numel = 0;
  for (auto numel : run.param_numel) total_numel += numel;
  std::vector<double> grad_offset(static_cast<std::size_t>(num_params));
  std::int64_t done = 0;
  for (int p = num_params - 1; p >= 0; --p) {
    done += run.param_numel[static_cast<std::size_t>(p)];
    grad_offset[static_cast<std::size_t>(p)] = run.backward_s * static_cast<double>(done) / static_cast<double>(total_numel);
  }

  trace::Trace trace;
  trace.dir = "synthetic";
  trace.ranks.resize(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    trace.ranks[static_cast<std::size_t>(r)].meta = meta;
    trace.ranks[static_cast<std::size_t>(r)].meta.rank = r;
    trace.ranks[static_cast<std::size_t>(r)].meta.local_rank = r;
  }

  std::vector<double> rank_clock(static_cast<std::size_t>(world), 1000.0);  // seconds
  for (int iteration = 0; iteration < run.iterations; ++iteration) {
    const auto& layout = iteration == 0 ? std::vector<std::vector<int>>{all_reversed} : run.buckets;
    const double jitter = iteration == 0 ? 1.0 : run.jitter[static_cast<std::size_t>(iteration) % run.jitter.size()];
    std::vector<std::vector<Event>> events(static_cast<std::size_t>(world));
    std::vector<double> backward_begin(static_cast<std::size_t>(world));
    std::vector<double> factor(static_cast<std::size_t>(world));
    std::vector<std::vector<double>> ready(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) {
      auto& out = events[static_cast<std::size_t>(r)];
      const double f = (1 + run.rank_skew * r) * jitter;
      factor[static_cast<std::size_t>(r)] = f;
      double t = rank_clock[static_cast<std::size_t>(r)];
      trace::testing::EventLog log{out, r, iteration};
      log.add(EventType::IterationBegin, ns(t));
      if (run.stall_s > 0 && r == run.stall_rank && iteration == run.stall_iteration) {
        Event& delay = log.add(EventType::Delay, ns(t));
        delay.dur_ns = ns(run.stall_s);
        delay.kind = "delay";
        t += run.stall_s;
      }
      t += f * run.before_forward_s;
      log.add(EventType::ForwardBegin, ns(t));
      t += f * run.forward_s;
      log.add(EventType::ForwardEnd, ns(t));
      t += f * run.before_backward_s;
      log.add(EventType::BackwardBegin, ns(t));
      backward_begin[static_cast<std::size_t>(r)] = t;
      for (int p = num_params - 1; p >= 0; --p) {
        log.add(EventType::GradReady, ns(t + f * grad_offset[static_cast<std::size_t>(p)])).param = p;
      }
      for (std::size_t b = 0; b < layout.size(); ++b) {
        double last = 0;
        for (int p : layout[b]) last = std::max(last, grad_offset[static_cast<std::size_t>(p)]);
        ready[static_cast<std::size_t>(r)].push_back(t + f * last);
        log.add(EventType::BucketReady, ns(t + f * last), static_cast<int>(b), meta.bucket_bytes({0, layout}, static_cast<int>(b)));
      }
    }
    // One stream per rank: bucket b starts on rank r at max(ready, previous end); the
    // collective runs from the last rank's start for t(S).
    double previous_end = 0;
    std::vector<double> ends;
    std::vector<std::int64_t> layout_bytes;
    for (std::size_t b = 0; b < layout.size(); ++b) {
      const std::int64_t bytes = meta.bucket_bytes({0, layout}, static_cast<int>(b));
      double last_start = 0;
      std::vector<double> start(static_cast<std::size_t>(world));
      for (int r = 0; r < world; ++r) {
        const double launch = ready[static_cast<std::size_t>(r)][b];
        start[static_cast<std::size_t>(r)] = std::max(launch, previous_end);
        const double local_done = launch + run.local_seconds_per_byte * static_cast<double>(bytes);
        last_start = std::max(last_start, std::max(start[static_cast<std::size_t>(r)], local_done));
      }
      double duration = ring_allreduce_s(world, static_cast<double>(bytes), run.alpha_s, run.beta_bytes_per_s);
      if (iteration == run.straggler_iteration && static_cast<int>(b) == run.straggler_bucket) {
        duration += run.straggler_extra_s;
      }
      const double end = last_start + duration;
      for (int r = 0; r < world; ++r) {
        for (auto [type, at] : {std::pair{EventType::AllreduceBegin, start[static_cast<std::size_t>(r)]},
                                std::pair{EventType::AllreduceEnd, end}}) {
          trace::testing::EventLog{events[static_cast<std::size_t>(r)], r, iteration}.add(type, ns(at), static_cast<int>(b), bytes);
        }
      }
      previous_end = end;
      ends.push_back(end);
      layout_bytes.push_back(bytes);
    }
    for (int r = 0; r < world; ++r) {
      const double f = factor[static_cast<std::size_t>(r)];
      const double compute_done = backward_begin[static_cast<std::size_t>(r)] + f * run.backward_s;
      // At 0 s per byte the finalize ends with the later of autograd and the last all-reduce.
      double t = finalize_end_s(compute_done, ends, layout_bytes, run.finalize_seconds_per_byte) +
                 f * run.backward_tail_s;
      auto& out = events[static_cast<std::size_t>(r)];
      trace::testing::EventLog log{out, r, iteration};
      log.add(EventType::BackwardEnd, ns(t));
      t += f * run.before_optimizer_s;
      log.add(EventType::OptimizerBegin, ns(t));
      t += f * run.optimizer_s;
      log.add(EventType::OptimizerEnd, ns(t));
      t += f * run.after_optimizer_s;
      log.add(EventType::IterationEnd, ns(t));
      rank_clock[static_cast<std::size_t>(r)] = t;
      trace::testing::sort_by_time(out);
      auto& all = trace.ranks[static_cast<std::size_t>(r)].events;
      all.insert(all.end(), out.begin(), out.end());
    }
  }
  return trace;
}

std::vector<double> iteration_times_s(const trace::Trace& trace) {
  std::vector<double> times;
  for (const trace::IterationTime& time : trace.iteration_times()) {
    times.push_back(static_cast<double>(time.slowest_ns()) * 1e-9);
  }
  return times;
}

double median_iteration_s(const trace::Trace& trace) {
  std::vector<double> times = iteration_times_s(trace);
  if (times.size() > 1) times.erase(times.begin());  // the first iteration: a warm-up
  return trace::median_of(times);
}

}  // namespace ddpsim::sim::testing
