// Extracting per-rank compute phases and bucket-ready offsets from a trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

TEST(WorkloadModel, MedianPhasesPerRank) {
  testing::SyntheticRun run;
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::Median);
  EXPECT_EQ(model.world_size, run.world_size);
  EXPECT_EQ(model.source_iterations, (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(model.buckets, run.buckets);
  ASSERT_EQ(model.bucket_bytes.size(), 4u);
  EXPECT_EQ(model.bucket_bytes[0], 4 * (128 + 2097152));
  for (int r = 0; r < run.world_size; ++r) {
    const RankIterationCosts& costs = model.costs_for(r, 0);
    const double f = 1 + run.rank_skew * r;  // the jitter's median is 1
    EXPECT_NEAR(costs.forward_s, f * run.forward_s, 2e-9);
    EXPECT_NEAR(costs.before_forward_s, f * run.before_forward_s, 2e-9);
    EXPECT_NEAR(costs.backward_compute_s, f * run.backward_s, 2e-9);
    EXPECT_NEAR(costs.backward_tail_s, f * run.backward_tail_s, 2e-9);
    EXPECT_NEAR(costs.optimizer_s, f * run.optimizer_s, 2e-9);
    EXPECT_NEAR(costs.after_optimizer_s, f * run.after_optimizer_s, 2e-9);
    ASSERT_EQ(costs.bucket_ready_s.size(), 4u);
    for (std::size_t b = 1; b < 4; ++b) EXPECT_GT(costs.bucket_ready_s[b], costs.bucket_ready_s[b - 1]);
    EXPECT_NEAR(costs.bucket_ready_s.back(), costs.backward_compute_s, 2e-9);
    // The first bucket holds the last two parameters: ready after their gradients.
    EXPECT_NEAR(costs.bucket_ready_s[0], costs.grad_ready_s[6], 2e-9);
  }
}

// A phase runs to its last end, as the trace library pairs it (trace/timeline.hpp) for the
// summary and the Chrome export: a second iteration_end, half-way to the next event, lengthens
// the time after the optimizer by that much.
TEST(WorkloadModel, APhaseEndsAtItsLastEnd) {
  const trace::Trace trace = testing::make_synthetic_trace(testing::SyntheticRun{});
  trace::Trace repeated = trace;
  auto& events = repeated.ranks[0].events;
  const auto end = std::find_if(events.begin(), events.end(), [](const trace::Event& e) {
    return e.iteration == 3 && e.type == trace::EventType::OptimizerEnd;
  });
  ASSERT_NE(end, events.end());
  ASSERT_NE(std::next(end), events.end());
  trace::Event again = *end;
  again.t_ns += (std::next(end)->t_ns - end->t_ns) / 2;
  const double later_s = static_cast<double>(again.t_ns - end->t_ns) * 1e-9;
  ASSERT_GT(later_s, 0);
  events.insert(std::next(end), again);

  const WorkloadModel model = extract_workload(trace, ComputeMode::PerIteration);
  const WorkloadModel changed = extract_workload(repeated, ComputeMode::PerIteration);
  const auto index = static_cast<std::int64_t>(
      std::find(model.source_iterations.begin(), model.source_iterations.end(), 3) - model.source_iterations.begin());
  EXPECT_NEAR(changed.costs_for(0, index).optimizer_s, model.costs_for(0, index).optimizer_s + later_s, 1e-12);
  EXPECT_NEAR(changed.costs_for(0, index).after_optimizer_s, model.costs_for(0, index).after_optimizer_s - later_s, 1e-12);
  EXPECT_NEAR(changed.costs_for(0, index + 1).optimizer_s, model.costs_for(0, index + 1).optimizer_s, 1e-12);
}

// The replay ends a collective on every rank at once; a rank measured leaving it later than its
// first peer keeps that lag in its tail (the next iteration starts as late as measured). Ranks
// on another host have another clock: their lag is not read across hosts.
TEST(WorkloadModel, ALateExitFromTheLastAllReduceStaysInTheTail) {
  const trace::Trace trace = testing::make_synthetic_trace(testing::SyntheticRun{});
  trace::Trace late = trace;
  auto& events = late.ranks[1].events;
  auto last_end = events.end();
  for (auto e = events.begin(); e != events.end(); ++e) {
    if (e->iteration == 3 && e->type == trace::EventType::AllreduceEnd) last_end = e;
  }
  ASSERT_NE(last_end, events.end());
  ASSERT_NE(std::next(last_end), events.end());
  const std::int64_t lag_ns = (std::next(last_end)->t_ns - last_end->t_ns) / 2;
  ASSERT_GT(lag_ns, 0);
  last_end->t_ns += lag_ns;
  trace::Trace other_host = late;
  other_host.ranks[1].meta.host = "another-machine";

  const WorkloadModel model = extract_workload(trace, ComputeMode::PerIteration);
  const WorkloadModel same = extract_workload(late, ComputeMode::PerIteration);
  const WorkloadModel apart = extract_workload(other_host, ComputeMode::PerIteration);
  const auto index = static_cast<std::int64_t>(
      std::find(model.source_iterations.begin(), model.source_iterations.end(), 3) - model.source_iterations.begin());
  ASSERT_LT(static_cast<std::size_t>(index), model.source_iterations.size());
  const double tail_s = model.costs_for(1, index).backward_tail_s;
  ASSERT_GT(tail_s, 0);
  EXPECT_NEAR(same.costs_for(1, index).backward_tail_s, tail_s, 2e-9);
  EXPECT_NEAR(apart.costs_for(1, index).backward_tail_s, tail_s - static_cast<double>(lag_ns) * 1e-9, 2e-9);
  EXPECT_NEAR(same.costs_for(0, index).backward_tail_s, model.costs_for(0, index).backward_tail_s, 2e-9);
}

TEST(WorkloadModel, PerIterationKeepsEveryIteration) {
  testing::SyntheticRun run;
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::PerIteration);
  ASSERT_EQ(model.costs[0].size(), 9u);
  // Simulated iteration 1 replays source iteration 2 (jitter 0.97), and it cycles.
  EXPECT_NEAR(model.costs_for(0, 1).forward_s, 0.97 * run.forward_s, 2e-9);
  EXPECT_NEAR(model.costs_for(0, 10).forward_s, 0.97 * run.forward_s, 2e-9);
}

TEST(WorkloadModel, MeanDiffersFromMedianUnderSkewedJitter) {
  testing::SyntheticRun run;
  run.jitter = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.9};
  const trace::Trace trace = testing::make_synthetic_trace(run);
  const double median = extract_workload(trace, ComputeMode::Median).costs_for(0, 0).forward_s;
  const double mean = extract_workload(trace, ComputeMode::Mean).costs_for(0, 0).forward_s;
  EXPECT_NEAR(median, run.forward_s, 2e-9);
  EXPECT_NEAR(mean, run.forward_s * (8 + 1.9) / 9, 2e-9);
}

TEST(WorkloadModel, IterationZeroAloneIsUsed) {
  testing::SyntheticRun run;
  run.iterations = 1;
  trace::Trace trace = testing::make_synthetic_trace(run);
  for (auto& rank : trace.ranks) rank.meta.bucket_assignments.resize(1);  // no rebuilt layout yet
  const WorkloadModel model = extract_workload(trace, ComputeMode::Median);
  EXPECT_EQ(model.source_iterations, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(model.buckets.size(), 1u);
}

TEST(WorkloadModel, NoCompleteIterationIsAnError) {
  testing::SyntheticRun run;
  run.iterations = 2;
  trace::Trace trace = testing::make_synthetic_trace(run);
  // Rank 1 died during iteration 1: drop its iteration_end.
  auto& events = trace.ranks[1].events;
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const trace::Event& e) { return e.iteration == 1 && e.type == trace::EventType::IterationEnd; }),
               events.end());
  EXPECT_THROW(extract_workload(trace, ComputeMode::Median), WorkloadError);
}

TEST(WorkloadModel, ComputeModeNames) {
  EXPECT_EQ(compute_mode_from_string("per-iteration"), ComputeMode::PerIteration);
  EXPECT_FALSE(compute_mode_from_string("max").has_value());
}

// An evaluation of `seconds` on every rank during or after `iteration`: starting at its
// optimizer_end (inside the iteration's bounds) or at its iteration_end (between iterations, as
// ddp-train records it). Every later event moves by `seconds`, as in a real run.
trace::Trace with_evaluation(trace::Trace trace, std::int64_t iteration, double seconds, bool inside) {
  const auto length = static_cast<std::int64_t>(seconds * 1e9);
  const trace::EventType after = inside ? trace::EventType::OptimizerEnd : trace::EventType::IterationEnd;
  for (auto& rank : trace.ranks) {
    auto& events = rank.events;
    const auto at = std::find_if(events.begin(), events.end(), [&](const trace::Event& e) {
      return e.iteration == iteration && e.type == after;
    });
    const std::int64_t start = at->t_ns;
    const auto position = at - events.begin() + 1;
    for (auto e = events.begin() + position; e != events.end(); ++e) e->t_ns += length;
    trace::Event begin = *at;
    begin.type = trace::EventType::EvalBegin;
    trace::Event end = begin;
    end.type = trace::EventType::EvalEnd;
    end.t_ns = start + length;
    end.message = "812/1000";
    events.insert(events.begin() + position, {begin, end});
  }
  return trace;
}

// #20: evaluation time is not training compute, wherever the evaluation sits.
TEST(WorkloadModel, EvaluationIsNotCompute) {
  testing::SyntheticRun run;
  const trace::Trace plain = testing::make_synthetic_trace(run);
  const WorkloadModel reference = extract_workload(plain, ComputeMode::PerIteration);
  for (const bool inside : {false, true}) {
    const WorkloadModel model =
        extract_workload(with_evaluation(plain, 4, 2.5, inside), ComputeMode::PerIteration);
    ASSERT_EQ(model.source_iterations, reference.source_iterations);
    for (int r = 0; r < run.world_size; ++r) {
      for (std::size_t i = 0; i < model.source_iterations.size(); ++i) {
        EXPECT_NEAR(model.costs_for(r, static_cast<std::int64_t>(i)).compute_total_s(),
                    reference.costs_for(r, static_cast<std::int64_t>(i)).compute_total_s(), 2e-9)
            << "rank " << r << " iteration " << model.source_iterations[i]
            << (inside ? " (evaluation inside)" : " (evaluation after)");
      }
    }
  }
}

// #20: the replay plays an evaluation between iterations as its own phase (eval_begin ..
// eval_end, its CORRECT/TOTAL carried over), not as compute: every iteration lasts as long as
// without it, and the next one starts after it.
TEST(WorkloadModel, ReplayKeepsEvaluationAsItsOwnPhase) {
  testing::SyntheticRun run;
  const trace::Trace plain = testing::make_synthetic_trace(run);
  ReplayOptions options;
  options.alpha_s = options.platform.alpha_s = run.alpha_s;
  options.beta_bytes_per_s = options.platform.beta_bytes_per_s = run.beta_bytes_per_s;
  options.iterations = run.iterations;
  const ReplayResult without = replay_isolated(extract_workload(plain, ComputeMode::PerIteration), options);
  const ReplayResult with = replay_isolated(
      extract_workload(with_evaluation(plain, 4, 2.5, false), ComputeMode::PerIteration), options);
  ASSERT_TRUE(with.failure.empty()) << with.failure;
  const auto durations = [](const std::vector<trace::Event>& events) {
    std::map<std::int64_t, std::int64_t> begin;
    std::map<std::int64_t, double> length;
    for (const auto& e : events) {
      if (e.type == trace::EventType::IterationBegin) begin[e.iteration] = e.t_ns;
      if (e.type == trace::EventType::IterationEnd) length[e.iteration] = (e.t_ns - begin[e.iteration]) * 1e-9;
    }
    return length;
  };
  for (int r = 0; r < run.world_size; ++r) {
    const auto& events = with.events.at(static_cast<std::size_t>(r));
    std::vector<trace::Event> evals;
    for (const auto& e : events) {
      if (e.type == trace::EventType::EvalBegin || e.type == trace::EventType::EvalEnd) evals.push_back(e);
    }
    ASSERT_EQ(evals.size(), 2u) << "rank " << r;
    EXPECT_EQ(evals[0].type, trace::EventType::EvalBegin);
    EXPECT_EQ(evals[0].iteration, 4);
    EXPECT_NEAR((evals[1].t_ns - evals[0].t_ns) * 1e-9, 2.5, 1e-6);
    EXPECT_EQ(evals[1].message, "812/1000");
    const auto& next_begin = *std::find_if(events.begin(), events.end(), [](const trace::Event& e) {
      return e.type == trace::EventType::IterationBegin && e.iteration == 5;
    });
    EXPECT_GE(next_begin.t_ns, evals[1].t_ns);
    const auto a = durations(events);
    const auto b = durations(without.events.at(static_cast<std::size_t>(r)));
    ASSERT_EQ(a.size(), b.size());
    // Iteration 5 waits in its all-reduces for ranks that start it at different times: the
    // same as without the evaluation, since every rank evaluates for the same 2.5 s.
    for (const auto& [iteration, seconds] : b) EXPECT_NEAR(a.at(iteration), seconds, 1e-6) << "iteration " << iteration;
  }
}

// #20: an AMP step skipped for a non-finite gradient all-reduced like any other, so it is
// replayed with its buckets (only no_sync steps are left out).
TEST(WorkloadModel, SkippedAmpStepStillAllReduces) {
  testing::SyntheticRun run;
  trace::Trace trace = testing::make_synthetic_trace(run);
  for (auto& rank : trace.ranks) {
    for (auto& e : rank.events) {
      if (e.type == trace::EventType::OptimizerEnd) {
        e.kind = e.iteration == 3 ? "skipped" : "stepped";
        e.message = e.iteration <= 3 ? "65536" : "32768";
      }
    }
  }
  const WorkloadModel model = extract_workload(trace, ComputeMode::PerIteration);
  EXPECT_EQ(model.source_iterations, (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const RankIterationCosts& skipped = model.costs_for(0, 2);  // source iteration 3
  ASSERT_EQ(skipped.bucket_ready_s.size(), run.buckets.size());
  for (double ready : skipped.bucket_ready_s) EXPECT_GE(ready, 0.0);
  EXPECT_EQ(model.bucket_bytes[0], 4 * (128 + 2097152));
}

TEST(SharedCores, StretchIsRanksPerCoreOverTheTracesOwn) {
  EXPECT_DOUBLE_EQ(shared_cores_stretch(2, 2, 4), 2.0);  // 2 ranks on 2 cores -> 4: x2
  EXPECT_DOUBLE_EQ(shared_cores_stretch(2, 1, 2), 1.0);  // never below one rank per core
  EXPECT_DOUBLE_EQ(shared_cores_stretch(2, 2, 3), 1.5);
  EXPECT_DOUBLE_EQ(shared_cores_stretch(2, 4, 2), 0.5);  // a trace that was itself oversubscribed
  EXPECT_DOUBLE_EQ(shared_cores_stretch(16, 2, 8), 1.0);
}

// Effective cores: two ranks that each run 1.25x slower together make a 2-core machine worth
// 1.6 ranks running alone. 1 -> 2 ranks is then stretched 1.25x; past saturation the stretch
// is the ratio of ranks, as with whole cores.
TEST(SharedCores, EffectiveCoresStretchOneToTwoRanksByTheCoRunSlowdown) {
  EXPECT_DOUBLE_EQ(shared_cores_stretch(1.6, 1, 2), 1.25);
  EXPECT_DOUBLE_EQ(shared_cores_stretch(1.6, 2, 3), 1.5);
  EXPECT_DOUBLE_EQ(shared_cores_stretch(1.6, 2, 4), 2.0);
  EXPECT_DOUBLE_EQ(shared_cores_stretch(1.6, 1, 1), 1.0);
}

// Co-running measured at 2 and 4 ranks: C(2) = 1.8, C(4) = 1.5 effective cores, so one rank
// runs 2/1.8 = 1.111x slower with 2 ranks and 4/1.5 = 2.667x with 4; C(3) = 1.65 lies between
// (3/1.65 = 1.818x), and past 4 the ranks time-share 1.5 cores (6/1.5 = 4x).
TEST(SharedCores, CoRunMeasuredAtSeveralRankCounts) {
  const std::map<int, double> measured = {{2, 1.8}, {4, 1.5}};
  EXPECT_NEAR(corun_stretch(measured, 2, 4), (4 / 1.5) / (2 / 1.8), 1e-12);  // 2.4, not --cores 1.8's 2.0
  EXPECT_NEAR(corun_stretch(measured, 1, 2), 2 / 1.8, 1e-12);
  EXPECT_NEAR(corun_stretch(measured, 2, 3), (3 / 1.65) / (2 / 1.8), 1e-12);
  EXPECT_NEAR(corun_stretch(measured, 2, 6), (6 / 1.5) / (2 / 1.8), 1e-12);
  EXPECT_NEAR(corun_stretch(measured, 4, 2), (2 / 1.8) / (4 / 1.5), 1e-12);
  EXPECT_DOUBLE_EQ(corun_stretch(measured, 1, 1), 1.0);
  // One measured count is --cores of that many effective cores, at every world size.
  for (int from = 1; from <= 4; ++from) {
    for (int to = 1; to <= 6; ++to) {
      EXPECT_NEAR(corun_stretch({{2, 1.833}}, from, to), shared_cores_stretch(1.833, from, to), 1e-12)
          << from << " -> " << to;
    }
  }
}

TEST(SharedCores, StretchScalesEveryComputePhaseAndKeepsUnknownGradients) {
  testing::SyntheticRun run;
  const WorkloadModel measured = extract_workload(testing::make_synthetic_trace(run), ComputeMode::PerIteration);
  WorkloadModel model = measured;
  model.costs[1][2].grad_ready_s[0] = -1;  // unknown
  stretch_compute(model, 2.5);
  for (std::size_t r = 0; r < model.costs.size(); ++r) {
    for (std::size_t k = 0; k < model.costs[r].size(); ++k) {
      const RankIterationCosts& before = measured.costs[r][k];
      const RankIterationCosts& after = model.costs[r][k];
      EXPECT_NEAR(after.compute_total_s(), 2.5 * before.compute_total_s(), 1e-12);
      EXPECT_NEAR(after.forward_s, 2.5 * before.forward_s, 1e-12);
      for (std::size_t b = 0; b < after.bucket_ready_s.size(); ++b) {
        EXPECT_NEAR(after.bucket_ready_s[b], 2.5 * before.bucket_ready_s[b], 1e-12);
      }
    }
  }
  EXPECT_EQ(model.costs[1][2].grad_ready_s[0], -1);
  EXPECT_NEAR(model.costs[1][2].grad_ready_s[1], 2.5 * measured.costs[1][2].grad_ready_s[1], 1e-12);
  EXPECT_EQ(model.bucket_bytes, measured.bucket_bytes);  // communication untouched
}

// An injected stall is not compute: it is cut out of before_forward, kept as stall_s, replayed
// where it was, and neither a slowdown nor --cores stretches it.
TEST(WorkloadModel, InjectedStallIsNotCompute) {
  testing::SyntheticRun run;
  run.stall_rank = 1;
  run.stall_iteration = 5;
  run.stall_s = 0.2;
  const trace::Trace measured = testing::make_synthetic_trace(run);
  WorkloadModel model = extract_workload(measured, ComputeMode::PerIteration);
  const auto k = static_cast<std::size_t>(std::find(model.source_iterations.begin(), model.source_iterations.end(), 5) -
                                          model.source_iterations.begin());
  const RankIterationCosts& stalled = model.costs[1][k];
  EXPECT_NEAR(stalled.stall_s, 0.2, 1e-9);
  EXPECT_LT(stalled.before_forward_s, 2 * run.before_forward_s);  // the 200 ms are not in it
  EXPECT_EQ(model.costs[0][k].stall_s, 0);
  stretch_compute(model, 2);
  EXPECT_NEAR(model.costs[1][k].stall_s, 0.2, 1e-9);
  // Median compute: one stalled iteration of nine is not the typical one.
  EXPECT_EQ(extract_workload(measured, ComputeMode::Median).costs[1][0].stall_s, 0);
}

TEST(WorkloadModel, ReplayedStallKeepsItsPlaceAndIsNotSlowedDown) {
  testing::SyntheticRun run;
  run.stall_rank = 1;
  run.stall_iteration = 5;
  run.stall_s = 0.2;
  const WorkloadModel model = extract_workload(testing::make_synthetic_trace(run), ComputeMode::PerIteration);
  ReplayOptions options;
  options.iterations = static_cast<std::int64_t>(model.source_iterations.size());
  options.alpha_s = options.platform.alpha_s = run.alpha_s;
  options.beta_bytes_per_s = options.platform.beta_bytes_per_s = run.beta_bytes_per_s;
  options.slowdown[1] = 2;
  const ReplayResult result = replay_isolated(model, options);
  std::vector<const trace::Event*> stalls;
  for (const trace::Event& event : result.events[1]) {
    if (event.type == trace::EventType::Delay) stalls.push_back(&event);
  }
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0]->iteration, 5);
  EXPECT_EQ(stalls[0]->kind, "measured");
  EXPECT_EQ(stalls[0]->dur_ns, 200000000);  // not x2
}

}  // namespace
}  // namespace ddpsim::sim
