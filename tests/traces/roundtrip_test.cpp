// Writing a trace and reading it back gives the same metadata and events.
#include <gtest/gtest.h>

#include <thread>

#include "ddpsim/trace/io.hpp"
#include "test_support.hpp"

namespace ddpsim::trace {
namespace {

using testing::TempDir;

void expect_meta_equal(const RunMeta& a, const RunMeta& b) {
  EXPECT_EQ(a.schema_version, b.schema_version);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.tool.name, b.tool.name);
  EXPECT_EQ(a.tool.version, b.tool.version);
  EXPECT_EQ(a.tool.git_sha, b.tool.git_sha);
  EXPECT_EQ(a.start_time_utc, b.start_time_utc);
  EXPECT_EQ(a.clock, b.clock);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.local_rank, b.local_rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.workload_name, b.workload_name);
  EXPECT_EQ(a.workload, b.workload);
  ASSERT_EQ(a.parameters.size(), b.parameters.size());
  for (std::size_t i = 0; i < a.parameters.size(); ++i) {
    EXPECT_EQ(a.parameters[i].index, b.parameters[i].index);
    EXPECT_EQ(a.parameters[i].name, b.parameters[i].name);
    EXPECT_EQ(a.parameters[i].numel, b.parameters[i].numel);
    EXPECT_EQ(a.parameters[i].dtype, b.parameters[i].dtype);
    EXPECT_EQ(a.parameters[i].alone, b.parameters[i].alone);
  }
  EXPECT_EQ(a.bucket_cap_bytes, b.bucket_cap_bytes);
  EXPECT_EQ(a.first_bucket_cap_bytes, b.first_bucket_cap_bytes);
  ASSERT_EQ(a.bucket_assignments.size(), b.bucket_assignments.size());
  for (std::size_t i = 0; i < a.bucket_assignments.size(); ++i) {
    EXPECT_EQ(a.bucket_assignments[i].first_iteration, b.bucket_assignments[i].first_iteration);
    EXPECT_EQ(a.bucket_assignments[i].buckets, b.bucket_assignments[i].buckets);
  }
  EXPECT_DOUBLE_EQ(a.timeout_s, b.timeout_s);
  EXPECT_EQ(a.skew, b.skew);
  EXPECT_EQ(a.settings, b.settings);
}

void expect_events_equal(const std::vector<Event>& a, const std::vector<Event>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    EXPECT_EQ(a[i].rank, b[i].rank);
    EXPECT_EQ(a[i].iteration, b[i].iteration);
    EXPECT_EQ(a[i].type, b[i].type);
    EXPECT_EQ(a[i].t_ns, b[i].t_ns);
    EXPECT_EQ(a[i].bucket, b[i].bucket);
    EXPECT_EQ(a[i].param, b[i].param);
    EXPECT_EQ(a[i].bytes, b[i].bytes);
    EXPECT_EQ(a[i].dur_ns, b[i].dur_ns);
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].message, b[i].message);
  }
}

TEST(RoundTrip, WriteTraceThenReadTraceGivesTheSameTrace) {
  TempDir dir;
  Trace trace = testing::example_trace(2, 4);
  trace.ranks[1].meta.skew = {{"slowdown", "1.5"}};
  trace.ranks[1].meta.parameters.back().alone = true;
  // Text fields with the characters CSV must quote.
  Event failure;
  failure.rank = 1;
  failure.iteration = 3;
  failure.type = EventType::Failure;
  failure.t_ns = trace.ranks[1].events.back().t_ns + 5;
  failure.bucket = 1;
  failure.dur_ns = 1234;
  failure.kind = "timeout";
  failure.message = "peer 0 said \"bye\", then closed";
  trace.ranks[1].events.push_back(failure);

  write_trace(dir.str(), trace);
  const Trace back = read_trace(dir.str());
  ASSERT_EQ(back.world_size(), 2);
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    expect_meta_equal(trace.ranks[r].meta, back.ranks[r].meta);
    expect_events_equal(trace.ranks[r].events, back.ranks[r].events);
    EXPECT_FALSE(back.ranks[r].truncated);
    EXPECT_EQ(back.ranks[r].complete_iterations(), (std::vector<std::int64_t>{0, 1, 2, 3}));
  }
}

TEST(RoundTrip, WriteTraceReplacesALargerEarlierTraceInTheSameDirectory) {
  TempDir dir;
  write_trace(dir.str(), testing::example_trace(3, 1));
  write_trace(dir.str(), testing::example_trace(2, 2));
  EXPECT_FALSE(std::filesystem::exists(dir / "rank-2.meta.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "rank-2.events.csv"));
  const Trace back = read_trace(dir.str());
  EXPECT_EQ(back.world_size(), 2);
  EXPECT_EQ(back.ranks[1].complete_iterations().size(), 2u);
}

// A write that fails part way (here rank 1's events cannot be staged) leaves the old trace
// whole: rank 0 is not replaced by the new run's, and no temporary file is left behind.
TEST(RoundTrip, FailedWriteTraceLeavesTheOldTraceWhole) {
  TempDir dir;
  write_trace(dir.str(), testing::example_trace(2, 2));
  const std::string old_rank0 = testing::read_text(dir / "rank-0.events.csv");
  std::filesystem::create_directory(dir / ".rank-1.events.csv.tmp");  // fopen of it fails
  EXPECT_THROW(write_trace(dir.str(), testing::example_trace(2, 4)), TraceError);
  EXPECT_EQ(testing::read_text(dir / "rank-0.events.csv"), old_rank0);
  EXPECT_FALSE(std::filesystem::exists(dir / ".rank-0.events.csv.tmp"));
  EXPECT_FALSE(std::filesystem::exists(dir / ".rank-0.meta.json.tmp"));
  EXPECT_FALSE(std::filesystem::exists(dir / ".rank-1.meta.json.tmp"));
  std::filesystem::remove(dir / ".rank-1.events.csv.tmp");
  EXPECT_EQ(read_trace(dir.str()).ranks[0].complete_iterations().size(), 2u);
}

TEST(RoundTrip, MessageWithLineBreakBecomesOneLine) {
  Event event;
  event.type = EventType::Failure;
  event.kind = "error";
  event.message = "first\nsecond, \"third\"";
  EXPECT_EQ(event_to_csv(event), "0,0,failure,0,,,,,error,\"first second, \"\"third\"\"\"");
}

TEST(TraceWriter, StreamsSortedEventsAndRewritesMetadata) {
  TempDir dir;
  RunMeta meta = testing::example_meta(0, 1);
  meta.bucket_assignments = {{0, {{2, 1, 0}}}};
  TraceWriter writer(dir.str(), meta);
  // The header is on disk at once, before any event.
  EXPECT_EQ(testing::read_text(dir / "rank-0.events.csv"), events_csv_header() + "\n");

  writer.record(EventType::IterationBegin, 0, 100);
  // Recorded out of time order from several threads, as autograd hooks do.
  std::vector<std::thread> threads;
  for (int p = 0; p < 3; ++p) {
    threads.emplace_back([&writer, p] {
      Event e;
      e.type = EventType::GradReady;
      e.iteration = 0;
      e.param = p;
      e.t_ns = 300 - 10 * p;
      writer.record(e);
    });
  }
  for (std::thread& t : threads) t.join();
  // Nothing but the header reaches the file before the iteration ends.
  EXPECT_EQ(testing::read_text(dir / "rank-0.events.csv"), events_csv_header() + "\n");
  writer.record(EventType::IterationEnd, 0, 400);

  writer.set_bucket_assignment(1, {{2}, {1, 0}});
  writer.set_bucket_assignment(2, {{2}, {1, 0}});  // unchanged: ignored
  writer.set_setting("sync_every", "2");

  const RankTrace back = read_rank(dir / "rank-0.meta.json", dir / "rank-0.events.csv");
  ASSERT_EQ(back.events.size(), 5u);
  EXPECT_EQ(back.events[1].param, 2);
  EXPECT_EQ(back.events[2].param, 1);
  EXPECT_EQ(back.events[3].param, 0);
  EXPECT_EQ(back.events[4].type, EventType::IterationEnd);
  ASSERT_EQ(back.meta.bucket_assignments.size(), 2u);
  EXPECT_EQ(back.meta.bucket_assignments[1].first_iteration, 1);
  EXPECT_EQ(back.meta.settings.at("sync_every"), "2");
  EXPECT_FALSE(std::filesystem::exists(dir / ".rank-0.meta.json.tmp"));
}

TEST(TraceWriter, LaterLayoutForTheSameIterationReplacesTheEarlierOne) {
  TempDir dir;
  RunMeta meta = testing::example_meta(0, 1);
  meta.bucket_assignments = {{0, {{2, 1, 0}}}};
  TraceWriter writer(dir.str(), meta);
  writer.set_bucket_assignment(1, {{2}, {1, 0}});
  writer.set_bucket_assignment(1, {{2, 1}, {0}});
  RunMeta back = read_rank(dir / "rank-0.meta.json", dir / "rank-0.events.csv").meta;
  ASSERT_EQ(back.bucket_assignments.size(), 2u);
  EXPECT_EQ(back.bucket_assignments[1].buckets, (std::vector<std::vector<int>>{{2, 1}, {0}}));
  // Going back to the layout of iteration 0 leaves a single layout, not two equal ones.
  writer.set_bucket_assignment(1, {{2, 1, 0}});
  back = read_rank(dir / "rank-0.meta.json", dir / "rank-0.events.csv").meta;
  EXPECT_EQ(back.bucket_assignments.size(), 1u);
  EXPECT_EQ(writer.meta().bucket_assignments.size(), 1u);
}

TEST(TraceWriter, FailureIsFlushedAtOnce) {
  TempDir dir;
  TraceWriter writer(dir.str(), testing::example_meta(0, 1));
  writer.record(EventType::IterationBegin, 0, 100);
  Event failure;
  failure.type = EventType::Failure;
  failure.t_ns = 200;
  failure.kind = "peer_closed";
  writer.record(failure);
  const RankTrace back = read_rank(dir / "rank-0.meta.json", dir / "rank-0.events.csv");
  ASSERT_EQ(back.events.size(), 2u);
  EXPECT_EQ(back.events[1].kind, "peer_closed");
  EXPECT_TRUE(back.complete_iterations().empty());
}

}  // namespace
}  // namespace ddpsim::trace
