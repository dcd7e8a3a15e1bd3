// build_timelines pairs each allreduce_begin with the next allreduce_end of its bucket: what a
// pair carries (bytes) and when it ended relative to the others (end_order); and it is where the
// simulator reads the rest of an iteration: evaluations, stalls, first ready times, no_sync.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "ddpsim/trace/timeline.hpp"

namespace ddpsim::trace {
namespace {

Event allreduce(EventType type, std::int64_t t_ns, int bucket, std::int64_t bytes) {
  Event event;
  event.iteration = 1;
  event.type = type;
  event.t_ns = t_ns;
  event.bucket = bucket;
  event.bytes = bytes;
  return event;
}

TEST(Timeline, PairsCarryTheBeginsBytesElseTheEnds) {
  RankTrace rank;
  rank.events = {allreduce(EventType::AllreduceBegin, 10, 0, 16), allreduce(EventType::AllreduceEnd, 20, 0, 99),
                 allreduce(EventType::AllreduceBegin, 30, 1, -1), allreduce(EventType::AllreduceEnd, 40, 1, 40),
                 allreduce(EventType::AllreduceBegin, 50, 2, -1), allreduce(EventType::AllreduceEnd, 60, 2, -1)};
  const Timelines timelines = build_timelines(rank);
  const auto& list = timelines.at(1).allreduces;
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].bytes, 16);  // the begin's, though the end says otherwise
  EXPECT_EQ(list[1].bytes, 40);  // none on the begin: the end's
  EXPECT_EQ(list[2].bytes, 0);   // on neither
}

TEST(Timeline, EndOrderFollowsTheEndsInFileOrderTiesIncluded) {
  // Bucket 0 begins first but ends last, tied in time with bucket 1's end written before it;
  // bucket 2 never ends and is dropped.
  RankTrace rank;
  rank.events = {allreduce(EventType::AllreduceBegin, 10, 0, 8), allreduce(EventType::AllreduceBegin, 20, 1, 8),
                 allreduce(EventType::AllreduceBegin, 25, 2, 8), allreduce(EventType::AllreduceEnd, 50, 1, 8),
                 allreduce(EventType::AllreduceEnd, 50, 0, 8)};
  const Timelines timelines = build_timelines(rank);
  const auto& list = timelines.at(1).allreduces;
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].bucket, 0);  // in the order they began
  EXPECT_EQ(list[1].bucket, 1);
  EXPECT_GT(list[0].end_order, list[1].end_order);
}

Event at(EventType type, std::int64_t t_ns, std::string kind = "", std::string message = "") {
  Event event = allreduce(type, t_ns, -1, -1);
  event.kind = std::move(kind);
  event.message = std::move(message);
  return event;
}

TEST(Timeline, EvaluationsPairWithTheLatestBeginAndKeepTheirMessage) {
  RankTrace rank;
  rank.events = {at(EventType::EvalEnd, 5, "", "orphan"),  // no begin: kept, not complete
                 at(EventType::EvalBegin, 10), at(EventType::EvalBegin, 20),  // the second reopens
                 at(EventType::EvalEnd, 30, "", "accuracy 0.5"), at(EventType::EvalBegin, 40)};
  const std::vector<EvalPhase> evals = build_timelines(rank).at(1).evals;
  ASSERT_EQ(evals.size(), 4u);
  EXPECT_EQ(evals[0].interval.begin, -1);
  EXPECT_EQ(evals[0].message, "orphan");
  EXPECT_FALSE(evals[1].interval.complete());  // 10, reopened at 20
  EXPECT_EQ(evals[2].interval.begin, 20);
  EXPECT_EQ(evals[2].interval.end, 30);
  EXPECT_EQ(evals[2].message, "accuracy 0.5");
  EXPECT_EQ(evals[3].interval.end, -1);  // still open
}

TEST(Timeline, FirstReadyTimesStallKindsNoSyncAndTheLastEnd) {
  RankTrace rank;
  Event grad = at(EventType::GradReady, 30);
  grad.param = 2;
  Event grad_again = grad;
  grad_again.t_ns = 35;
  Event ready = at(EventType::BucketReady, 36);
  ready.bucket = 0;
  Event ready_again = ready;
  ready_again.t_ns = 37;
  Event stall = at(EventType::Delay, 12, "distribution");
  stall.dur_ns = 8;
  rank.events = {at(EventType::IterationBegin, 10, "no_sync"), stall, grad, grad_again, ready, ready_again,
                 allreduce(EventType::AllreduceBegin, 38, 0, 8), allreduce(EventType::AllreduceEnd, 45, 0, 8),
                 allreduce(EventType::AllreduceEnd, 47, 3, 8)};  // an end without a begin
  const IterationTimeline timeline = build_timelines(rank).at(1);
  EXPECT_TRUE(timeline.no_sync);
  EXPECT_EQ(timeline.first_grad_ready, (std::map<int, std::int64_t>{{2, 30}}));
  EXPECT_EQ(timeline.last_grad_ready, 35);
  EXPECT_EQ(timeline.bucket_ready, (std::map<int, std::int64_t>{{0, 36}}));
  ASSERT_EQ(timeline.delays.size(), 1u);
  EXPECT_EQ(timeline.delays[0].kind, "distribution");
  EXPECT_EQ(timeline.delays[0].interval.duration_ns(), 8);
  EXPECT_EQ(timeline.allreduces.size(), 1u);  // only the pair
  EXPECT_EQ(timeline.last_allreduce_end, 47);  // the unpaired end still counts as an end
}

}  // namespace
}  // namespace ddpsim::trace
