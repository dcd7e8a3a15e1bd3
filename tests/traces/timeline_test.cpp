// build_timelines pairs each allreduce_begin with the next allreduce_end of its bucket: what a
// pair carries (bytes) and when it ended relative to the others (end_order).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ddpsim::trace
