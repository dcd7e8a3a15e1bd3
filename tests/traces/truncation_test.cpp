// A rank killed mid-run leaves a file cut anywhere; every complete iteration must survive.
#include <gtest/gtest.h>

#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>  // _exit

#include "ddpsim/process/fork_call.hpp"
#include "ddpsim/process/wait.hpp"
#include "ddpsim/trace/io.hpp"
#include "test_support.hpp"

namespace ddpsim::trace {
namespace {

using testing::TempDir;

// Byte offset just after the line holding `needle` (searching from `from`).
std::size_t end_of_line_with(const std::string& text, const std::string& needle,
                             std::size_t from = 0) {
  const std::size_t at = text.find(needle, from);
  EXPECT_NE(at, std::string::npos) << needle;
  return text.find('\n', at) + 1;
}

class CutTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    write_trace(dir.str(), testing::example_trace(2, 4));
    events_path = dir / "rank-1.events.csv";
    full = testing::read_text(events_path);
  }
  TempDir dir;
  std::string events_path;
  std::string full;
};

TEST_F(CutTrace, CutMidLineInsideAnIterationKeepsTheCompleteOnes) {
  // Cut in the middle of iteration 2's first all-reduce line.
  const std::size_t line_start = full.find("1,2,allreduce_begin");
  ASSERT_NE(line_start, std::string::npos);
  const std::size_t cut = line_start + 9;  // "1,2,allre" — a write interrupted mid-line
  std::filesystem::resize_file(events_path, cut);

  const Trace trace = read_trace(dir.str());
  EXPECT_TRUE(trace.ranks[1].truncated);
  EXPECT_FALSE(trace.ranks[0].truncated);
  EXPECT_EQ(trace.ranks[1].complete_iterations(), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(trace.ranks[0].complete_iterations(), (std::vector<std::int64_t>{0, 1, 2, 3}));
  // The run's: what every rank completed; steady state leaves the warm-up iteration 0 out.
  EXPECT_EQ(trace.complete_iterations(), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(without_warmup(trace.complete_iterations()), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(without_warmup({0}), (std::vector<std::int64_t>{0}));  // nothing else to go by
  EXPECT_EQ(without_warmup({3, 4}), (std::vector<std::int64_t>{3, 4}));  // a resumed run has none
  // Every whole line before the cut is kept: iteration 2's events up to the cut line.
  const std::size_t kept_lines =
      static_cast<std::size_t>(std::count(full.begin(), full.begin() + line_start, '\n')) - 1;
  EXPECT_EQ(trace.ranks[1].events.size(), kept_lines);
  EXPECT_EQ(trace.ranks[1].events.back().iteration, 2);
}

TEST_F(CutTrace, EveryCutPositionReadsWithoutError) {
  // A kill can land on any byte: each prefix past the header must read, keep every iteration
  // whose end line is whole, and flag the cut exactly when the prefix ends mid-line.
  const std::size_t header_end = full.find('\n') + 1;
  const std::size_t end_of_1 = end_of_line_with(full, "1,1,iteration_end");
  for (std::size_t cut = header_end; cut <= full.size(); cut += 7) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut));
    testing::write_text(events_path, full.substr(0, cut));
    const Trace trace = read_trace(dir.str());
    EXPECT_EQ(trace.ranks[1].truncated, full[cut - 1] != '\n');
    const auto complete = trace.ranks[1].complete_iterations();
    if (cut >= end_of_1) {
      ASSERT_GE(complete.size(), 2u);
      EXPECT_EQ(complete[1], 1);
    }
  }
}

TEST_F(CutTrace, CutHeaderIsAnError) {
  std::filesystem::resize_file(events_path, 10);
  try {
    read_trace(dir.str());
    FAIL() << "a cut header must not read";
  } catch (const TraceError& error) {
    EXPECT_EQ(std::string(error.what()),
              events_path +
                  ":1: expected the header line "
                  "\"rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message\", got a cut "
                  "line \"rank,itera\"");
  }
}

TEST(KilledWriter, ProcessDeathMidIterationKeepsFlushedIterations) {
  // A real process writes through TraceWriter and dies without running any destructor.
  TempDir dir;
  const pid_t child = process::fork_call([&] {
    TraceWriter writer(dir.str(), testing::example_meta(0, 1));
    std::int64_t t = 1000;
    for (int iteration = 0; iteration < 3; ++iteration) {
      writer.record(EventType::IterationBegin, iteration, t++);
      writer.record(EventType::ForwardBegin, iteration, t++);
      writer.record(EventType::ForwardEnd, iteration, t++);
      writer.record(EventType::IterationEnd, iteration, t++);
    }
    writer.record(EventType::IterationBegin, 3, t++);
    writer.record(EventType::ForwardBegin, 3, t++);
    ::_exit(0);  // killed: iteration 3 never ends, the buffer is never flushed
    return 0;
  });
  const int status = process::wait_for(child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << process::describe_wait_status(status);
  const Trace trace = read_trace(dir.str());
  EXPECT_EQ(trace.ranks[0].complete_iterations(), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(trace.ranks[0].events.size(), 12u);
  EXPECT_FALSE(trace.ranks[0].truncated);
}

}  // namespace
}  // namespace ddpsim::trace
