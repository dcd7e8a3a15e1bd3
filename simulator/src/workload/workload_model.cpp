// Cutting a recorded trace into per-rank compute phases (workload_model.hpp).
#include "ddpsim/sim/workload_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "stats.hpp"
#include "workload/collective_windows.hpp"
#include "workload/measured_pace.hpp"
#include "workload/reducer_finalize.hpp"
#include "ddpsim/trace/timeline.hpp"

namespace ddpsim::sim {


const char* to_string(ComputeMode mode) {
  switch (mode) {
    case ComputeMode::Median: return "median";
    case ComputeMode::Mean: return "mean";
    case ComputeMode::PerIteration: return "per-iteration";
  }
  return "unknown";
}

std::optional<ComputeMode> compute_mode_from_string(const std::string& name) {
  for (ComputeMode mode : {ComputeMode::Median, ComputeMode::Mean, ComputeMode::PerIteration}) {
    if (name == to_string(mode)) return mode;
  }
  return std::nullopt;
}

double RankIterationCosts::compute_total_s() const {
  return before_forward_s + forward_s + before_backward_s + backward_compute_s +
         backward_tail_s + before_optimizer_s + optimizer_s + after_optimizer_s;
}

const RankIterationCosts& WorkloadModel::costs_for(int rank, std::int64_t simulated_iteration) const {
  const auto& per_rank = costs.at(static_cast<std::size_t>(rank) % costs.size());
  return per_rank.at(static_cast<std::size_t>(simulated_iteration) % per_rank.size());
}

void stretch_steps(WorkloadModel& model, double factor) {
  for (auto& per_rank : model.costs) {
    for (RankIterationCosts& costs : per_rank) {
      for (double* step : {&costs.before_forward_s, &costs.before_backward_s, &costs.backward_tail_s,
                           &costs.finalize_exposed_s, &costs.before_optimizer_s, &costs.after_optimizer_s,
                           &costs.eval_after_s}) {
        *step *= factor;
      }
    }
  }
  model.finalize_seconds_per_byte *= factor;
}

void stretch_compute(WorkloadModel& model, double factor) {
  stretch_steps(model, factor);
  for (auto& per_rank : model.costs) {
    for (RankIterationCosts& costs : per_rank) {
      for (double* phase : {&costs.forward_s, &costs.backward_compute_s, &costs.optimizer_s}) *phase *= factor;
      for (double& ready : costs.bucket_ready_s) ready *= factor;
      for (double& ready : costs.grad_ready_s) {
        if (ready >= 0) ready *= factor;  // -1: unknown, kept
      }
    }
  }
}

double shared_cores_slowdown(double cores, double ranks) { return std::max(1.0, ranks / cores); }

double shared_cores_stretch(double cores, int trace_world_size, int world_size) {
  return shared_cores_slowdown(cores, world_size) / shared_cores_slowdown(cores, trace_world_size);
}

double corun_slowdown(const std::map<int, double>& effective_cores, double ranks) {
  // s(k) = k / C(k), C piecewise linear through (1, 1) and the measured points, flat past the
  // last; C(k) = k below one rank (a part-time rank runs as if alone).
  if (ranks <= 1) return 1;
  double below_k = 1, below_c = 1;
  for (const auto& [k, c] : effective_cores) {
    if (ranks <= k) {
      const double cores = below_c + (c - below_c) * (ranks - below_k) / (k - below_k);
      return ranks / cores;
    }
    below_k = k;
    below_c = c;
  }
  return ranks / below_c;
}

double shared_core_pace(const std::function<double(double)>& core_slowdown, double trace_ranks, double computing) {
  return core_slowdown(trace_ranks) / core_slowdown(computing);
}

double corun_stretch(const std::map<int, double>& effective_cores, int trace_world_size, int world_size) {
  return corun_slowdown(effective_cores, std::max(world_size, 1)) /
         corun_slowdown(effective_cores, std::max(trace_world_size, 1));
}

namespace {

constexpr double kNsToS = 1e-9;

// A phase boundary, or `fallback` when the trace has no such event (-1 in the timeline).
std::int64_t or_else(std::int64_t t_ns, std::int64_t fallback) { return t_ns >= 0 ? t_ns : fallback; }

// Seconds between two instants, never negative (a missing phase has length 0).
double span_s(std::int64_t from_ns, std::int64_t to_ns) {
  return to_ns > from_ns ? static_cast<double>(to_ns - from_ns) * kNsToS : 0.0;
}

// Evaluation phases (eval_begin .. eval_end) of an iteration. ddp-train records them between
// iterations; one inside an iteration's bounds is still not training compute.
std::vector<std::pair<std::int64_t, std::int64_t>> eval_phases(const trace::IterationTimeline& timeline) {
  std::vector<std::pair<std::int64_t, std::int64_t>> phases;
  for (const trace::EvalPhase& eval : timeline.evals) {
    if (eval.interval.begin >= 0 && eval.interval.end >= 0) phases.emplace_back(eval.interval.begin, eval.interval.end);
  }
  return phases;
}

// A one-rank trace's all-reduce windows per byte: per iteration, the windows' total over their
// bytes; the median over iterations (0 where none has both).
double local_seconds_per_byte(const trace::Timelines& timelines, const std::vector<std::int64_t>& iterations) {
  std::vector<double> per_byte;
  for (std::int64_t iteration : iterations) {
    std::int64_t window_ns = 0;
    std::int64_t bytes = 0;
    for (const trace::BucketAllreduce& allreduce : timelines.at(iteration).allreduces) {
      if (allreduce.bytes <= 0 || !allreduce.interval.complete()) continue;
      window_ns += allreduce.interval.duration_ns();
      bytes += allreduce.bytes;
    }
    if (bytes > 0) per_byte.push_back(static_cast<double>(window_ns) * 1e-9 / static_cast<double>(bytes));
  }
  return per_byte.empty() ? 0 : median_of(per_byte);
}

// Autograd's time alone up to `offset` after backward_begin. Where the collective was
// transferring (its windows), autograd ran at `fraction` of its rate alone, so that time counts
// `fraction` of its length (ReplayOptions::compute_fraction_during_allreduce); on shared cores
// (`pace`, or null) each instant counts at the pace the ranks computing then left it, and a
// transfer's instants at `fraction` of that: the inverse of the replay's autograd_for.
double autograd_alone_s(double offset, std::int64_t backward_begin, const std::vector<CollectiveWindow>& windows,
                        double fraction, const MeasuredPace* pace) {
  if (offset <= 0) return offset;
  const std::int64_t to = backward_begin + std::llround(offset / kNsToS);
  const auto work_s = [pace](std::int64_t from_ns, std::int64_t to_ns) {
    return pace != nullptr ? pace->work_s(from_ns, to_ns) : span_s(from_ns, to_ns);
  };
  double alone = pace != nullptr ? work_s(backward_begin, to) : offset;
  if (fraction == 1) return alone;
  std::vector<std::pair<std::int64_t, std::int64_t>> clipped;
  for (const CollectiveWindow& window : windows) {
    clipped.emplace_back(std::max(window.begin_ns, backward_begin), std::min(window.end_ns, to));
  }
  for (const auto& [begin, end] : merged_intervals(std::move(clipped))) alone -= (1 - fraction) * work_s(begin, end);
  return alone;
}

// first_collective_end_ns: when the iteration's last all-reduce ended on the first rank (of
// this host) to leave it; -1 when unknown.
RankIterationCosts costs_of(const trace::IterationTimeline& timeline, const std::vector<std::vector<int>>& buckets,
                            std::size_t num_params, const std::vector<CollectiveWindow>& windows,
                            double compute_fraction, std::int64_t first_collective_end_ns,
                            const MeasuredPace* pace, RecordedFinalize& recorded) {
  // Missing optional events collapse their phase onto the previous boundary. A phase is the
  // timeline's (trace/timeline.hpp): its first begin to its last end.
  const std::int64_t begin = or_else(timeline.whole.begin, 0);
  const std::int64_t end = or_else(timeline.whole.end, begin);
  const std::int64_t forward_begin = or_else(timeline.forward.begin, begin);
  const std::int64_t forward_end = or_else(timeline.forward.end, forward_begin);
  const std::int64_t backward_begin = or_else(timeline.backward.begin, forward_end);
  const std::int64_t optimizer_begin_or_end = or_else(timeline.optimizer.begin, end);
  const std::int64_t backward_end = or_else(timeline.backward.end, optimizer_begin_or_end);
  const std::int64_t optimizer_begin = or_else(timeline.optimizer.begin, backward_end);
  const std::int64_t optimizer_end = or_else(timeline.optimizer.end, optimizer_begin);

  // A span's compute: its length less any evaluation inside it.
  const auto phases = eval_phases(timeline);
  const auto compute_s = [&phases](std::int64_t from_ns, std::int64_t to_ns) {
    double seconds = span_s(from_ns, to_ns);
    for (const auto& [eval_begin, eval_end] : phases) {
      seconds -= span_s(std::max(from_ns, eval_begin), std::min(to_ns, eval_end));
    }
    return std::max(0.0, seconds);
  };

  RankIterationCosts costs;
  for (const auto& [eval_begin, eval_end] : phases) {
    if (eval_begin >= end) costs.eval_after_s += span_s(eval_begin, eval_end);
  }
  for (const trace::EvalPhase& eval : timeline.evals) {
    if (eval.interval.end >= end) costs.eval_message = eval.message;
  }
  // Injected stalls sleep between iteration_begin and forward_begin (SkewInjector).
  for (const trace::Stall& stall : timeline.delays) {
    if ((stall.kind == "delay" || stall.kind == "distribution") && stall.interval.begin >= begin &&
        stall.interval.begin < forward_begin) {
      costs.stall_s += static_cast<double>(stall.interval.end - stall.interval.begin) * kNsToS;
    }
  }
  costs.before_forward_s = std::max(0.0, compute_s(begin, forward_begin) - costs.stall_s);
  costs.forward_s = compute_s(forward_begin, forward_end);
  costs.before_backward_s = compute_s(forward_end, backward_begin);
  costs.before_optimizer_s = compute_s(backward_end, optimizer_begin);
  costs.optimizer_s = compute_s(optimizer_begin, optimizer_end);
  if (pace != nullptr) {
    costs.forward_s = pace->work_s(forward_begin, forward_end);
    costs.optimizer_s = pace->work_s(optimizer_begin, optimizer_end);
  }
  costs.after_optimizer_s = compute_s(optimizer_end, end);

  costs.grad_ready_s.assign(num_params, -1.0);
  std::vector<double> bucket_ready(buckets.size(), -1.0);
  std::vector<double> allreduce_begin(buckets.size(), -1.0);
  const auto offset = [backward_begin](std::int64_t t_ns) { return span_s(backward_begin, t_ns); };
  for (const auto& [param, t_ns] : timeline.first_grad_ready) {
    if (static_cast<std::size_t>(param) < num_params) costs.grad_ready_s[static_cast<std::size_t>(param)] = offset(t_ns);
  }
  for (const auto& [bucket, t_ns] : timeline.bucket_ready) {
    if (static_cast<std::size_t>(bucket) < buckets.size()) bucket_ready[static_cast<std::size_t>(bucket)] = offset(t_ns);
  }
  for (const trace::BucketAllreduce& allreduce : timeline.allreduces) {  // in the order they began
    const auto bucket = static_cast<std::size_t>(allreduce.bucket);
    if (allreduce.bucket >= 0 && bucket < buckets.size() && allreduce_begin[bucket] < 0) {
      allreduce_begin[bucket] = offset(allreduce.interval.begin);
    }
  }
  const std::int64_t last_allreduce_end = std::max(backward_begin, timeline.last_allreduce_end);
  // The replay ends a collective on every rank at once. A rank measured leaving it later than
  // its first peer did spent that lag before its finalisation, so the lag stays in the tail and
  // the next iteration starts as late as it did. See Note [lagging exit] in docs/model.md.
  const std::int64_t collective_done =
      first_collective_end_ns >= 0 ? std::max(backward_begin, std::min(last_allreduce_end, first_collective_end_ns))
                                   : last_allreduce_end;

  // A bucket without its bucket_ready event is ready when its last gradient is, or else when
  // its all-reduce was launched.
  double compute_done = 0;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    if (bucket_ready[b] < 0) {
      for (int param : buckets[b]) {
        if (param >= 0 && static_cast<std::size_t>(param) < num_params) {
          bucket_ready[b] = std::max(bucket_ready[b], costs.grad_ready_s[static_cast<std::size_t>(param)]);
        }
      }
    }
    if (bucket_ready[b] < 0) bucket_ready[b] = std::max(allreduce_begin[b], 0.0);
    compute_done = std::max(compute_done, bucket_ready[b]);
  }
  for (double ready : costs.grad_ready_s) compute_done = std::max(compute_done, ready);
  costs.bucket_ready_s = std::move(bucket_ready);
  costs.backward_compute_s = compute_done;

  // backward_end waits for both autograd and the last all-reduce; what follows is mostly the
  // reducer's finalisation copying averaged gradients back (Note [reducer finalize]).
  const auto compute_done_ns = backward_begin + static_cast<std::int64_t>(compute_done / kNsToS);
  costs.backward_tail_s = compute_s(std::max(compute_done_ns, collective_done), backward_end);
  // What the finalize waited for, as the replay will see it: the collective ends on every rank
  // at once, when the first left it (a later rank's lag stays in the tail).
  recorded.autograd_done_s = compute_done;
  // Without backward_end the tail runs on to the optimizer or the iteration's end: not fitted.
  recorded.tail_s = timeline.backward.end >= 0 ? costs.backward_tail_s : std::numeric_limits<double>::quiet_NaN();
  recorded.allreduce_end_s.assign(buckets.size(), -1.0);
  for (const trace::BucketAllreduce& allreduce : timeline.allreduces) {
    const auto bucket = static_cast<std::size_t>(allreduce.bucket);
    if (allreduce.bucket >= 0 && bucket < buckets.size()) {
      recorded.allreduce_end_s[bucket] = offset(std::min(allreduce.interval.end, collective_done));
    }
  }
  const auto alone = [&](double offset) {
    return autograd_alone_s(offset, backward_begin, windows, compute_fraction, pace);
  };
  for (double& ready : costs.grad_ready_s) ready = alone(ready);
  for (double& ready : costs.bucket_ready_s) ready = alone(ready);
  costs.backward_compute_s = alone(costs.backward_compute_s);
  return costs;
}

// Field-wise aggregate (median or mean) of several iterations' costs of one rank.
RankIterationCosts aggregate(const std::vector<RankIterationCosts>& samples, ComputeMode mode) {
  const auto combine = [mode](const std::vector<double>& values) {
    return mode == ComputeMode::Mean ? mean_of(values) : median_of(values);
  };
  const auto field = [&](const std::function<double(const RankIterationCosts&)>& get) {
    std::vector<double> values;
    for (const auto& sample : samples) values.push_back(get(sample));
    return combine(values);
  };
  // Per element, ignoring unknown (negative) entries.
  const auto element_wise = [&](const std::function<const std::vector<double>&(const RankIterationCosts&)>& get) {
    const std::size_t size = get(samples.front()).size();
    std::vector<double> result(size, -1.0);
    for (std::size_t i = 0; i < size; ++i) {
      std::vector<double> values;
      for (const auto& sample : samples) {
        if (get(sample)[i] >= 0) values.push_back(get(sample)[i]);
      }
      if (!values.empty()) result[i] = combine(values);
    }
    return result;
  };

  RankIterationCosts result;
  result.stall_s = field([](const auto& c) { return c.stall_s; });
  result.before_forward_s = field([](const auto& c) { return c.before_forward_s; });
  result.forward_s = field([](const auto& c) { return c.forward_s; });
  result.before_backward_s = field([](const auto& c) { return c.before_backward_s; });
  result.backward_compute_s = field([](const auto& c) { return c.backward_compute_s; });
  result.backward_tail_s = field([](const auto& c) { return c.backward_tail_s; });
  result.finalize_exposed_s = field([](const auto& c) { return c.finalize_exposed_s; });
  result.before_optimizer_s = field([](const auto& c) { return c.before_optimizer_s; });
  result.optimizer_s = field([](const auto& c) { return c.optimizer_s; });
  result.after_optimizer_s = field([](const auto& c) { return c.after_optimizer_s; });
  result.bucket_ready_s = element_wise([](const auto& c) -> const std::vector<double>& { return c.bucket_ready_s; });
  result.grad_ready_s = element_wise([](const auto& c) -> const std::vector<double>& { return c.grad_ready_s; });
  // Aggregating field by field may put a bucket after the end of autograd; keep the order.
  for (double ready : result.bucket_ready_s) {
    result.backward_compute_s = std::max(result.backward_compute_s, ready);
  }
  return result;
}

// Iterations complete on every rank, under the last layout, training (not no_sync on rank 0) ones.
std::vector<std::int64_t> replayable_iterations(const trace::Trace& trace, const trace::Timelines& rank0,
                                                std::int64_t layout_first_iteration) {
  std::vector<std::int64_t> chosen;
  for (std::int64_t iteration : trace.complete_iterations()) {
    if (iteration >= layout_first_iteration && !rank0.at(iteration).no_sync) chosen.push_back(iteration);
  }
  return trace::without_warmup(std::move(chosen));
}

}  // namespace

WorkloadModel extract_workload(const trace::Trace& trace, ComputeMode mode, double compute_fraction_during_allreduce,
                               const std::function<double(double)>& core_slowdown) {
  if (!(compute_fraction_during_allreduce > 0 && compute_fraction_during_allreduce <= 1)) {
    throw WorkloadError("compute fraction during all-reduces: expected a number in (0, 1], got " +
                        std::to_string(compute_fraction_during_allreduce));
  }
  if (trace.ranks.empty()) throw WorkloadError(trace.dir + ": the trace has no rank");
  const trace::RunMeta& meta = trace.meta();

  WorkloadModel model;
  model.world_size = trace.world_size();
  model.mode = mode;
  model.source_meta = meta;
  model.source_dir = trace.dir;

  // The layout replayed is the last one DDP built; a trace without any recorded layout is
  // treated as DDP's iteration 0: one bucket, parameters in reverse registration order.
  std::int64_t layout_first_iteration = 0;
  if (!meta.bucket_assignments.empty()) {
    model.buckets = meta.bucket_assignments.back().buckets;
    layout_first_iteration = meta.bucket_assignments.back().first_iteration;
  } else {
    std::vector<int> all;
    for (auto p = meta.parameters.rbegin(); p != meta.parameters.rend(); ++p) all.push_back(p->index);
    model.buckets = {all};
  }

  std::vector<trace::Timelines> timelines;  // [rank]
  for (const trace::RankTrace& rank : trace.ranks) timelines.push_back(trace::build_timelines(rank));
  model.source_iterations = replayable_iterations(trace, timelines.front(), layout_first_iteration);
  if (model.source_iterations.empty()) {
    throw WorkloadError(trace.dir + ": expected a complete iteration (on every rank) under the last bucket layout (from iteration " +
                        std::to_string(layout_first_iteration) + "), got none");
  }

  // Bytes on the wire per bucket: what the all-reduces carried (an fp16 hook halves it),
  // else the layout's parameter bytes.
  trace::BucketAssignment layout{layout_first_iteration, model.buckets};
  std::vector<std::vector<double>> observed_bytes(model.buckets.size());
  const std::size_t num_params = meta.parameters.size();

  // The collective's transfers, only needed where they slowed autograd; one rank transfers
  // nothing (Note [local all-reduce work]).
  const std::map<std::int64_t, std::vector<CollectiveWindow>> windows =
      compute_fraction_during_allreduce < 1 && model.world_size > 1
          ? collective_windows(timelines, model.source_iterations)
          : std::map<std::int64_t, std::vector<CollectiveWindow>>{};
  static const std::vector<CollectiveWindow> kNoWindows;
  // Per iteration and host: when the last all-reduce ended on the first rank to leave it. Only
  // ranks of one host share a clock (traces/FORMAT.md: CLOCK_MONOTONIC of the rank's machine).
  std::map<std::pair<std::int64_t, std::string>, std::int64_t> first_collective_end;
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    for (std::int64_t iteration : model.source_iterations) {
      const std::int64_t end = timelines[r].at(iteration).last_allreduce_end;
      if (end < 0) continue;
      const auto key = std::make_pair(iteration, trace.ranks[r].meta.host);
      const auto [it, inserted] = first_collective_end.emplace(key, end);
      if (!inserted) it->second = std::min(it->second, end);
    }
  }
  std::optional<MeasuredPace> pace;
  if (core_slowdown) pace.emplace(timelines, core_slowdown, model.world_size);
  model.costs.resize(trace.ranks.size());
  std::vector<std::vector<RankIterationCosts>> samples(trace.ranks.size());
  // Every rank's iterations in one list (rank r's k-th at r × iterations + k): one fit for all.
  std::vector<RecordedFinalize> finalizes;
  finalizes.reserve(trace.ranks.size() * model.source_iterations.size());
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    for (std::int64_t iteration : model.source_iterations) {
      const trace::IterationTimeline& timeline = timelines[r].at(iteration);
      for (const trace::BucketAllreduce& allreduce : timeline.allreduces) {
        const auto bucket = static_cast<std::size_t>(allreduce.bucket);
        if (allreduce.bytes > 0 && allreduce.bucket >= 0 && bucket < observed_bytes.size()) {
          observed_bytes[bucket].push_back(static_cast<double>(allreduce.bytes));
        }
      }
      const auto found = windows.find(iteration);
      const auto first_end = first_collective_end.find(std::make_pair(iteration, trace.ranks[r].meta.host));
      finalizes.emplace_back();
      samples[r].push_back(costs_of(timeline, model.buckets, num_params,
                                    found == windows.end() ? kNoWindows : found->second,
                                    compute_fraction_during_allreduce,
                                    first_end == first_collective_end.end() ? -1 : first_end->second,
                                    pace ? &*pace : nullptr, finalizes.back()));
    }
  }

  for (std::size_t b = 0; b < model.buckets.size(); ++b) {
    model.bucket_bytes.push_back(
        observed_bytes[b].empty() ? meta.bucket_bytes(layout, static_cast<int>(b))
                                  : static_cast<std::int64_t>(median_of(observed_bytes[b])));
  }
  // One copy cost for the trace, from every rank's tails; each iteration keeps the rest of its
  // tail as measured (Note [reducer finalize]).
  model.finalize_seconds_per_byte = fit_finalize_seconds_per_byte(finalizes, model.bucket_bytes);
  // On a GPU the pass is a kernel on the stream; a lone NCCL rank's window times the stream's
  // queue, not work (Note [local all-reduce work]).
  if (model.world_size == 1 && meta.backend == "gloo") {
    model.local_seconds_per_byte = local_seconds_per_byte(timelines.front(), model.source_iterations);
  }
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    for (std::size_t k = 0; k < samples[r].size(); ++k) {
      const RecordedFinalize& recorded = finalizes[r * model.source_iterations.size() + k];
      // May exceed the tail where this iteration copied faster than the fit: the replay of
      // the same timeline still gives the tail back (tail - exposed + exposed).
      samples[r][k].finalize_exposed_s = finalize_exposed_s(recorded.autograd_done_s, recorded.allreduce_end_s,
                                                            model.bucket_bytes, model.finalize_seconds_per_byte);
    }
    if (mode == ComputeMode::PerIteration) {
      model.costs[r] = std::move(samples[r]);
    } else {
      model.costs[r] = {aggregate(samples[r], mode)};
    }
  }
  return model;
}

}  // namespace ddpsim::sim
