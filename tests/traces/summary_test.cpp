// Summary figures checked against values worked out by hand from a synthetic trace.
//
// test_support's example iteration, in ns after iteration_begin (B = backward_begin =
// 200 + forward): forward_begin 100, forward_end 100 + forward; gradients of params 2, 1, 0 at
// B + 100000, B + 200000, B + 200400. From iteration 1 the layout is [[2], [1, 0]]: bucket 0
// (16 bytes) all-reduces from B + 100002 for allreduce_ns[0]; bucket 1 (40 bytes) starts when
// bucket 0 ends (its gradients are ready by then). backward_end = B + backward;
// iteration_end = backward_end + 200 + optimizer, so an iteration lasts
// 400 + forward + backward + optimizer.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/summary.hpp"
#include "test_support.hpp"

namespace ddpsim::trace {
namespace {

using testing::IterationPlan;

IterationPlan plan(std::int64_t backward_ns, std::int64_t allreduce0_ns) {
  IterationPlan p;
  p.forward_ns = 300'000;
  p.backward_ns = backward_ns;
  p.optimizer_ns = 50'000;
  p.allreduce_ns[0] = allreduce0_ns;
  p.allreduce_ns[1] = 100'000;
  return p;
}

// 4 ranks, 4 iterations. Rank 0 and ranks 1-3 differ in backward time; bucket 0's all-reduce
// takes 200, 300, 700 us in iterations 1, 2, 3 on every rank.
Trace four_rank_trace() {
  const std::vector<IterationPlan> rank0 = {plan(600'000, 150'000), plan(700'000, 200'000),
                                            plan(800'000, 300'000), plan(650'000, 700'000)};
  const std::vector<IterationPlan> others = {plan(600'000, 150'000), plan(650'000, 200'000),
                                             plan(900'000, 300'000), plan(700'000, 700'000)};
  return testing::example_trace({rank0, others, others, others});
}

TEST(Summary, IterationTimesAreTheSlowestRanksAndTheMedianSkipsIterationZero) {
  const Summary s = summarize(four_rank_trace());
  EXPECT_EQ(s.world_size, 4);
  ASSERT_EQ(s.iterations.size(), 4u);
  // Slowest rank's backward per iteration: 600, 700, 900, 700 us; + 350.4 us of the rest.
  EXPECT_NEAR(s.iterations[0].time_s, 950.4e-6, 1e-12);
  EXPECT_NEAR(s.iterations[1].time_s, 1050.4e-6, 1e-12);
  EXPECT_NEAR(s.iterations[2].time_s, 1250.4e-6, 1e-12);
  EXPECT_NEAR(s.iterations[3].time_s, 1050.4e-6, 1e-12);
  EXPECT_NEAR(s.iterations[1].rank_time_s[0], 1050.4e-6, 1e-12);
  EXPECT_NEAR(s.iterations[1].rank_time_s[1], 1000.4e-6, 1e-12);
  // Median and mean of 1050.4, 1250.4, 1050.4 us.
  EXPECT_NEAR(s.median_iteration_s, 1050.4e-6, 1e-12);
  EXPECT_NEAR(s.mean_iteration_s, (2 * 1050.4e-6 + 1250.4e-6) / 3, 1e-12);
  // 4 ranks x batch 32 per median iteration.
  EXPECT_NEAR(s.samples_per_s, 128 / 1050.4e-6, 1e-6);
}

TEST(Summary, PhaseMediansPoolRanksAndIterations) {
  const Summary s = summarize(four_rank_trace());
  EXPECT_NEAR(s.median_forward_s, 300e-6, 1e-12);
  EXPECT_NEAR(s.median_optimizer_s, 50e-6, 1e-12);
  // Backward samples (iterations 1-3): rank 0: 700, 800, 650; ranks 1-3: 650, 900, 700 each.
  // Sorted: 650 x4, 700 x4, 800, 900 x3 -> the middle pair is 700, 700.
  EXPECT_NEAR(s.median_backward_s, 700e-6, 1e-12);
}

TEST(Summary, BucketBandwidthFollowsNcclTestsConvention) {
  const Summary s = summarize(four_rank_trace());
  EXPECT_EQ(s.num_buckets, 2);
  ASSERT_EQ(s.buckets.size(), 2u);
  const BucketStats& b0 = s.buckets[0];
  EXPECT_EQ(b0.bytes, 16);  // out.weight: 4 floats
  EXPECT_EQ(b0.num_params, 1);
  // Iterations 1-3 on 4 ranks: 200, 300, 700 us, four times each.
  EXPECT_NEAR(b0.median_allreduce_s, 300e-6, 1e-12);
  EXPECT_NEAR(b0.mean_allreduce_s, 400e-6, 1e-12);
  EXPECT_NEAR(b0.median_transfer_s, 300e-6, 1e-12);  // every rank starts together here
  const double algbw = 16 / 300e-6 / 1e9;
  EXPECT_NEAR(b0.algbw_gbps, algbw, 1e-15);
  EXPECT_NEAR(b0.busbw_gbps, algbw * 2 * 3 / 4, 1e-15);

  const BucketStats& b1 = s.buckets[1];
  EXPECT_EQ(b1.bytes, 40);  // fc.bias + fc.weight: 10 floats
  EXPECT_EQ(b1.num_params, 2);
  EXPECT_NEAR(b1.median_allreduce_s, 100e-6, 1e-12);
  EXPECT_NEAR(b1.busbw_gbps, 40 / 100e-6 / 1e9 * 1.5, 1e-15);
}

TEST(Summary, BandwidthIsTimedFromTheLastRankToStartNotFromAnEarlyRanksWait) {
  // Rank 0's forward is 150 us shorter, so it starts bucket 0 150 us early and waits for rank 1
  // inside it: 350 us against rank 1's 200 us, both ending together (B + 100002 + ...).
  IterationPlan early = plan(600'000, 350'000);
  early.forward_ns = 150'000;
  const IterationPlan late = plan(600'000, 200'000);
  const Summary s = summarize(testing::example_trace(
      {std::vector<IterationPlan>(4, early), std::vector<IterationPlan>(4, late)}));
  ASSERT_EQ(s.buckets.size(), 2u);
  const BucketStats& b0 = s.buckets[0];
  // The network's time is rank 1's; each rank's time pools 350 and 200 us over iterations 1-3.
  EXPECT_NEAR(b0.median_transfer_s, 200e-6, 1e-12);
  EXPECT_NEAR(b0.median_allreduce_s, 275e-6, 1e-12);
  EXPECT_NEAR(b0.mean_allreduce_s, 275e-6, 1e-12);
  EXPECT_NEAR(b0.algbw_gbps, 16 / 200e-6 / 1e9, 1e-15);
  EXPECT_NEAR(b0.busbw_gbps, 16 / 200e-6 / 1e9, 1e-15);  // 2(W-1)/W = 1 for 2 ranks
  // Bucket 1 starts on both when bucket 0 ends: the same 100 us everywhere.
  EXPECT_NEAR(s.buckets[1].median_transfer_s, 100e-6, 1e-12);
  EXPECT_NEAR(s.buckets[1].median_allreduce_s, 100e-6, 1e-12);

  const std::string table = summary_to_table(s);
  EXPECT_NE(table.find("     0       16 B       1       0.200       0.275       0.275"), std::string::npos) << table;
  const auto json = nlohmann::json::parse(summary_to_json(s));
  EXPECT_NEAR(json["buckets"][0]["median_transfer_s"].get<double>(), 200e-6, 1e-12);
}

TEST(Summary, OverlapIsTheAllreduceTimeInsideTheGradientWindow) {
  const Summary s = summarize(four_rank_trace());
  // Window [B, B + 200400]. Bucket 0 runs from B + 100002: 100398 ns of it are inside whatever
  // its length (>= 200 us here); bucket 1 starts after the window. Per rank, iterations 1-3:
  // hidden 3 x 100398, all-reduce (200 + 300 + 700) + 3 x 100 us.
  EXPECT_NEAR(s.overlap_fraction, 3 * 100398.0 / 1'500'000.0, 1e-12);
  // Summed all-reduce time per iteration: 300, 400, 800 us -> median 400 us.
  EXPECT_NEAR(s.total_allreduce_s_per_iter, 400e-6, 1e-12);
}

TEST(Summary, OverlapIsZeroWhenTheFirstBucketIsReadyLast) {
  // out.weight (bucket 0 from iteration 1) ready last, at B + 300 us: DDP all-reduces buckets in
  // order, so no communication starts before the last gradient and nothing is hidden.
  IterationPlan p = plan(1'000'000, 200'000);
  p.grad_ready_ns[0] = 300'000;
  p.grad_ready_ns[1] = 100'000;
  p.grad_ready_ns[2] = 100'400;
  const Summary s = summarize(testing::example_trace(2, 3, p));
  EXPECT_DOUBLE_EQ(s.overlap_fraction, 0.0);
  EXPECT_NEAR(s.total_allreduce_s_per_iter, 300e-6, 1e-12);
}

TEST(Summary, FailuresAndIncompleteIterations) {
  Trace trace = testing::example_trace(2, 3);
  // Rank 1 loses its last iteration's end and records a failure instead.
  auto& events = trace.ranks[1].events;
  events.pop_back();
  Event failure;
  failure.rank = 1;
  failure.iteration = 2;
  failure.type = EventType::Failure;
  failure.t_ns = events.back().t_ns + 1;
  failure.bucket = 1;
  failure.kind = "timeout";
  failure.message = "no answer from rank 0";
  events.push_back(failure);
  const Summary s = summarize(trace);
  ASSERT_EQ(s.iterations.size(), 2u);  // iteration 2 is complete on rank 0 only
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_EQ(s.failures[0], "rank 1 iteration 2 bucket 1: timeout: no answer from rank 0");
}

TEST(Summary, JsonCarriesTheSameNumbers) {
  const Summary s = summarize(four_rank_trace());
  const nlohmann::json j = nlohmann::json::parse(summary_to_json(s));
  EXPECT_EQ(j.at("world_size"), 4);
  EXPECT_EQ(j.at("num_complete_iterations"), 4);
  EXPECT_DOUBLE_EQ(j.at("median_iteration_s").get<double>(), s.median_iteration_s);
  EXPECT_DOUBLE_EQ(j.at("overlap_fraction").get<double>(), s.overlap_fraction);
  ASSERT_EQ(j.at("buckets").size(), 2u);
  EXPECT_DOUBLE_EQ(j.at("buckets")[0].at("busbw_gbps").get<double>(), s.buckets[0].busbw_gbps);
  EXPECT_EQ(j.at("iterations")[2].at("rank_time_s").size(), 4u);
}

// An iteration lasts 400 + forward + backward + optimizer ns on a rank; the job's time is the
// slowest rank's, and an iteration one rank did not end is not one.
TEST(IterationTimes, SlowestRankOfEachIterationEveryRankEnded) {
  Trace trace = four_rank_trace();
  auto& events = trace.ranks[3].events;
  events.erase(std::find_if(events.begin(), events.end(), [](const Event& e) {
    return e.type == EventType::IterationEnd && e.iteration == 3;
  }));
  const std::vector<IterationTime> times = trace.iteration_times();
  ASSERT_EQ(times.size(), 3u);
  const std::int64_t fixed_ns = 400 + 300'000 + 50'000;
  const std::int64_t slowest_backward_ns[] = {600'000, 700'000, 900'000};
  for (std::size_t i = 0; i < times.size(); ++i) {
    EXPECT_EQ(times[i].iteration, static_cast<std::int64_t>(i));
    ASSERT_EQ(times[i].rank_ns.size(), 4u);
    EXPECT_EQ(times[i].slowest_ns(), fixed_ns + slowest_backward_ns[i]);
  }
  EXPECT_EQ(times[1].rank_ns[0], fixed_ns + 700'000);
  EXPECT_EQ(times[1].rank_ns[1], fixed_ns + 650'000);
  // The summary's iteration times are these.
  const Summary summary = summarize(trace);
  ASSERT_EQ(summary.iterations.size(), times.size());
  EXPECT_DOUBLE_EQ(summary.iterations[2].time_s, static_cast<double>(fixed_ns + 900'000) / 1e9);
}

TEST(Summary, TableShowsTheHeadlineFigures) {
  const std::string table = summary_to_table(summarize(four_rank_trace()));
  EXPECT_NE(table.find("4 ranks"), std::string::npos) << table;
  EXPECT_NE(table.find("median 1.050 ms"), std::string::npos) << table;
  EXPECT_NE(table.find("20.1% hidden"), std::string::npos) << table;
  // One of a thing is singular (a 1-rank run, a profile import's one bucket).
  Summary one = summarize(four_rank_trace());
  one.world_size = 1;
  one.num_parameters = 1;
  one.num_buckets = 1;
  const std::string single = summary_to_table(one);
  EXPECT_NE(single.find(", 1 rank\nmodel:       1 parameter, "), std::string::npos) << single;
  EXPECT_NE(single.find(", 1 bucket (last layout)"), std::string::npos) << single;
}

// #20: AMP's skipped steps and loss scale, and the evaluation phases, as notes (rank 0's file).
TEST(Summary, NotesAmpStepsAndEvaluations) {
  Trace trace = four_rank_trace();
  auto& events = trace.ranks[0].events;
  EXPECT_EQ(summary_to_table(summarize(trace)).find("amp:"), std::string::npos);
  for (Event& e : events) {
    if (e.type != EventType::OptimizerEnd) continue;
    e.kind = e.iteration == 2 ? "skipped" : "stepped";
    e.message = e.iteration <= 2 ? "65536" : "32768";
  }
  Event begin = events.back();  // after the last iteration_end, 0.5 s long
  begin.type = EventType::EvalBegin;
  Event end = begin;
  end.type = EventType::EvalEnd;
  end.t_ns += 500'000'000;
  end.message = "8528/10000";
  events.push_back(begin);
  events.push_back(end);
  const std::string table = summary_to_table(summarize(trace));
  EXPECT_NE(table.find("1 of 4 steps skipped (non-finite gradients), loss scale 65536 -> 32768"),
            std::string::npos) << table;
  EXPECT_NE(table.find("1 phases of median 0.500 s between iterations (not compute): last accuracy "
                       "0.8528 (8528/10000) after iteration 4"),
            std::string::npos) << table;
  // Not compute: the iteration times are those without the evaluation.
  EXPECT_NEAR(summarize(trace).median_iteration_s, 1050.4e-6, 1e-12);
}

}  // namespace
}  // namespace ddpsim::trace
