// concatenate_runs: runs of one configuration as one trace that the reader accepts, each later
// run's complete steady-state iterations after the first's, ranks still aligned.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ddpsim/trace/concatenate.hpp"
#include "ddpsim/trace/io.hpp"
#include "test_support.hpp"

namespace ddpsim::trace {
namespace {

using testing::IterationPlan;
using testing::TempDir;

std::int64_t forward_ns(const RankTrace& rank, std::int64_t iteration) {
  std::int64_t begin = -1;
  for (const Event& event : rank.events) {
    if (event.iteration != iteration) continue;
    if (event.type == EventType::ForwardBegin) begin = event.t_ns;
    if (event.type == EventType::ForwardEnd) return event.t_ns - begin;
  }
  return -1;
}

TEST(Concatenate, LaterRunsFollowWithoutTheirWarmupAndTheReaderAcceptsTheResult) {
  IterationPlan slow;
  slow.forward_ns = 500'000;
  Trace first = testing::example_trace(2, 4);
  first.dir = "first";
  Trace second = testing::example_trace(2, 4, slow);  // on the same clock: overlaps `first` in time
  second.dir = "second";
  const Trace joined = concatenate_runs({first, second});

  TempDir dir;
  write_trace(dir.str(), joined);
  const Trace read = read_trace(dir.str());  // time order, layouts and pairing checked
  EXPECT_EQ(read.complete_iterations(), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
  for (const RankTrace& rank : read.ranks) {
    EXPECT_EQ(forward_ns(rank, 3), 300'000);  // the first run's last
    EXPECT_EQ(forward_ns(rank, 4), 500'000);  // the second run's iteration 1
    EXPECT_EQ(forward_ns(rank, 6), 500'000);
    EXPECT_TRUE(std::is_sorted(rank.events.begin(), rank.events.end(),
                               [](const Event& a, const Event& b) { return a.t_ns < b.t_ns; }));
  }
  // Each iteration's time is its run's: the shift moved every rank alike.
  const std::vector<IterationTime> times = read.iteration_times();
  const std::vector<IterationTime> second_times = second.iteration_times();
  ASSERT_EQ(times.size(), 7u);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(times[3 + i].rank_ns, second_times[i].rank_ns);
  // The second run begins 1 ms after the first's last event.
  std::int64_t first_end = 0;
  for (const RankTrace& rank : first.ranks) first_end = std::max(first_end, rank.events.back().t_ns);
  std::int64_t second_begin = std::numeric_limits<std::int64_t>::max();
  for (const RankTrace& rank : read.ranks) {
    for (const Event& event : rank.events)
      if (event.iteration == 4) second_begin = std::min(second_begin, event.t_ns);
  }
  EXPECT_EQ(second_begin, first_end + 1'000'000);
  // The layout in force from iteration 1 is the second run's too: no new entry.
  EXPECT_EQ(read.meta().bucket_assignments.size(), 2u);
}

// Each run follows the one before it, not the first: the third begins 1 ms after the second's
// last event, wherever that was moved.
TEST(Concatenate, EachRunFollowsThePreviousOne) {
  const Trace run = testing::example_trace(2, 3);
  const Trace joined = concatenate_runs({run, run, run});
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> span;  // iteration -> first, last event
  for (const RankTrace& rank : joined.ranks) {
    for (const Event& event : rank.events) {
      auto [at, fresh] = span.try_emplace(event.iteration, event.t_ns, event.t_ns);
      at->second.first = std::min(at->second.first, event.t_ns);
      at->second.second = std::max(at->second.second, event.t_ns);
    }
  }
  ASSERT_EQ(joined.complete_iterations(), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(span.at(3).first, span.at(2).second + 1'000'000);  // the second run after the first
  EXPECT_EQ(span.at(5).first, span.at(4).second + 1'000'000);  // the third after the second
}

TEST(Concatenate, AnIterationALaterRunDidNotCompleteOnEveryRankIsLeftOut) {
  Trace first = testing::example_trace(2, 3);
  Trace second = testing::example_trace(2, 4);
  // Rank 1 of the second run died in its iteration 3: no iteration_end, a failure instead.
  std::vector<Event>& events = second.ranks[1].events;
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const Event& e) { return e.iteration == 3 && e.type == EventType::IterationEnd; }),
               events.end());
  const Trace joined = concatenate_runs({first, second});
  EXPECT_EQ(joined.complete_iterations(), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  for (const RankTrace& rank : joined.ranks) {
    for (const Event& event : rank.events) EXPECT_LE(event.iteration, 4) << to_string(event.type);
  }
}

TEST(Concatenate, ALayoutOtherThanTheOneInForceGetsItsOwnEntry) {
  Trace first = testing::example_trace(2, 3);
  Trace second = testing::example_trace(2, 3);
  for (RankTrace& rank : second.ranks) rank.meta.bucket_assignments.back().buckets = {{2, 1}, {0}};
  const Trace joined = concatenate_runs({first, second});
  const std::vector<BucketAssignment>& layouts = joined.meta().bucket_assignments;
  ASSERT_EQ(layouts.size(), 3u);
  EXPECT_EQ(layouts[2].first_iteration, 3);
  EXPECT_EQ(layouts[2].buckets, (std::vector<std::vector<int>>{{2, 1}, {0}}));
}

TEST(Concatenate, RefusesRunsOfAnotherWorldSize) {
  Trace first = testing::example_trace(2, 3);
  first.dir = "first";
  Trace third = testing::example_trace(3, 3);
  third.dir = "third";
  try {
    concatenate_runs({first, third});
    FAIL() << "expected a TraceError";
  } catch (const TraceError& error) {
    EXPECT_EQ(std::string(error.what()), "third:0: expected a run of 2 ranks, as first, got 3");
  }
  EXPECT_THROW(concatenate_runs({}), TraceError);
}

}  // namespace
}  // namespace ddpsim::trace
