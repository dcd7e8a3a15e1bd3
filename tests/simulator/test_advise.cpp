// `ddp-sim advise`'s three answers against closed forms on synthetic traces (advise.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "ddpsim/sim/advise.hpp"
#include "ddpsim/sim/rebucket.hpp"
#include "ddpsim/trace/stats.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

constexpr int kRuns = 11;  // 1 in order + 10 bootstrap replicates: the smallest allowed

// Two identical ranks (no rank skew, no straggling all-reduce) on a network fast enough that
// communication costs nothing: a rank's compute is then the job's iteration time.
testing::SyntheticRun compute_bound_run() {
  testing::SyntheticRun run;
  run.world_size = 2;
  run.rank_skew = 0;
  run.straggler_extra_s = 0;
  run.beta_bytes_per_s = 1e12;
  run.alpha_s = 1e-7;
  return run;
}

void scale_compute(RankIterationCosts& costs, double factor) {
  for (double* phase : {&costs.before_forward_s, &costs.forward_s, &costs.before_backward_s, &costs.backward_compute_s,
                        &costs.backward_tail_s, &costs.before_optimizer_s, &costs.optimizer_s, &costs.after_optimizer_s}) {
    *phase *= factor;
  }
  for (double& offset : costs.bucket_ready_s) offset *= factor;
  for (double& offset : costs.grad_ready_s) offset = offset < 0 ? offset : offset * factor;
}

double mean_compute_s(const WorkloadModel& model, int rank) {
  double sum = 0;
  for (const RankIterationCosts& costs : model.costs.at(static_cast<std::size_t>(rank))) sum += costs.compute_total_s();
  return sum / static_cast<double>(model.costs.at(static_cast<std::size_t>(rank)).size());
}

TEST(AdviseStragglers, TypicalComputeIsTheLowerMedianRankPerIteration) {
  WorkloadModel model;
  model.costs.resize(3, std::vector<RankIterationCosts>(2));
  for (int r = 0; r < 3; ++r) {
    model.costs[static_cast<std::size_t>(r)][0].forward_s = 1.0 + r;  // iteration 0: rank 1 is the median
    model.costs[static_cast<std::size_t>(r)][1].forward_s = 3.0 - r;  // iteration 1: rank 1 again
  }
  model.costs[0][1].forward_s = 0.5;  // iteration 1: 0.5, 2, 1 → the median is rank 2's 1.0
  const WorkloadModel one = with_typical_compute(model, 0);
  EXPECT_DOUBLE_EQ(one.costs[0][0].forward_s, 2.0);
  EXPECT_DOUBLE_EQ(one.costs[0][1].forward_s, 1.0);
  EXPECT_DOUBLE_EQ(one.costs[2][0].forward_s, 3.0);  // other ranks untouched
  const WorkloadModel all = with_typical_compute(model, -1);
  for (int r = 0; r < 3; ++r) EXPECT_DOUBLE_EQ(all.costs[static_cast<std::size_t>(r)][1].forward_s, 1.0);

  model.costs.resize(2);  // two ranks: the faster one, not their mean
  EXPECT_DOUBLE_EQ(with_typical_compute(model, 1).costs[1][0].forward_s, 1.0);
}

TEST(AdviseStragglers, ARankTwiceAsSlowIsNamedWithItsExtraCompute) {
  const trace::Trace trace = testing::make_synthetic_trace(compute_bound_run());
  AdviceSetup setup = prepare_advice(trace);
  for (RankIterationCosts& costs : setup.model.costs[1]) scale_compute(costs, 2.0);
  const StragglerAdvice advice = attribute_stragglers(setup, kRuns, 0);
  ASSERT_EQ(advice.ranks.size(), 2u);
  // Rank 1 computes its iteration twice as long: removing that saves one compute time.
  const double extra_s = mean_compute_s(setup.model, 0);
  EXPECT_NEAR(advice.ranks[1].per_iteration_s, extra_s, 0.02 * extra_s);
  EXPECT_NEAR(advice.ranks[1].total_s, extra_s * advice.iterations, 0.02 * extra_s * advice.iterations);
  EXPECT_TRUE(advice.ranks[1].straggler);
  EXPECT_NEAR(advice.ranks[0].per_iteration_s, 0, 1e-9);
  EXPECT_FALSE(advice.ranks[0].straggler);
  EXPECT_NEAR(advice.all.per_iteration_s, advice.ranks[1].per_iteration_s, 1e-9);
  EXPECT_GT(advice.ranks[1].per_iteration_interval_s.low, 0);
}

// Two ranks slowed alike hide each other: made typical one at a time, each saves nothing, as
// the other still holds every all-reduce back. Alone (the others typical) each costs its extra
// compute, and both are named; the two fast ranks are not (Note [stragglers that mask each other]).
TEST(AdviseStragglers, TwoRanksSlowedAlikeAreBothNamed) {
  testing::SyntheticRun run = compute_bound_run();
  run.world_size = 4;
  AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(run));
  for (const std::size_t slow : {1, 2}) {
    for (RankIterationCosts& costs : setup.model.costs[slow]) scale_compute(costs, 2.0);
  }
  const StragglerAdvice advice = attribute_stragglers(setup, kRuns, 0);
  ASSERT_EQ(advice.ranks.size(), 4u);
  const double extra_s = mean_compute_s(setup.model, 0);
  for (const int slow : {1, 2}) {
    SCOPED_TRACE(slow);
    const RankCost& cost = advice.ranks[static_cast<std::size_t>(slow)];
    EXPECT_NEAR(cost.per_iteration_s, 0, 1e-9);  // one at a time: the other still slow
    EXPECT_NEAR(cost.alone_fraction * advice.replayed_mean_s, extra_s, 0.02 * extra_s);
    EXPECT_TRUE(cost.straggler);
  }
  for (const int fast : {0, 3}) EXPECT_FALSE(advice.ranks[static_cast<std::size_t>(fast)].straggler) << fast;
}

TEST(AdviseStragglers, UnskewedRanksNameNobody) {
  const AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(compute_bound_run()));
  const StragglerAdvice advice = attribute_stragglers(setup, kRuns, 0);
  for (const RankCost& cost : advice.ranks) {
    EXPECT_FALSE(cost.straggler) << cost.rank;
    EXPECT_NEAR(cost.per_iteration_s, 0, 1e-9) << cost.rank;
  }
}

// Noise, not a straggler: in two of every three iterations rank 0 computes 5 % longer, in the
// third rank 1 does. Both ranks cost something (about 3 % and 1.5 % of the iteration: their slow
// iterations' extra compute, averaged); rank 0's cost is above the share and above rank 1's
// beyond the bootstrap's noise (61 iterations), but exceeds it by less than kMinStragglerShare:
// nobody is named; it would be with the share on the cost alone (Note [straggler share] in
// docs/model.md).
TEST(AdviseStragglers, NoiseThatCostsEveryRankSomethingNamesNobody) {
  testing::SyntheticRun run = compute_bound_run();
  run.iterations = 61;
  AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(run));
  for (std::size_t k = 0; k < setup.model.costs[0].size(); ++k) {
    scale_compute(setup.model.costs[k % 3 == 2 ? 1 : 0][k], 1.05);
  }
  const StragglerAdvice advice = attribute_stragglers(setup, kRuns, 0);
  ASSERT_EQ(advice.ranks.size(), 2u);
  EXPECT_GT(advice.ranks[0].fraction, kMinStragglerShare);
  EXPECT_GT(advice.ranks[0].per_iteration_interval_s.low, 0);
  EXPECT_GT(advice.ranks[1].fraction, 0.01);
  EXPECT_LT(advice.ranks[0].fraction - advice.ranks[1].fraction, kMinStragglerShare);
  EXPECT_DOUBLE_EQ(advice.ranks[0].excess_fraction, advice.ranks[0].fraction - advice.ranks[1].fraction);
  EXPECT_GT(advice.ranks[0].excess_interval_s.low, 0);
  EXPECT_FALSE(advice.ranks[0].straggler) << advice.ranks[0].fraction << " vs " << advice.ranks[1].fraction;
  EXPECT_FALSE(advice.ranks[1].straggler);
  // The same noise on top of a real straggler (rank 0 also twice as slow throughout) names it.
  for (RankIterationCosts& costs : setup.model.costs[0]) scale_compute(costs, 2.0);
  const StragglerAdvice slowed = attribute_stragglers(setup, kRuns, 0);
  EXPECT_TRUE(slowed.ranks[0].straggler);
  EXPECT_FALSE(slowed.ranks[1].straggler);
}

// Communication as long as backward (16.8 MB at 1 GB/s): with the trace's 25 MiB cap the last
// 8.4 MB bucket starts only when backward ends and is all exposed (8 ms); with 1 MiB caps only
// the last 1 MB is.
TEST(AdviseBucket, CommunicationBoundTraceGetsASmallerCap) {
  testing::SyntheticRun run = compute_bound_run();
  run.beta_bytes_per_s = 1e9;
  const AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(run));
  const BucketAdvice advice = advise_bucket_cap(setup, {1, 100}, kRuns, 0);
  ASSERT_TRUE(advice.available) << advice.unavailable_reason;
  EXPECT_DOUBLE_EQ(advice.own_cap_mb, 25);
  EXPECT_DOUBLE_EQ(advice.best.cap_mb, 1) << advice_to_text({"synthetic", advice, {}, {}, {}});
  EXPECT_FALSE(advice.keep);
  EXPECT_DOUBLE_EQ(advice.recommended_cap_mb, 1);
  EXPECT_GT(advice.gain, 0.05);
  EXPECT_LT(advice.best.median_interval_s.high, advice.own.median_interval_s.low);
  EXPECT_EQ(advice.candidates.size(), 2u);
  // The gain's interval pairs replicate k of the best cap with replicate k of the own cap.
  ASSERT_EQ(advice.best.replicate_medians_s.size(), static_cast<std::size_t>(kRuns - 1));
  std::vector<double> gains;
  for (int k = 0; k < kRuns - 1; ++k) gains.push_back(1 - advice.best.replicate_medians_s[k] / advice.own.replicate_medians_s[k]);
  EXPECT_DOUBLE_EQ(advice.gain_interval.low, interval_of(gains).low);
  EXPECT_DOUBLE_EQ(advice.gain_interval.high, interval_of(gains).high);
  EXPECT_GT(advice.gain_interval.low, 0);
}

// Eleven pairs where the ratio of the medians and the median of the ratios part: nine pairs
// gain 10 %, and the two middle own runs (5 and 6) are paired with 5.9 and 3.0, so the other
// runs' median (3.0) comes from another pair than the own runs' (5). The point is the median of
// the ratios, inside the interval of the same ratios; 1 - 3.0 / 5 = 40 % is outside it.
TEST(AdviseBucket, PairedGainIsTheMedianOfThePairedRatiosInsideTheirInterval) {
  const std::vector<double> own = {1, 1, 1, 1, 1, 5, 6, 10, 10, 10, 10};
  const std::vector<double> other = {0.9, 0.9, 0.9, 0.9, 0.9, 5.9, 3.0, 9, 9, 9, 9};
  const PairedGain paired = paired_gain(own, other);
  EXPECT_EQ(paired.pairs, 11);
  std::vector<double> ratios;
  for (std::size_t k = 0; k < own.size(); ++k) ratios.push_back(1 - other[k] / own[k]);
  EXPECT_NEAR(paired.gain, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(paired.gain, trace::median_of(ratios));
  EXPECT_DOUBLE_EQ(paired.interval.low, interval_of(ratios).low);
  EXPECT_DOUBLE_EQ(paired.interval.high, interval_of(ratios).high);
  EXPECT_LE(paired.interval.low, paired.gain);
  EXPECT_GE(paired.interval.high, paired.gain);
  const double ratio_of_medians = 1 - trace::median_of(other) / trace::median_of(own);
  EXPECT_NEAR(ratio_of_medians, 0.4, 1e-12);
  EXPECT_GT(ratio_of_medians, paired.interval.high);  // the statistic the answer no longer reports
  // No pairs (or own medians of 0): no gain.
  EXPECT_EQ(paired_gain({}, {}).pairs, 0);
  EXPECT_DOUBLE_EQ(paired_gain({0, 0}, {1, 1}).gain, 0);
}

// Every candidate's gain is paired_gain of its replicates over the own cap's, inside its own
// interval; the best is the largest gain and "keep" reads the best's interval; --json says the same.
TEST(AdviseBucket, EveryCandidatesGainLiesInItsPairedInterval) {
  for (const double beta : {1e9, 1e12}) {
    testing::SyntheticRun run = compute_bound_run();
    run.beta_bytes_per_s = beta;
    run.rank_skew = 0.05;
    const AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(run));
    const BucketAdvice advice = advise_bucket_cap(setup, {0.25, 1, 5, 25, 100}, kRuns, 3);
    ASSERT_TRUE(advice.available) << advice.unavailable_reason;
    const BucketCandidate* largest = &advice.own;
    for (const BucketCandidate& candidate : advice.candidates) {
      const PairedGain paired = paired_gain(advice.own.replicate_medians_s, candidate.replicate_medians_s);
      EXPECT_DOUBLE_EQ(candidate.gain, paired.gain) << candidate.cap_mb;
      EXPECT_LE(candidate.gain_interval.low, candidate.gain) << candidate.cap_mb;
      EXPECT_GE(candidate.gain_interval.high, candidate.gain) << candidate.cap_mb;
      if (candidate.gain > largest->gain) largest = &candidate;
    }
    EXPECT_DOUBLE_EQ(advice.best.cap_mb, largest->cap_mb);
    EXPECT_DOUBLE_EQ(advice.gain, advice.best.gain);
    EXPECT_LE(advice.gain_interval.low, advice.gain);
    EXPECT_GE(advice.gain_interval.high, advice.gain);
    EXPECT_EQ(advice.keep, !(advice.gain_interval.low > 0 && advice.gain >= kMinBucketGain));
    EXPECT_DOUBLE_EQ(advice.recommended_cap_mb, advice.keep ? advice.own_cap_mb : advice.best.cap_mb);
    if (advice.list.searched) {
      EXPECT_LE(advice.list.gain_interval.low, advice.list.gain);
      EXPECT_GE(advice.list.gain_interval.high, advice.list.gain);
      EXPECT_EQ(advice.list.keep, !(advice.list.gain_interval.low > 0 && advice.list.gain >= kMinBucketGain));
    }
    const auto json = nlohmann::json::parse(advice_to_json({"synthetic", advice, {}, {}, {}}))["bucket"];
    EXPECT_LE(json["gain_interval"][0].get<double>(), json["gain"].get<double>());
    EXPECT_GE(json["gain_interval"][1].get<double>(), json["gain"].get<double>());
    for (const auto& candidate : json["candidates"]) {
      EXPECT_LE(candidate["gain_interval"][0].get<double>(), candidate["gain"].get<double>());
      EXPECT_GE(candidate["gain_interval"][1].get<double>(), candidate["gain"].get<double>());
    }
  }
}

// A measured gain compares two runs, each drifting by the spread's ratios: the interval of
// 1 - other / own widens to [1 - (1 - low) r_high, 1 - (1 - high) r_low]. The drift gives every
// gain a second interval, where a run against a run should fall, and leaves the advice as it
// was: the communication-bound trace is told to change its cap under ±20 % drift too, and the
// text and --json carry both intervals and the drift.
TEST(AdviseBucket, DriftBetweenRunsWidensWhereAMeasuredGainFallsNotTheAdvice) {
  RunToRunSpread spread;
  spread.runs = 3;
  spread.ratio_low = 0.8;
  spread.ratio_high = 1.25;
  const Interval widened = widened_gain({0.05, 0.10}, spread);
  EXPECT_NEAR(widened.low, 1 - 0.95 * 1.25, 1e-12);
  EXPECT_NEAR(widened.high, 1 - 0.90 * 0.8, 1e-12);

  testing::SyntheticRun run = compute_bound_run();
  run.beta_bytes_per_s = 1e9;
  const AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(run));
  const BucketAdvice undrifted = advise_bucket_cap(setup, {1, 100}, kRuns, 0);
  ASSERT_FALSE(undrifted.keep);
  EXPECT_FALSE(undrifted.drift_gain_interval);
  EXPECT_NE(advice_to_text({"synthetic", undrifted, {}, {}, {}}).find("noise only"), std::string::npos);

  BucketAdvice drifting = undrifted;
  widen_by_drift(drifting, spread);
  EXPECT_FALSE(drifting.keep);
  EXPECT_DOUBLE_EQ(drifting.recommended_cap_mb, 1);
  EXPECT_DOUBLE_EQ(drifting.gain, undrifted.gain);
  EXPECT_DOUBLE_EQ(drifting.gain_interval.low, undrifted.gain_interval.low);
  ASSERT_TRUE(drifting.drift_gain_interval);
  EXPECT_DOUBLE_EQ(drifting.drift_gain_interval->low, widened_gain(undrifted.gain_interval, spread).low);
  EXPECT_LT(drifting.drift_gain_interval->low, 0);  // a single pair of runs may show a loss
  for (const BucketCandidate& candidate : drifting.candidates) {
    if (candidate.cap_mb == drifting.own_cap_mb) {
      EXPECT_FALSE(candidate.drift_gain_interval);
      continue;
    }
    ASSERT_TRUE(candidate.drift_gain_interval) << candidate.cap_mb;
    EXPECT_LE(candidate.drift_gain_interval->low, candidate.gain_interval.low) << candidate.cap_mb;
    EXPECT_GE(candidate.drift_gain_interval->high, candidate.gain_interval.high) << candidate.cap_mb;
  }
  const std::string text = advice_to_text({"synthetic", drifting, {}, {}, {}});
  EXPECT_NE(text.find("drift between 3 runs"), std::string::npos) << text;
  EXPECT_NE(text.find("a run at 1 MiB against a run at yours should gain within ["), std::string::npos) << text;
  EXPECT_NE(text.find("recommended: bucket_cap_mb=1"), std::string::npos) << text;
  const auto json = nlohmann::json::parse(advice_to_json({"synthetic", drifting, {}, {}, {}}))["bucket"];
  EXPECT_EQ(json["drift"]["runs"].get<int>(), 3);
  EXPECT_DOUBLE_EQ(json["drift_gain_interval"][0].get<double>(), drifting.drift_gain_interval->low);
  EXPECT_TRUE(json["best"].contains("drift_gain_interval"));
  EXPECT_FALSE(json["own"].contains("drift_gain_interval"));
  const auto plain = nlohmann::json::parse(advice_to_json({"synthetic", undrifted, {}, {}, {}}))["bucket"];
  EXPECT_TRUE(plain["drift"].is_null());
  EXPECT_FALSE(plain.contains("drift_gain_interval"));
}

TEST(AdviseBucket, FreeCommunicationKeepsWhatYouHave) {
  const AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(compute_bound_run()));
  const BucketAdvice advice = advise_bucket_cap(setup, {1, 100}, kRuns, 0);
  ASSERT_TRUE(advice.available) << advice.unavailable_reason;
  EXPECT_TRUE(advice.keep);
  EXPECT_DOUBLE_EQ(advice.recommended_cap_mb, 25);
  EXPECT_LT(std::abs(advice.gain), 0.01);
}

TEST(AdviseTimeout, ExponentialTailClosedForm) {
  const std::vector<double> waits = {0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.009, 0.010};
  double u = 0;
  double sigma = 0;
  // Median 5.5 ms; half the waits exceed it by 2.5 ms on average.
  const double timeout = timeout_for_probability(waits, 1e-6, &u, &sigma);
  EXPECT_NEAR(u, 0.0055, 1e-12);
  EXPECT_NEAR(sigma, 0.0025, 1e-12);
  EXPECT_NEAR(timeout, 0.0055 + 0.0025 * std::log(0.5 / 1e-6), 1e-12);
  // Never below the longest wait measured.
  EXPECT_DOUBLE_EQ(timeout_for_probability(waits, 0.4), 0.010);
  EXPECT_EQ(timeout_line(0.03281), "timeout=timedelta(seconds=0.033)");
}

TEST(AdviseTimeout, MonotoneInEpsilonSurvivesTheTraceAndDetectsAHang) {
  testing::SyntheticRun run;  // 4 ranks, rank skew, one all-reduce straggling by 50 ms
  run.world_size = 2;
  const trace::Trace trace = testing::make_synthetic_trace(run);
  const AdviceSetup setup = prepare_advice(trace);
  double previous = 0;
  for (double epsilon : {0.5, 0.1, 0.01, 0.001, 1e-6}) {
    const TimeoutAdvice advice = advise_timeout(setup, trace, epsilon, 0);
    ASSERT_TRUE(advice.available) << advice.unavailable_reason;
    EXPECT_TRUE(advice.iterations_per_day_assumed);
    EXPECT_NEAR(advice.iterations_per_day, 86400 / setup.median_iteration_s, 1e-6);
    EXPECT_GT(advice.timeout_s, previous) << epsilon;
    EXPECT_GE(advice.timeout_s, advice.wait_max_s);
    EXPECT_GE(advice.wait_max_s, run.straggler_extra_s);
    EXPECT_TRUE(advice.replay_survives);
    // The hung rank stalls at the start of the second replayed iteration; rank 0 reaches its
    // first all-reduce after its forward pass and first bucket, then waits the timeout.
    const RankIterationCosts& costs = setup.model.costs_for(0, 1);
    const double reach_s = costs.before_forward_s + costs.forward_s + costs.before_backward_s + costs.bucket_ready_s[0];
    EXPECT_NEAR(advice.time_to_detect_s, reach_s + advice.timeout_s, 0.005) << epsilon;
    previous = advice.timeout_s;
  }
  // Given iterations per day: more iterations, a longer timeout.
  EXPECT_GT(advise_timeout(setup, trace, 0.01, 1e9).timeout_s, advise_timeout(setup, trace, 0.01, 1e3).timeout_s);
}

// A user-given stall model (--stall-dist) against closed forms: P(stall > x) = e^(-x/mean) for
// one exponential rank, 1 - (1 - e^(-x/mean))^W for `all`, linear for uniform.
TEST(AdviseTimeout, GivenStallModelClosedForms) {
  const auto stall = [](const std::string& text) { return trace::parse_delay_distribution(text); };
  const double p = 1e-6;
  EXPECT_NEAR(stall_for_probability({stall("1=exp:20")}, 2, p), 0.020 * std::log(1 / p), 1e-10 * 0.3);
  const double all = -20 * std::log(1 - std::pow(1 - p, 1.0 / 4)) * 1e-3;
  EXPECT_NEAR(stall_for_probability({stall("all=exp:20")}, 4, p), all, 1e-10 * all);
  EXPECT_NEAR(stall_for_probability({stall("1=uniform:10,30")}, 2, 0.1), 0.028, 1e-12);
  EXPECT_NEAR(stall_for_probability({stall("1=uniform:10,30")}, 2, 1e-9), 0.030, 1e-9);
  const double lognormal_s = stall_for_probability({stall("0=lognormal:3,0.5")}, 2, 1e-4);
  EXPECT_NEAR(0.5 * std::erfc((std::log(lognormal_s * 1e3) - 3) / (0.5 * std::sqrt(2.0))), 1e-4, 1e-12);
  // Two independent ranks: P(either > x) = p.
  const double two = stall_for_probability({stall("0=exp:20"), stall("1=exp:10")}, 2, 1e-3);
  EXPECT_NEAR(1 - (1 - std::exp(-two * 1e3 / 20)) * (1 - std::exp(-two * 1e3 / 10)), 1e-3, 1e-12);
  // One distribution per rank, ranks of the trace only.
  EXPECT_THROW(stall_for_probability({stall("all=exp:20"), stall("1=exp:10")}, 2, p), std::invalid_argument);
  EXPECT_THROW(stall_for_probability({stall("2=exp:20")}, 2, p), std::invalid_argument);
}

// With a given model the timeout is the median measured wait plus the model's stall quantile,
// whatever the trace's own (straggling) waits were; the check replays those stalls.
TEST(AdviseTimeout, GivenStallModelReplacesTheObservedTail) {
  testing::SyntheticRun run;
  run.world_size = 2;
  const trace::Trace trace = testing::make_synthetic_trace(run);
  const AdviceSetup setup = prepare_advice(trace);
  const double epsilon = 0.01;
  const double per_day = 1e5;
  const TimeoutAdvice given = advise_timeout(setup, trace, epsilon, per_day, {trace::parse_delay_distribution("1=exp:20")});
  ASSERT_TRUE(given.available) << given.unavailable_reason;
  // ε is split evenly over the kinds with a fitted tail: the gradient all-reduces and the time
  // before the forward pass (Note [timeout over every collective]).
  const auto fitted = std::count_if(given.kinds.begin(), given.kinds.end(), [](const CollectiveWaits& kind) { return kind.fitted; });
  ASSERT_EQ(fitted, 2);
  const double p = -std::expm1(std::log1p(-epsilon / 2) / per_day);
  EXPECT_NEAR(given.per_iteration_probability, p, 1e-18);
  EXPECT_EQ(given.stall_dist, (std::vector<std::string>{"1=exp:20"}));
  EXPECT_NE(given.model.find("the stall model given (--stall-dist 1=exp:20"), std::string::npos) << given.model;
  EXPECT_NEAR(given.stall_quantile_s, 0.020 * std::log(1 / p), 1e-9);
  EXPECT_NEAR(given.timeout_s, given.wait_p50_s + 0.020 * std::log(1 / p), 1e-9);
  EXPECT_TRUE(given.replay_survives);
  const TimeoutAdvice heavier = advise_timeout(setup, trace, epsilon, per_day, {trace::parse_delay_distribution("1=exp:40")});
  EXPECT_NEAR(heavier.timeout_s - given.timeout_s, 0.020 * std::log(1 / p), 1e-9);
  const TimeoutAdvice observed = advise_timeout(setup, trace, epsilon, per_day);
  EXPECT_TRUE(observed.stall_dist.empty());
  EXPECT_GT(std::abs(observed.timeout_s - given.timeout_s), 0.01);
  // A model lighter than the measured waits (the 50 ms straggling all-reduce) is flagged.
  const TimeoutAdvice light = advise_timeout(setup, trace, epsilon, per_day, {trace::parse_delay_distribution("1=uniform:0,1")});
  EXPECT_TRUE(light.measured_exceeds);
  // The gradient all-reduces' own need (the advice is the largest over every kind).
  const auto gradient = std::find_if(light.kinds.begin(), light.kinds.end(),
                                     [](const CollectiveWaits& kind) { return kind.kind == "gradient_allreduce"; });
  ASSERT_NE(gradient, light.kinds.end());
  EXPECT_LT(gradient->needed_s, light.wait_max_s);
  EXPECT_GE(light.timeout_s, gradient->needed_s);
}

// The second answer: lists [S]*k + [L] through the single cap's re-bucketing and replay.
TEST(AdviseBucket, ListFamilyIsSearchedThroughTheOneRebucketingPath) {
  testing::SyntheticRun run = compute_bound_run();
  run.beta_bytes_per_s = 1e9;
  const AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(run));
  const std::vector<double> caps = {1, 100};
  const auto family = bucket_list_family(caps);
  // S = 0.25, 0.5: L in {1, 100}; S = 1, 2: L = 100; k = 1..3.
  EXPECT_EQ(family.size(), 3u * (2 + 2 + 1 + 1));
  EXPECT_EQ(family.front(), (std::vector<double>{0.25, 1}));
  EXPECT_EQ(family.back(), (std::vector<double>{2, 2, 2, 100}));
  const BucketAdvice advice = advise_bucket_cap(setup, caps, kRuns, 0);
  ASSERT_TRUE(advice.list.searched);
  EXPECT_EQ(advice.list.lists, static_cast<int>(family.size()));
  EXPECT_GE(advice.list.distinct_layouts, 2);
  EXPECT_EQ(advice.list.candidates.size(), static_cast<std::size_t>(advice.list.distinct_layouts));
  for (const BucketListCandidate& candidate : advice.list.candidates) EXPECT_GE(candidate.median_s, advice.list.best.median_s);
  // The best list's prediction is the re-bucketed model's replay, as `replay --bucket-caps-mb` does.
  std::vector<std::int64_t> bytes;
  for (double cap : advice.list.best.caps_mb) bytes.push_back(static_cast<std::int64_t>(cap * 1024 * 1024));
  const WorkloadModel listed = rebucket(setup.model, BucketCaps::list(bytes));
  EXPECT_DOUBLE_EQ(advice.list.best.median_s,
                   trace::median_of(bootstrap_replays(listed, setup.options, 1, 0).front().iteration_times_s));
  // [1] + [L] is the single cap L with the trace's 1 MiB first bucket: no list is slower than
  // the best single cap above 1 MiB would allow, and the gain is measured against the best.
  EXPECT_DOUBLE_EQ(advice.list.gain, paired_gain(advice.best.replicate_medians_s, advice.list.best.replicate_medians_s).gain);
  EXPECT_LE(advice.list.best.median_s, advice.candidates.back().median_s);
  EXPECT_LE(advice.list.best.median_interval_s.low, advice.list.best.median_s);
  EXPECT_GE(advice.list.best.median_interval_s.high, advice.list.best.median_s);
  EXPECT_NE(advice_to_text({"synthetic", advice, {}, {}, {}}).find("per-bucket list of caps (second answer"), std::string::npos);
}

// Three runs' answers, set by hand: the aggregate counts and picks them as documented.
TEST(AdviseAcrossRuns, CountsAgreeingCapsTakesTheLongestTimeoutAndCountsEachRanksNamings) {
  const auto run = [](double cap_mb, double timeout_s, std::vector<int> stragglers) {
    Advice advice;
    advice.trace_dir = "run";
    advice.bucket.available = true;
    advice.bucket.recommended_cap_mb = cap_mb;
    advice.timeout.available = timeout_s > 0;
    advice.timeout.timeout_s = timeout_s;
    for (int rank = 0; rank < 3; ++rank) {
      RankCost cost;
      cost.rank = rank;
      cost.straggler = std::find(stragglers.begin(), stragglers.end(), rank) != stragglers.end();
      advice.stragglers.ranks.push_back(cost);
    }
    return advice;
  };
  const std::vector<Advice> runs = {run(5, 0.2, {2}), run(25, 0, {}), run(5, 0.35, {2, 0})};
  const AdviceAcrossRuns across = advice_across_runs(runs);
  EXPECT_EQ(across.recommended_caps_mb, (std::vector<double>{5, 25, 5}));
  EXPECT_EQ(across.runs_with_advised_cap, 2);
  ASSERT_EQ(across.timeouts_s.size(), 3u);
  EXPECT_TRUE(std::isnan(across.timeouts_s[1]));  // that run could not advise one
  EXPECT_DOUBLE_EQ(across.safe_timeout_s, 0.35);
  EXPECT_EQ(across.stragglers, (std::vector<std::vector<int>>{{2}, {}, {0, 2}}));
  EXPECT_EQ(across.straggler_runs, (std::vector<int>{1, 0, 2}));

  Advice advised = runs.front();
  advised.across_runs = across;
  const std::string text = advice_to_text(advised);
  EXPECT_NE(text.find("the advised run's 5 MiB in 2 of 3 runs"), std::string::npos) << text;
  EXPECT_NE(text.find("timeout=timedelta(seconds=0.35) is long enough on every run"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 0 named in 1 of 3 runs, rank 2 named in 2 of 3 runs"), std::string::npos) << text;
  const auto json = nlohmann::json::parse(advice_to_json(advised));
  EXPECT_TRUE(json["across_runs"]["timeout_s"][1].is_null());
  EXPECT_EQ(json["across_runs"]["straggler_runs"], nlohmann::json({1, 0, 2}));
}

TEST(AdviseBucket, ListWithinTheNoiseKeepsOneCap) {
  const AdviceSetup setup = prepare_advice(testing::make_synthetic_trace(compute_bound_run()));
  const BucketAdvice advice = advise_bucket_cap(setup, {1, 100}, kRuns, 0);
  ASSERT_TRUE(advice.list.searched);
  EXPECT_TRUE(advice.list.keep);
  EXPECT_LT(std::abs(advice.list.gain), 0.01);
  const std::string text = advice_to_text({"synthetic", advice, {}, {}, {}});
  EXPECT_NE(text.find("keep one cap: bucket_cap_mb=25"), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(advice_to_json({"synthetic", advice, {}, {}, {}}))["bucket"]["list"]["recommended_bucket_caps_mb"],
            nullptr);
}

}  // namespace
}  // namespace ddpsim::sim
