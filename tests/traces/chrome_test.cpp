// The Chrome export parses as JSON and holds one slice per phase, all-reduce and failure.
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/summary.hpp"
#include "test_support.hpp"

namespace ddpsim::trace {
namespace {

using nlohmann::json;

TEST(ChromeExport, OneProcessPerRankWithComputeAndCommTracks) {
  Trace trace = testing::example_trace(2, 3);
  Event delay;
  delay.rank = 1;
  delay.iteration = 2;
  delay.type = EventType::Delay;
  delay.t_ns = testing::example_iteration_begin_ns(2) + 10;
  delay.dur_ns = 50;
  delay.kind = "delay";
  auto& events = trace.ranks[1].events;
  events.insert(events.begin() + static_cast<long>(events.size()) - 20, delay);
  Event failure = delay;
  failure.type = EventType::Failure;
  failure.t_ns = events.back().t_ns + 1;
  failure.kind = "peer_closed";
  failure.message = "rank 0 \"went\" away";
  events.push_back(failure);

  const json chrome = json::parse(to_chrome_trace(trace));
  const json& list = chrome.at("traceEvents");
  // (pid, tid, ph) -> count, and the process names.
  std::map<std::tuple<int, int, std::string>, int> counts;
  std::map<int, std::string> process_names;
  for (const json& e : list) {
    counts[{e.at("pid").get<int>(), e.at("tid").get<int>(), e.at("ph").get<std::string>()}]++;
    if (e.at("name") == "process_name") process_names[e.at("pid")] = e.at("args").at("name");
  }
  EXPECT_EQ(process_names.size(), 2u);
  EXPECT_EQ(process_names[1], "rank 1 (node1)");
  // Compute: forward, backward, optimizer per iteration (+ the delay on rank 1).
  EXPECT_EQ((counts[{0, 0, "X"}]), 9);
  EXPECT_EQ((counts[{1, 0, "X"}]), 10);
  // Comm: one bucket in iteration 0, two in iterations 1 and 2.
  EXPECT_EQ((counts[{0, 1, "X"}]), 5);
  EXPECT_EQ((counts[{1, 1, "X"}]), 5);
  EXPECT_EQ((counts[{1, 1, "i"}]), 1);
  EXPECT_EQ((counts[{0, 1, "i"}]), 0);

  // An all-reduce slice carries bucket and bytes, in microseconds from the first event.
  for (const json& e : list) {
    if (e.at("ph") == "X" && e.at("tid") == 1 && e.at("args").at("iteration") == 1 &&
        e.at("args").at("bucket") == 1 && e.at("pid") == 0) {
      EXPECT_EQ(e.at("name"), "allreduce bucket 1");
      EXPECT_EQ(e.at("args").at("bytes"), 40);
      EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 200.0);  // 200000 ns
      EXPECT_GT(e.at("ts").get<double>(), 10'000.0);      // iteration 1 begins 10 ms in
    }
    if (e.at("ph") == "i") {
      EXPECT_EQ(e.at("args").at("message"), "rank 0 \"went\" away");
    }
  }
}

}  // namespace
}  // namespace ddpsim::trace
