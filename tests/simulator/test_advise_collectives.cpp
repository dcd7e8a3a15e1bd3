// `ddp-sim advise`'s timeout over every collective a trace shows (advise.hpp, Note [timeout
// over every collective]): evaluation and checkpoint phases, traces too short for the asked
// probability, a profiler import's unaccounted phases, and the inputs it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "ddpsim/sim/advise.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"

namespace ddpsim::sim {
namespace {

std::int64_t ns(double seconds) { return std::llround(seconds * 1e9); }

// After iteration `after`'s iteration_end, rank r evaluates for eval_s[r] (eval_begin /
// eval_end; with collective_s, a `collective` event of that length ends the phase), then every
// rank pauses so the next iteration begins max(eval_s) + gap_s later than it did; later events
// shift by that much on every rank, so the ranks stay aligned.
void insert_pause(trace::Trace& trace, std::int64_t after, const std::vector<double>& eval_s, double gap_s,
                  const std::vector<double>& collective_s = {}, const std::vector<double>& barrier_s = {}) {
  const double longest = eval_s.empty() ? 0 : *std::max_element(eval_s.begin(), eval_s.end());
  const std::int64_t shift = ns(longest + gap_s);
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    std::vector<trace::Event>& events = trace.ranks[r].events;
    const auto end = std::find_if(events.begin(), events.end(), [&](const trace::Event& e) {
      return e.type == trace::EventType::IterationEnd && e.iteration == after;
    });
    ASSERT_NE(end, events.end());
    const std::int64_t t0 = end->t_ns;
    const auto position = static_cast<std::size_t>(end - events.begin()) + 1;
    for (std::size_t i = position; i < events.size(); ++i) events[i].t_ns += shift;
    std::vector<trace::Event> added;
    if (!eval_s.empty()) {
      trace::Event begin;
      begin.rank = static_cast<int>(r);
      begin.iteration = after;
      begin.type = trace::EventType::EvalBegin;
      begin.t_ns = t0;
      trace::Event finish = begin;
      finish.type = trace::EventType::EvalEnd;
      finish.t_ns = t0 + ns(eval_s[r]);
      finish.message = "90/100";
      added.push_back(begin);
      if (!collective_s.empty()) {
        trace::Event collective = begin;
        collective.type = trace::EventType::Collective;
        collective.kind = "all_reduce";
        collective.dur_ns = ns(collective_s[r]);
        collective.t_ns = finish.t_ns - collective.dur_ns;
        added.push_back(collective);
      }
      added.push_back(finish);
    }
    if (!barrier_s.empty()) {  // the checkpoint's barrier: from the evaluation's end, within the gap
      trace::Event barrier;
      barrier.rank = static_cast<int>(r);
      barrier.iteration = after;
      barrier.type = trace::EventType::Collective;
      barrier.kind = "barrier";
      barrier.message = "checkpoint";
      barrier.t_ns = t0 + ns(eval_s.empty() ? 0 : eval_s[r]) + 1000;
      barrier.dur_ns = ns(barrier_s[r]);
      added.push_back(barrier);
    }
    events.insert(events.begin() + static_cast<std::ptrdiff_t>(position), added.begin(), added.end());
  }
}

// 30 iterations, an evaluation after iterations 9 and 19 (rank 1's longer) and a checkpoint
// every 10 whose barrier holds the ranks gap_s.
trace::Trace eval_and_checkpoint_trace(double gap_s = 0.12, const std::vector<double>& collective_s = {},
                                       const std::vector<double>& barrier_s = {}) {
  testing::SyntheticRun run;
  run.world_size = 2;
  run.iterations = 30;
  trace::Trace trace = testing::make_synthetic_trace(run);
  for (trace::RankTrace& rank : trace.ranks) rank.meta.settings["checkpoint_every"] = "10";
  insert_pause(trace, 9, {0.30, 0.45}, gap_s, collective_s, barrier_s);
  insert_pause(trace, 19, {0.31, 0.40}, gap_s, collective_s, barrier_s);
  return trace;
}

const CollectiveWaits* kind_named(const TimeoutAdvice& advice, const std::string& name) {
  for (const CollectiveWaits& kind : advice.kinds) {
    if (kind.kind == name) return &kind;
  }
  return nullptr;
}

bool names_unaccounted(const TimeoutAdvice& advice, const std::string& name) {
  return std::any_of(advice.unaccounted.begin(), advice.unaccounted.end(),
                     [&](const UnaccountedKind& kind) { return kind.kind == name; });
}

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) { return line.find(needle) != std::string::npos; });
}

// χ²(2k) at k = 1 is exponential with mean 2: its q-quantile is −2 ln(1 − q).
TEST(AdviseCollectives, ChiSquareQuantileClosedForms) {
  EXPECT_NEAR(chi_square_quantile_even(1, 0.05), -2 * std::log(0.95), 1e-9);
  EXPECT_NEAR(chi_square_quantile_even(2, 0.05), 0.710723, 1e-6);    // tables: χ²(4), 5 %
  EXPECT_NEAR(chi_square_quantile_even(10, 0.05), 10.850811, 1e-5);  // χ²(20), 5 %
  EXPECT_NEAR(chi_square_quantile_even(500, 0.5), 999.3333, 1e-2);   // near its mean for large k
}

// The tail's scale at its upper confidence bound: 2kσ̂ / χ²_{0.05}(2k).
TEST(AdviseCollectives, TailUsesTheUpperConfidenceBoundOnItsScale) {
  CollectiveWaits waits;
  waits.waits_s = {0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.009, 0.010};
  waits.occurrences_per_iteration = 1;
  fit_tail(waits, 1e-6);
  EXPECT_NEAR(waits.tail_threshold_s, 0.0055, 1e-12);
  EXPECT_EQ(waits.exceedances, 5);
  EXPECT_NEAR(waits.tail_scale_s, 0.0025, 1e-12);
  const double upper = 2 * 5 * 0.0025 / chi_square_quantile_even(5, 0.05);
  EXPECT_NEAR(waits.tail_scale_upper_s, upper, 1e-12);
  EXPECT_GT(upper, 2 * waits.tail_scale_s);  // five exceedances: the bound is over twice the estimate
  EXPECT_NEAR(waits.tail_s, 0.0055 + upper * std::log(0.5 / 1e-6), 1e-12);
  // Ten waits cannot show 1e-6: it is extrapolated, and 3/p iterations would show it.
  EXPECT_TRUE(waits.extrapolated);
  EXPECT_NEAR(waits.iterations_to_support, -std::log(0.05) / 1e-6, 1e-3);
  CollectiveWaits observable = waits;
  fit_tail(observable, 0.2);
  EXPECT_FALSE(observable.extrapolated);
}

// The failure: a timeout from the gradient all-reduces alone was shorter than the
// evaluation's wait. Every kind is counted now, and the evaluation's phase bounds its wait.
TEST(AdviseCollectives, EvaluationAndCheckpointWaitsSetTheTimeout) {
  const trace::Trace trace = eval_and_checkpoint_trace();
  const AdviceSetup setup = prepare_advice(trace);
  const TimeoutAdvice advice = advise_timeout(setup, trace, 0.01, 0);
  ASSERT_TRUE(advice.available) << advice.unavailable_reason;
  const CollectiveWaits* evaluation = kind_named(advice, "evaluation");
  const CollectiveWaits* checkpoint = kind_named(advice, "checkpoint");
  const CollectiveWaits* gradient = kind_named(advice, "gradient_allreduce");
  ASSERT_NE(evaluation, nullptr);
  ASSERT_NE(checkpoint, nullptr);
  ASSERT_NE(gradient, nullptr);
  ASSERT_NE(kind_named(advice, "first_iterations"), nullptr);
  EXPECT_EQ(evaluation->waits_s.size(), 2u);
  EXPECT_TRUE(evaluation->bound);
  EXPECT_NEAR(evaluation->max_s, 0.45, 1e-6);  // the longer rank's phase
  // Checkpoints after iterations 9 and 19 (29 has no next iteration): rank 0 ends its
  // evaluation 0.15 s early and waits that plus the barrier.
  EXPECT_EQ(checkpoint->waits_s.size(), 2u);
  EXPECT_GE(checkpoint->max_s, 0.12 + 0.15 - 1e-6);
  EXPECT_GT(advice.timeout_s, evaluation->max_s);
  EXPECT_GT(advice.timeout_s, checkpoint->max_s);
  EXPECT_GT(advice.timeout_s, gradient->needed_s);  // the gradient all-reduces alone would be short
  EXPECT_EQ(advice.limiting_kind, "evaluation");
  EXPECT_NEAR(advice.timeout_s, kFloorFactor * evaluation->max_s, 1e-12);
  EXPECT_NEAR(evaluation->phase_max_s, 0.45, 1e-6);
  // Only the start-up is out of the trace's sight.
  EXPECT_TRUE(names_unaccounted(advice, "start_up"));
  EXPECT_FALSE(names_unaccounted(advice, "evaluation"));
  EXPECT_FALSE(names_unaccounted(advice, "checkpoint"));
  EXPECT_FALSE(names_unaccounted(advice, "first_iterations"));
  // A hung rank is noticed at the next collective: after up to the longest evaluation.
  EXPECT_GE(advice.longest_between_collectives_s, 0.45 - 1e-6);
  EXPECT_DOUBLE_EQ(advice.detection_time_s, advice.timeout_s + advice.longest_between_collectives_s);
  EXPECT_TRUE(any_contains(advice.warnings, "evaluation: the trace shows the phase, not the collective"));
  EXPECT_TRUE(any_contains(advice.warnings, "evaluation: 2 observations, too few to fit a tail"));
  EXPECT_EQ(advice.covers.size(), advice.kinds.size());
  EXPECT_FALSE(advice.assumes.empty());
}

// With the evaluation's collective and the checkpoint's barrier recorded (as ddp-train writes
// them), their own durations are the waits, not the phases around them.
TEST(AdviseCollectives, CollectiveEventsInsideAnEvaluationOrACheckpointAreTheirWaits) {
  const trace::Trace trace = eval_and_checkpoint_trace(0.01, {0.02, 0.005}, {0.003, 0.007});
  const AdviceSetup setup = prepare_advice(trace);
  const TimeoutAdvice advice = advise_timeout(setup, trace, 0.01, 0);
  const CollectiveWaits* evaluation = kind_named(advice, "evaluation");
  ASSERT_NE(evaluation, nullptr);
  EXPECT_FALSE(evaluation->bound);
  EXPECT_NEAR(evaluation->max_s, 0.02, 1e-9);
  // Two evaluations are too few to fit: the need covers a wait as long as the whole phase.
  EXPECT_NEAR(evaluation->phase_max_s, 0.45, 1e-6);
  EXPECT_NEAR(evaluation->needed_s, kFloorFactor * 0.45, 1e-6);
  const CollectiveWaits* checkpoint = kind_named(advice, "checkpoint");
  ASSERT_NE(checkpoint, nullptr);
  EXPECT_FALSE(checkpoint->bound);
  EXPECT_EQ(checkpoint->waits_s.size(), 2u);
  EXPECT_NEAR(checkpoint->max_s, 0.007, 1e-9);
  EXPECT_EQ(kind_named(advice, "other_collectives"), nullptr);  // each inside its phase, not other
  EXPECT_FALSE(any_contains(advice.warnings, "evaluation: the trace shows the phase"));
  EXPECT_FALSE(any_contains(advice.warnings, "checkpoint: the trace shows the phase"));
}

// ddp-train's record of DDP's start-up (the parameter check's all_gather and the broadcast,
// `collective` events with message start_up before iteration 0's first event): each is a measured
// occurrence of kind start_up (the longer rank's wait), no longer unaccounted nor "other".
TEST(AdviseCollectives, StartUpBroadcastRecordedIsAMeasuredKind) {
  testing::SyntheticRun run;
  run.world_size = 2;
  run.iterations = 20;
  trace::Trace trace = testing::make_synthetic_trace(run);
  const std::vector<std::vector<double>> waits_s = {{0.9, 0.010}, {0.002, 0.004}};  // rank 0 launched first
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    std::vector<trace::Event>& events = trace.ranks[r].events;
    for (trace::Event& event : events) event.t_ns += ns(1.0);  // room for the start-up before
    const std::int64_t first_t = events.front().t_ns;
    trace::Event check;
    check.rank = static_cast<int>(r);
    check.iteration = events.front().iteration;
    check.type = trace::EventType::Collective;
    check.kind = "all_gather";
    check.message = "start_up";
    check.dur_ns = ns(waits_s[r][0]);
    check.t_ns = first_t - ns(0.92);
    trace::Event broadcast = check;
    broadcast.kind = "broadcast";
    broadcast.bytes = 16 << 20;
    broadcast.dur_ns = ns(waits_s[r][1]);
    broadcast.t_ns = check.t_ns + check.dur_ns;
    events.insert(events.begin(), {check, broadcast});
  }
  const TimeoutAdvice advice = advise_timeout(prepare_advice(trace), trace, 0.01, 0);
  ASSERT_TRUE(advice.available) << advice.unavailable_reason;
  const CollectiveWaits* start = kind_named(advice, "start_up");
  ASSERT_NE(start, nullptr);
  ASSERT_EQ(start->waits_s.size(), 2u);
  std::vector<double> waits = start->waits_s;
  std::sort(waits.begin(), waits.end());
  EXPECT_NEAR(waits[0], 0.010, 1e-9);  // the broadcast: rank 0's wait
  EXPECT_NEAR(waits[1], 0.9, 1e-9);    // the check: rank 0 waited for rank 1's launch
  EXPECT_FALSE(start->bound);
  EXPECT_FALSE(start->fitted);
  EXPECT_NEAR(start->needed_s, kFloorFactor * 0.9, 1e-9);
  EXPECT_EQ(advice.limiting_kind, "start_up");
  EXPECT_NEAR(advice.timeout_s, kFloorFactor * 0.9, 1e-9);
  EXPECT_FALSE(names_unaccounted(advice, "start_up"));
  EXPECT_EQ(kind_named(advice, "other_collectives"), nullptr);
  EXPECT_TRUE(any_contains(advice.covers, "start_up: 2 observed"));
  // Once per run: its support is counted in runs, not in iterations one run would add.
  EXPECT_TRUE(any_contains(advice.warnings, "start_up: 2 observations"));
  for (const std::string& warning : advice.warnings) {
    if (warning.rfind("start_up:", 0) != 0) continue;
    EXPECT_NE(warning.find(" runs"), std::string::npos) << warning;
    EXPECT_EQ(warning.find(" iterations"), std::string::npos) << warning;
  }
  const auto json = nlohmann::json::parse(advice_to_json({"synthetic", {}, advice, {}, {}}));
  EXPECT_EQ(json["timeout"]["limiting_kind"], "start_up");
}

// A trace without evaluation or checkpoints names them as unaccounted.
TEST(AdviseCollectives, PhasesTheRunDidNotHaveAreUnaccounted) {
  testing::SyntheticRun run;
  run.world_size = 2;
  run.iterations = 20;
  const trace::Trace trace = testing::make_synthetic_trace(run);
  const TimeoutAdvice advice = advise_timeout(prepare_advice(trace), trace, 0.01, 0);
  ASSERT_TRUE(advice.available) << advice.unavailable_reason;
  EXPECT_TRUE(names_unaccounted(advice, "evaluation"));
  EXPECT_TRUE(names_unaccounted(advice, "checkpoint"));
  EXPECT_TRUE(names_unaccounted(advice, "start_up"));
  EXPECT_EQ(kind_named(advice, "evaluation"), nullptr);
}

// Too few waits for a tail: the gradient all-reduces get the floor and a warning that says how
// many iterations the asked probability would take; enough waits: a tail, and a warning that
// it extrapolates when the probability is below 1/n.
TEST(AdviseCollectives, TraceTooShortForTheProbabilityIsSaidWithTheIterationsItWouldTake) {
  testing::SyntheticRun run;
  run.world_size = 2;
  run.iterations = 7;  // iterations 2..6 after DDP's first and the rebuild: 5 waits
  const trace::Trace short_trace = testing::make_synthetic_trace(run);
  const TimeoutAdvice short_advice = advise_timeout(prepare_advice(short_trace), short_trace, 0.01, 1e5);
  ASSERT_TRUE(short_advice.available) << short_advice.unavailable_reason;
  const CollectiveWaits* gradient = kind_named(short_advice, "gradient_allreduce");
  ASSERT_NE(gradient, nullptr);
  EXPECT_EQ(gradient->waits_s.size(), 5u);
  EXPECT_FALSE(gradient->fitted);
  EXPECT_FALSE(short_advice.tail_fitted);
  EXPECT_DOUBLE_EQ(gradient->needed_s, kFloorFactor * gradient->max_s);
  EXPECT_TRUE(any_contains(short_advice.warnings, "gradient_allreduce: 5 observations, too few to fit a tail"));
  EXPECT_TRUE(any_contains(short_advice.warnings, "iterations")) << short_advice.warnings.front();
  EXPECT_GT(gradient->iterations_to_support, 1e5);

  run.iterations = 40;
  const trace::Trace long_trace = testing::make_synthetic_trace(run);
  const AdviceSetup setup = prepare_advice(long_trace);
  const TimeoutAdvice tiny = advise_timeout(setup, long_trace, 0.01, 1e5);
  ASSERT_TRUE(tiny.available) << tiny.unavailable_reason;
  EXPECT_TRUE(tiny.tail_fitted);
  EXPECT_TRUE(tiny.extrapolated);
  EXPECT_TRUE(any_contains(tiny.warnings, "gradient_allreduce: the bound claims P(false timeout) <="));
  EXPECT_GT(tiny.iterations_to_support, 38 * 100.0);
  // A probability the 38 waits can show (ε = 0.5 over 5 iterations a day) is not extrapolated.
  const TimeoutAdvice shown = advise_timeout(setup, long_trace, 0.5, 5);
  EXPECT_FALSE(kind_named(shown, "gradient_allreduce")->extrapolated);
  EXPECT_LT(kind_named(shown, "gradient_allreduce")->tail_s, kind_named(tiny, "gradient_allreduce")->tail_s);
}

// Refused: one rank, and fewer than kMinAdviceIterations replayable iterations; warned: fewer
// than kFewIterations.
TEST(AdviseCollectives, TooLittleDataIsRefusedOrWarned) {
  testing::SyntheticRun run;
  run.world_size = 2;
  run.iterations = 2;  // DDP's first iteration and the rebuild: one replayable iteration
  const trace::Trace tiny = testing::make_synthetic_trace(run);
  const AdviceSetup tiny_setup = prepare_advice(tiny);
  EXPECT_NE(advisable_problem(tiny, tiny_setup).find("expected at least 2 complete iterations"), std::string::npos)
      << advisable_problem(tiny, tiny_setup);
  run.iterations = 6;
  const AdviceSetup few_setup = prepare_advice(testing::make_synthetic_trace(run));
  EXPECT_EQ(advisable_problem(testing::make_synthetic_trace(run), few_setup), "");
  EXPECT_NE(few_iterations_warning(few_setup).find("the answers rest on 5 iterations"), std::string::npos);
  run.iterations = 30;
  EXPECT_EQ(few_iterations_warning(prepare_advice(testing::make_synthetic_trace(run))), "");
  run.world_size = 1;
  const trace::Trace one = testing::make_synthetic_trace(run);
  EXPECT_NE(advisable_problem(one, prepare_advice(one)).find("expected a trace of 2 or more ranks, got 1"), std::string::npos);
}

// A torch.profiler import: the training steps only; evaluation, checkpoints, the first
// iteration and the start-up are named as unaccounted, and what the import lacks is said.
TEST(AdviseCollectives, ProfilerImportNamesWhatItCannotShow) {
  const std::string example = std::string(DDPSIM_TEST_DATA_DIR) + "/../../../traces/examples/kineto/mlp-2rank/";
  const trace::Trace trace = trace::import_kineto({example + "rank-0.kineto.json.gz", example + "rank-1.kineto.json.gz"});
  const AdviceSetup setup = prepare_advice(trace);
  EXPECT_EQ(advisable_problem(trace, setup), "");
  const TimeoutAdvice advice = advise_timeout(setup, trace, 0.01, 0);
  ASSERT_TRUE(advice.available) << advice.unavailable_reason;
  ASSERT_NE(kind_named(advice, "gradient_allreduce"), nullptr);
  for (const char* kind : {"evaluation", "checkpoint", "first_iterations", "start_up"}) {
    EXPECT_TRUE(names_unaccounted(advice, kind)) << kind;
  }
  const auto reason = std::find_if(advice.unaccounted.begin(), advice.unaccounted.end(),
                                   [](const UnaccountedKind& kind) { return kind.kind == "evaluation"; });
  EXPECT_NE(reason->reason.find("profiler import"), std::string::npos) << reason->reason;
  const std::vector<std::string> lacks = import_lacks(trace);
  EXPECT_TRUE(any_contains(lacks, "no evaluation, checkpoint or start-up phases"));
  EXPECT_TRUE(import_lacks(testing::make_synthetic_trace(testing::SyntheticRun{})).empty());
}

// The JSON a validation reads the advice from, end to end through the CLI.
TEST(CliAdviseCollectives, JsonCarriesTheTimeoutDetectionTimeKindsAndStragglers) {
  test_support::TempDir dir;
  trace::write_trace(dir / "trace", eval_and_checkpoint_trace());
  const Outcome outcome = run_cli(dir, "advise " + dir / "trace" + " --runs 11 --bucket-caps 1 --json " + dir / "a.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.err.find("ddp-sim: warning: evaluation: the trace shows the phase"), std::string::npos) << outcome.err;
  EXPECT_NE(outcome.out.find("<- the timeout"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("unaccounted: start_up"), std::string::npos) << outcome.out;
  const auto json = nlohmann::json::parse(slurp(dir / "a.json"));
  const auto& timeout = json["timeout"];
  const double timeout_s = timeout["timeout_s"].get<double>();
  EXPECT_EQ(timeout["limiting_kind"], "evaluation");
  EXPECT_GT(timeout_s, 0.45);
  EXPECT_DOUBLE_EQ(timeout["detection_time_s"].get<double>(),
                   timeout_s + timeout["longest_between_collectives_s"].get<double>());
  EXPECT_EQ(timeout["line"], timeout_line(timeout_s));
  double largest_need = 0;
  for (const auto& kind : timeout["kinds"]) largest_need = std::max(largest_need, kind["needed_s"].get<double>());
  EXPECT_DOUBLE_EQ(largest_need, timeout_s);
  EXPECT_EQ(timeout["unaccounted"].size(), 1u);
  EXPECT_TRUE(json["stragglers"]["named"].is_array());
}

TEST(CliAdviseCollectives, BadInputsAreOneLineErrors) {
  test_support::TempDir dir;
  testing::SyntheticRun run;
  run.world_size = 2;
  run.iterations = 2;  // DDP's first iteration and the rebuild: nothing steady to advise from
  trace::write_trace(dir / "two", testing::make_synthetic_trace(run));
  expect_one_line_error(run_cli(dir, "advise " + dir / "two"), "expected at least 2 complete iterations after DDP's first");
  run.world_size = 1;
  run.iterations = 20;
  trace::write_trace(dir / "one", testing::make_synthetic_trace(run));
  expect_one_line_error(run_cli(dir, "advise " + dir / "one"), "expected a trace of 2 or more ranks, got 1");
  run.world_size = 2;
  trace::write_trace(dir / "good", testing::make_synthetic_trace(run));
  expect_one_line_error(run_cli(dir, "advise " + dir / "good" + " --epsilon 0"), "--epsilon: expected a probability in (0, 1)");
  expect_one_line_error(run_cli(dir, "advise " + dir / "good" + " --iterations-per-day -1"), "--iterations-per-day: expected");
}

}  // namespace
}  // namespace ddpsim::sim
