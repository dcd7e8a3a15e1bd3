// Every kind of collective wait a trace shows, and what it cannot show (advise.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "ddpsim/sim/advise.hpp"
#include "ddpsim/trace/timeline.hpp"

namespace ddpsim::sim {

namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

// DDP's first iteration (0, when the trace has it) and each iteration whose layout is new.
std::set<std::int64_t> first_iterations_of(const trace::Trace& trace) {
  std::set<std::int64_t> first;
  const std::vector<std::int64_t> complete = trace.complete_iterations();
  if (!complete.empty() && complete.front() == 0) first.insert(0);
  const auto& layouts = trace.meta().bucket_assignments;
  for (std::size_t i = 1; i < layouts.size(); ++i) first.insert(layouts[i].first_iteration);
  return first;
}

// iteration_begin → forward_begin on one rank, less the rank's own injected sleeps in it.
double before_forward_s(const trace::IterationTimeline& timeline) {
  if (!timeline.whole.complete() || timeline.forward.begin < timeline.whole.begin) return 0;
  std::int64_t ns = timeline.forward.begin - timeline.whole.begin;
  for (const trace::Stall& stall : timeline.delays) {
    ns -= trace::overlap_ns(stall.interval, trace::Interval{timeline.whole.begin, timeline.forward.begin});
  }
  return seconds(std::max<std::int64_t>(ns, 0));
}

double longest_allreduce_s(const trace::IterationTimeline& timeline) {
  double longest = 0;
  for (const trace::BucketAllreduce& allreduce : timeline.allreduces) {
    longest = std::max(longest, seconds(allreduce.interval.duration_ns()));
  }
  return longest;
}

// A rank's `collective` events, as intervals.
std::vector<trace::Interval> collective_events(const trace::RankTrace& rank) {
  std::vector<trace::Interval> events;
  for (const trace::Event& event : rank.events) {
    if (event.type == trace::EventType::Collective) events.push_back({event.t_ns, event.t_ns + std::max<std::int64_t>(event.dur_ns, 0)});
  }
  return events;
}

bool inside(const trace::Interval& inner, const trace::Interval& outer) {
  return outer.complete() && inner.begin >= outer.begin && inner.end <= outer.end;
}

// Where a checkpoint's barrier sits on one rank: from the end of iteration `i` (or of its
// evaluation) to the next iteration's begin; the end is open (int64 max) when the trace has no
// next iteration, and the window empty (begin -1) when iteration `i` did not end.
trace::Interval checkpoint_window(const trace::Timelines& timelines, std::int64_t i) {
  const auto here = timelines.find(i);
  if (here == timelines.end() || !here->second.whole.complete()) return {};
  std::int64_t from = here->second.whole.end;
  for (const trace::EvalPhase& eval : here->second.evals) from = std::max(from, eval.interval.end);
  const auto next = timelines.find(i + 1);
  const bool closed = next != timelines.end() && next->second.whole.begin >= from;
  return {from, closed ? next->second.whole.begin : std::numeric_limits<std::int64_t>::max()};
}

bool open_ended(const trace::Interval& window) { return window.end == std::numeric_limits<std::int64_t>::max(); }

std::int64_t checkpoint_every(const trace::Trace& trace) {
  const auto& settings = trace.meta().settings;
  const auto found = settings.find("checkpoint_every");
  if (found == settings.end()) return 0;
  try {
    return std::max<std::int64_t>(std::stoll(found->second), 0);
  } catch (const std::exception&) {
    return 0;
  }
}

bool imported(const trace::Trace& trace) { return trace.meta().source == "imported"; }

// ddp-train's record of DDP's start-up collectives (traces/FORMAT.md, `collective`).
bool start_up(const trace::Event& event) {
  return event.type == trace::EventType::Collective && event.message == "start_up";
}

CollectiveWaits kind_of(const std::string& kind, const std::string& what, bool bound = false) {
  CollectiveWaits waits;
  waits.kind = kind;
  waits.what = what;
  waits.bound = bound;
  return waits;
}

}  // namespace

std::vector<std::int64_t> steady_iterations(const trace::Trace& trace, const std::vector<std::int64_t>& source_iterations) {
  const std::set<std::int64_t> first = first_iterations_of(trace);
  std::vector<std::int64_t> steady;
  for (std::int64_t iteration : source_iterations) {
    if (!first.count(iteration)) steady.push_back(iteration);
  }
  return steady.empty() ? source_iterations : steady;
}

std::vector<CollectiveWaits> collective_waits(const trace::Trace& trace, const std::vector<std::int64_t>& steady,
                                              std::vector<UnaccountedKind>* unaccounted) {
  std::vector<trace::Timelines> timelines;
  std::vector<std::vector<trace::Interval>> collectives;
  for (const trace::RankTrace& rank : trace.ranks) {
    timelines.push_back(trace::build_timelines(rank));
    collectives.push_back(collective_events(rank));
  }
  const std::vector<std::int64_t> complete = trace.complete_iterations();
  const double iterations = std::max<double>(1, static_cast<double>(complete.size()));
  const std::set<std::int64_t> complete_set(complete.begin(), complete.end());
  // The longest over ranks of f(rank, its timeline of `iteration`); NaN when no rank has it.
  const auto longest_over_ranks = [&](std::int64_t iteration, auto f) {
    double longest = std::nan("");
    for (std::size_t r = 0; r < timelines.size(); ++r) {
      const auto found = timelines[r].find(iteration);
      if (found == timelines[r].end()) continue;
      const double value = f(r, found->second);
      if (!(value <= longest)) longest = value;
    }
    return longest;
  };

  std::vector<CollectiveWaits> kinds;
  CollectiveWaits gradient = kind_of("gradient_allreduce",
                           "each iteration's gradient all-reduces: the longest allreduce_end - allreduce_begin of any rank and bucket");
  CollectiveWaits before_forward = kind_of("before_forward",
                                 "before each forward pass: DDP's buffer broadcast (models with buffers), iteration_begin to "
                                 "forward_begin less the rank's own injected sleeps");
  for (std::int64_t iteration : steady) {
    bool any_allreduce = false;
    for (const trace::Timelines& rank : timelines) {
      const auto found = rank.find(iteration);
      if (found != rank.end() && !found->second.allreduces.empty()) any_allreduce = true;
    }
    if (any_allreduce) {
      gradient.waits_s.push_back(longest_over_ranks(iteration, [](std::size_t, const auto& t) { return longest_allreduce_s(t); }));
    }
    before_forward.waits_s.push_back(longest_over_ranks(iteration, [](std::size_t, const auto& t) { return before_forward_s(t); }));
  }
  gradient.occurrences_per_iteration = 1;
  before_forward.occurrences_per_iteration = 1;
  if (!gradient.waits_s.empty()) kinds.push_back(gradient);

  CollectiveWaits first = kind_of("first_iterations",
                        "DDP's first iteration and each bucket rebuild (the layout's broadcast before the forward pass): the "
                        "longest of their all-reduces and their start until forward_begin");
  for (std::int64_t iteration : first_iterations_of(trace)) {
    if (!complete_set.count(iteration)) continue;
    first.waits_s.push_back(longest_over_ranks(iteration, [](std::size_t, const auto& t) {
      return std::max(longest_allreduce_s(t), before_forward_s(t));
    }));
    first.phase_max_s = std::max(first.phase_max_s, longest_over_ranks(iteration, [](std::size_t, const auto& t) {
                                                       return seconds(t.whole.duration_ns());
                                                     }));
  }
  first.occurrences_per_iteration = static_cast<double>(first.waits_s.size()) / iterations;
  if (!first.waits_s.empty()) kinds.push_back(first);

  const bool buffers_seen = std::any_of(before_forward.waits_s.begin(), before_forward.waits_s.end(),
                                        [](double wait) { return wait > 0; });
  if (buffers_seen) kinds.push_back(before_forward);

  // Evaluation: occurrence (iteration, k-th phase of it); on each rank the longest collective
  // event inside the phase, else the phase's length.
  CollectiveWaits evaluation = kind_of("evaluation", "");
  std::map<std::pair<std::int64_t, std::size_t>, double> eval_waits;
  bool eval_exact = true;
  for (std::size_t r = 0; r < timelines.size(); ++r) {
    for (const auto& [iteration, timeline] : timelines[r]) {
      for (std::size_t k = 0; k < timeline.evals.size(); ++k) {
        const trace::Interval& phase = timeline.evals[k].interval;
        if (!phase.complete()) continue;
        double wait = -1;
        for (const trace::Interval& collective : collectives[r]) {
          if (inside(collective, phase)) wait = std::max(wait, seconds(collective.end - collective.begin));
        }
        if (wait < 0) {
          wait = seconds(phase.duration_ns());
          eval_exact = false;
        }
        double& longest = eval_waits[{iteration, k}];
        longest = std::max(longest, wait);
        evaluation.phase_max_s = std::max(evaluation.phase_max_s, seconds(phase.duration_ns()));
      }
    }
  }
  for (const auto& [key, wait] : eval_waits) evaluation.waits_s.push_back(wait);
  evaluation.bound = !eval_exact;
  evaluation.what = eval_exact ? "each evaluation's collectives (its `collective` events)"
                               : "each evaluation's all-reduce of its counts: the phase's length (eval_begin to eval_end) "
                                 "bounds the wait, since the trace does not show when a rank entered the collective";
  evaluation.occurrences_per_iteration = static_cast<double>(evaluation.waits_s.size()) / iterations;
  if (!evaluation.waits_s.empty()) kinds.push_back(evaluation);

  // Checkpoints: after iteration i with (i + 1) % checkpoint_every == 0. On each rank the
  // longest collective event in its window, else the window itself (a bound; none when open).
  const std::int64_t every = checkpoint_every(trace);
  const auto in_checkpoint = [every, &timelines](std::size_t r, const trace::Interval& span, std::int64_t iteration) {
    if (every <= 0 || (iteration + 1) % every != 0) return false;
    const trace::Interval window = checkpoint_window(timelines[r], iteration);
    return window.begin >= 0 && span.begin >= window.begin && span.end <= window.end;
  };
  CollectiveWaits checkpoint = kind_of("checkpoint", "");
  bool checkpoint_exact = true;
  if (every > 0) {
    for (std::int64_t iteration : complete) {
      if ((iteration + 1) % every != 0) continue;
      double longest = -1;
      for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const trace::Interval window = checkpoint_window(timelines[r], iteration);
        if (window.begin < 0) continue;
        double wait = -1;
        for (const trace::Event& event : trace.ranks[r].events) {
          const trace::Interval span{event.t_ns, event.t_ns + std::max<std::int64_t>(event.dur_ns, 0)};
          if (event.type == trace::EventType::Collective && !start_up(event) && event.iteration == iteration &&
              in_checkpoint(r, span, iteration)) {
            wait = std::max(wait, seconds(span.duration_ns()));
          }
        }
        if (!open_ended(window)) checkpoint.phase_max_s = std::max(checkpoint.phase_max_s, seconds(window.duration_ns()));
        if (wait < 0 && !open_ended(window)) {
          wait = seconds(window.duration_ns());
          checkpoint_exact = false;
        }
        longest = std::max(longest, wait);
      }
      if (longest >= 0) checkpoint.waits_s.push_back(longest);
    }
  }
  checkpoint.bound = !checkpoint_exact;
  checkpoint.what = checkpoint_exact
                        ? "each checkpoint's barrier (its `collective` events)"
                        : "each checkpoint's barrier (rank 0 writes, every rank meets): the gap from the iteration's end (or "
                          "its evaluation's) to the next iteration_begin bounds the wait";
  checkpoint.occurrences_per_iteration = static_cast<double>(checkpoint.waits_s.size()) / iterations;
  if (!checkpoint.waits_s.empty()) kinds.push_back(checkpoint);

  // DDP's start-up (`collective` events with message start_up: the parameter check and the
  // broadcast of rank 0's parameters and buffers), matched across ranks by (iteration, kind,
  // order), as other collectives: once per run, so never enough to fit a tail.
  CollectiveWaits start = kind_of("start_up",
                                  "DDP's start-up collectives before the first iteration (the parameter check's all_gather and "
                                  "the broadcast of rank 0's parameters and buffers, `collective` events with message "
                                  "start_up): the longest any rank waited in each");
  start.once_per_run = true;
  std::map<std::tuple<std::int64_t, std::string, int>, double> start_waits;
  for (const trace::RankTrace& rank : trace.ranks) {
    std::map<std::pair<std::int64_t, std::string>, int> seen;
    for (const trace::Event& event : rank.events) {
      if (!start_up(event)) continue;
      const int order = seen[{event.iteration, event.kind}]++;
      double& longest = start_waits[{event.iteration, event.kind, order}];
      longest = std::max(longest, seconds(std::max<std::int64_t>(event.dur_ns, 0)));
    }
  }
  for (const auto& [key, wait] : start_waits) start.waits_s.push_back(wait);
  start.occurrences_per_iteration = static_cast<double>(start.waits_s.size()) / iterations;
  if (!start.waits_s.empty()) kinds.push_back(start);

  // Other collectives: `collective` events outside evaluations, checkpoints and the start-up,
  // matched across ranks by (iteration, kind, their order in it on the rank).
  CollectiveWaits other = kind_of("other_collectives",
                        "every other collective the trace records (`collective` events: all_gather, broadcast, ...): its "
                        "measured duration");
  std::map<std::tuple<std::int64_t, std::string, int>, double> other_waits;
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    std::map<std::pair<std::int64_t, std::string>, int> seen;
    for (const trace::Event& event : trace.ranks[r].events) {
      if (event.type != trace::EventType::Collective || start_up(event)) continue;
      const trace::Interval span{event.t_ns, event.t_ns + std::max<std::int64_t>(event.dur_ns, 0)};
      bool in_eval = false;
      const auto timeline = timelines[r].find(event.iteration);
      if (timeline != timelines[r].end()) {
        for (const trace::EvalPhase& eval : timeline->second.evals) in_eval = in_eval || inside(span, eval.interval);
      }
      if (in_eval || in_checkpoint(r, span, event.iteration)) continue;
      const int order = seen[{event.iteration, event.kind}]++;
      double& longest = other_waits[{event.iteration, event.kind, order}];
      longest = std::max(longest, seconds(span.duration_ns()));
    }
  }
  for (const auto& [key, wait] : other_waits) other.waits_s.push_back(wait);
  other.occurrences_per_iteration = static_cast<double>(other.waits_s.size()) / iterations;
  if (!other.waits_s.empty()) kinds.push_back(other);

  if (unaccounted != nullptr) {
    if (start.waits_s.empty()) {
      unaccounted->push_back({"start_up", std::string("DDP's start-up (the parameter check and broadcast from rank 0, after the "
                                                      "rendezvous) waits for the slowest rank's launch and model construction; ") +
                                              (imported(trace) ? "a profiler import does not record it"
                                                               : "the trace does not record it (ddp-train records it as "
                                                                 "`collective` events with message start_up)")});
    }
    if (first.waits_s.empty()) {
      const std::string from = complete.empty() ? "?" : std::to_string(complete.front());
      unaccounted->push_back({"first_iterations", "the trace starts at iteration " + from +
                                                      (imported(trace) ? " (a profiler import)" : " (a resumed run)") +
                                                      ": DDP's first iteration and its bucket rebuild are not in it"});
    }
    if (evaluation.waits_s.empty()) {
      unaccounted->push_back(
          {"evaluation", imported(trace) ? "a profiler import has no evaluation phases (torch.profiler records the training steps)"
                                         : "the recorded run evaluated nothing (ddp-train --eval-every K records eval_begin/eval_end)"});
    }
    if (checkpoint.waits_s.empty()) {
      std::string reason;
      if (imported(trace)) {
        reason = "a profiler import marks no checkpoint";
      } else if (every > 0) {
        reason = "checkpoints every " + std::to_string(every) + " iterations, none between two recorded iterations";
      } else {
        reason = "the trace marks no checkpoint (ddp-train --checkpoint-every K records settings.checkpoint_every)";
      }
      unaccounted->push_back({"checkpoint", reason + ": a checkpoint barrier's wait is not covered"});
    }
  }
  return kinds;
}

double longest_between_collectives_s(const trace::Trace& trace) {
  const std::int64_t every = checkpoint_every(trace);
  const std::set<std::int64_t> first = first_iterations_of(trace);
  std::int64_t longest = 0;
  for (const trace::RankTrace& rank : trace.ranks) {
    const trace::Timelines timelines = trace::build_timelines(rank);
    std::vector<trace::Interval> spans = collective_events(rank);
    for (const auto& [iteration, timeline] : timelines) {
      for (const trace::BucketAllreduce& allreduce : timeline.allreduces) spans.push_back(allreduce.interval);
      // Without collective events, an evaluation's all-reduce comes at its end (after its compute).
      for (const trace::EvalPhase& eval : timeline.evals) {
        if (eval.interval.complete()) spans.push_back({eval.interval.end, eval.interval.end});
      }
      if (first.count(iteration) && timeline.forward.begin >= 0) spans.push_back({timeline.forward.begin, timeline.forward.begin});
      if (every > 0 && (iteration + 1) % every == 0) {
        const trace::Interval window = checkpoint_window(timelines, iteration);
        if (window.begin >= 0 && !open_ended(window)) spans.push_back({window.end, window.end});
      }
    }
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
    std::int64_t left = -1;  // the latest end so far
    for (const trace::Interval& span : spans) {
      if (left >= 0) longest = std::max(longest, span.begin - left);
      left = std::max(left, span.end);
    }
  }
  return seconds(longest);
}

std::string advisable_problem(const trace::Trace& trace, const AdviceSetup& setup) {
  if (trace.world_size() < 2) {
    return trace.dir + ": expected a trace of 2 or more ranks, got 1 (one rank waits for no peer: no timeout, bucket "
                       "or straggler to advise)";
  }
  const auto replayable = static_cast<int>(setup.model.source_iterations.size());
  if (replayable < kMinAdviceIterations) {
    return trace.dir + ": expected at least " + std::to_string(kMinAdviceIterations) +
           " complete iterations after DDP's first to advise from, got " + std::to_string(replayable) +
           (imported(trace) ? " (profile more steps: torch.profiler's schedule active=20 or more)"
                             : " (record a longer run: ddp-train --iterations 20 or more)");
  }
  return "";
}

std::string few_iterations_warning(const AdviceSetup& setup) {
  const auto replayable = static_cast<int>(setup.model.source_iterations.size());
  if (replayable >= kFewIterations) return "";
  return "the answers rest on " + std::to_string(replayable) + " iterations (fewer than " + std::to_string(kFewIterations) +
         "): their intervals see only these; record more iterations (or profiler steps) to trust them";
}

std::vector<std::string> import_lacks(const trace::Trace& trace) {
  std::vector<std::string> lacks;
  if (!imported(trace)) return lacks;
  const auto& settings = trace.meta().settings;
  const auto setting = [&](const std::string& key) {
    const auto found = settings.find(key);
    return found == settings.end() ? std::string() : found->second;
  };
  lacks.push_back("no evaluation, checkpoint or start-up phases: torch.profiler records the training steps only");
  if (setting("parameters") == "per-bucket") {
    lacks.push_back("gradients per bucket, not per parameter (profiled without record_shapes=True): other bucket caps merge "
                    "and split the recorded buckets, approximately");
  }
  if (!setting("replicated_from_rank").empty()) {
    lacks.push_back("one rank's profile (rank " + setting("replicated_from_rank") +
                    ") copied to every rank: no skew between ranks, so the waits and stragglers are that rank's alone");
  }
  if (setting("allreduce_timing").rfind("none", 0) == 0) {
    lacks.push_back("no all-reduce timing (" + setting("allreduce_timing") + "): the waits are zero-length");
  }
  if (!setting("skipped_steps").empty()) {
    lacks.push_back("steps left out (" + setting("skipped_steps") + "): their waits are not in the answers");
  }
  return lacks;
}

}  // namespace ddpsim::sim
