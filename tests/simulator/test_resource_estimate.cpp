// resource_estimate.hpp: what a replay builds, counted without building it, and the one-line
// refusal when the estimate exceeds a limit.
#include "ddpsim/sim/resource_estimate.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "ddpsim/trace/skew.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

PreparedReplay prepared_at(int world_size, std::int64_t iterations, AllreduceAlgorithm algorithm = AllreduceAlgorithm::RingAggregated) {
  testing::SyntheticRun run;  // 4 ranks, 8 parameters in 4 buckets
  ReplayRequest request;
  request.trace_dir = "synthetic";
  request.world_size = world_size;
  request.iterations = iterations;
  request.algorithm = algorithm;
  return prepare_replay(request, testing::make_synthetic_trace(run));
}

TEST(ReplaySize, CountsWithoutLookingAtEachRank) {
  const auto start = std::chrono::steady_clock::now();
  const PreparedReplay prepared = prepared_at(1000000000, 1);
  const ReplaySize size = replay_size(prepared.model, prepared.options);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_EQ(size.ranks, 1000000000);
  EXPECT_EQ(size.iterations, 1);
  EXPECT_EQ(size.events_per_rank_iteration, 9 + 8 + 3 * 4);
  // 4 measured ranks, and ranks beyond them replay one of 4 sequences of one iteration.
  EXPECT_EQ(size.classes, 8);
  EXPECT_EQ(size.actors, 16);
  EXPECT_DOUBLE_EQ(size.rank_events, 0);  // the result stays per class
  EXPECT_DOUBLE_EQ(size.class_events, 8 * 29);
  EXPECT_EQ(size.messages, 0);
  // Every rank's events (--out): each rank's, every iteration.
  EXPECT_DOUBLE_EQ(replay_size(prepared.model, prepared.options, {true, false}).rank_events, 1e9 * 29);
}

TEST(ReplaySize, RanksOfTheirOwnAreClassesOfTheirOwn) {
  PreparedReplay prepared = prepared_at(4096, 2, AllreduceAlgorithm::Ring);
  ReplaySize ring = replay_size(prepared.model, prepared.options);
  EXPECT_EQ(ring.classes, 4096);  // the explicit ring never merges
  EXPECT_EQ(ring.hosts, 4096);
  EXPECT_DOUBLE_EQ(ring.messages, 2.0 * 4095 * 4096 * 4 * 2);

  prepared = prepared_at(4096, 2);
  prepared.options.independent_copies = true;
  EXPECT_EQ(replay_size(prepared.model, prepared.options).classes, 4096);

  prepared = prepared_at(4096, 2);
  prepared.options.skew.distributions.push_back(trace::parse_delay_distribution("all=exp:5"));
  EXPECT_EQ(replay_size(prepared.model, prepared.options).classes, 4096);

  prepared = prepared_at(4096, 2);
  prepared.options.slowdown[7] = 2;
  prepared.options.skew.delays.push_back(trace::parse_delay("9=10"));
  EXPECT_EQ(replay_size(prepared.model, prepared.options).classes, 4 + 2 + 16);  // 4^2 sequences beyond
}

TEST(ResourceEstimate, GrowsWithRanksIterationsAndRuns) {
  const ResourceEstimate small = estimate_replay(prepared_at(1024, 1), 1, {true, false});
  const ResourceEstimate wide = estimate_replay(prepared_at(65536, 1), 1, {true, false});
  const ResourceEstimate long_run = estimate_replay(prepared_at(65536, 3), 1, {true, false});
  const ResourceEstimate many = estimate_replay(prepared_at(65536, 3), 5, {true, false});
  EXPECT_LT(small.resident_bytes, wide.resident_bytes);
  EXPECT_LT(wide.resident_bytes, long_run.resident_bytes);
  EXPECT_DOUBLE_EQ(long_run.resident_bytes, many.resident_bytes);  // runs go one at a time
  EXPECT_GT(many.wall_s, long_run.wall_s);
  EXPECT_GE(long_run.address_space_bytes, long_run.resident_bytes);
  EXPECT_GT(estimate_replay(prepared_at(1000000000, 1), 1, {true, false}).resident_bytes, kGiB * 1024);  // a TiB and more
  // Per class, a rank is its class's number: a million ranks fit in well under a GiB.
  const ResourceEstimate classes = estimate_replay(prepared_at(1048576, 1), 1);
  EXPECT_LT(classes.resident_bytes, 0.25 * kGiB);
  EXPECT_LT(classes.bytes_per_rank, 64);
  EXPECT_GT(estimate_replay(prepared_at(1048576, 1), 1, {true, false}).resident_bytes, 100 * classes.resident_bytes);
  // A JSON report lists every rank's time in every iteration.
  EXPECT_GT(estimate_replay(prepared_at(1048576, 3), 1, {false, true}).resident_bytes,
            estimate_replay(prepared_at(1048576, 3), 1).resident_bytes + 3 * 1048576 * 32.0);
}

TEST(ResourceEstimate, RefusesInOneLineNamingTheEstimateAndTheLimit) {
  const ResourceEstimate estimate = estimate_replay(prepared_at(1000000000, 1), 1, {true, false});
  const std::vector<trace::MemoryLimit> limits = {{kGiB, trace::MemoryKind::Resident, false, "--max-memory"}};
  try {
    check_fits(estimate, limits, "the replay");
    FAIL() << "expected a refusal";
  } catch (const RequestError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("--world-size 1000000000: the replay needs about ", 0), 0u) << message;
    EXPECT_NE(message.find("TiB of memory"), std::string::npos) << message;
    EXPECT_NE(message.find("per rank"), std::string::npos) << message;
    EXPECT_NE(message.find("this process may use 1.0 GiB (--max-memory)"), std::string::npos) << message;
  }
  const ResourceEstimate small = estimate_replay(prepared_at(8, 1), 1);
  EXPECT_NO_THROW(check_fits(small, limits, "the replay"));
  // Two at once of a point that fits once may not.
  const std::vector<trace::MemoryLimit> tight = {{small.resident_bytes * 1.5, trace::MemoryKind::Resident, false, "--max-memory"}};
  EXPECT_NO_THROW(check_fits(small, tight, "the sweep's largest point", 1));
  EXPECT_THROW(check_fits(small, tight, "the sweep's largest point", 2), RequestError);
}

}  // namespace
}  // namespace ddpsim::sim
