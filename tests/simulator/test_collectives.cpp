// All-reduce algorithms in SimGrid against their closed forms, on uncontended and
// bottlenecked platforms. Every replay runs in a forked child (one SimGrid engine each).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/replay.hpp"
#include "minimal_workload.hpp"

namespace ddpsim::sim {
namespace {

using testing::allreduce_durations_s;
using testing::communication_only_workload;
using testing::star_options;

constexpr double kAlpha = 20e-6;        // 20 us between two ranks
constexpr double kBeta = 1.25e9;        // 10 Gbit/s links
constexpr std::int64_t kBytes = 25LL * 1024 * 1024;  // one DDP default bucket

// The collective's time: the last rank's end (all start at 0). On a uniform platform every
// rank must leave at the same time; on a heterogeneous one the explicit ring lets the ranks
// far from the bottleneck finish their last steps earlier.
double simulated_allreduce_s(int world, AllreduceAlgorithm algorithm, const ReplayOptions& options,
                             std::int64_t bytes = kBytes) {
  const ReplayResult result = replay_isolated(communication_only_workload(world, bytes), options);
  const std::vector<double> durations = allreduce_durations_s(result);
  EXPECT_EQ(static_cast<int>(durations.size()), world);
  EXPECT_TRUE(result.failure.empty()) << result.failure;
  const auto [low, high] = std::minmax_element(durations.begin(), durations.end());
  if (options.platform.kind == PlatformKind::Star) {
    EXPECT_NEAR(*low, *high, 1e-9 + 1e-3 * *high) << to_string(algorithm);
  }
  return *high;
}

class AllreduceOnStar : public ::testing::TestWithParam<int> {};

TEST_P(AllreduceOnStar, RingMatchesAlphaBetaFormula) {
  const int world = GetParam();
  const double simulated =
      simulated_allreduce_s(world, AllreduceAlgorithm::Ring, star_options(AllreduceAlgorithm::Ring, kAlpha, kBeta));
  const double formula = 2.0 * (world - 1) * (kAlpha + static_cast<double>(kBytes) / (world * kBeta));
  EXPECT_NEAR(simulated, formula, 1e-3 * formula) << "W=" << world;
  EXPECT_DOUBLE_EQ(formula, ring_allreduce_s(world, kBytes, kAlpha, kBeta));
}

TEST_P(AllreduceOnStar, AggregatedRingMatchesExplicitRing) {
  const int world = GetParam();
  const double ring =
      simulated_allreduce_s(world, AllreduceAlgorithm::Ring, star_options(AllreduceAlgorithm::Ring, kAlpha, kBeta));
  const double aggregated = simulated_allreduce_s(
      world, AllreduceAlgorithm::RingAggregated, star_options(AllreduceAlgorithm::RingAggregated, kAlpha, kBeta));
  EXPECT_NEAR(aggregated, ring, 5e-3 * ring) << "W=" << world;
}

TEST_P(AllreduceOnStar, AnalyticSleepsTheFormula) {
  const int world = GetParam();
  const double analytic = simulated_allreduce_s(world, AllreduceAlgorithm::Analytic,
                                                star_options(AllreduceAlgorithm::Analytic, kAlpha, kBeta));
  EXPECT_NEAR(analytic, ring_allreduce_s(world, kBytes, kAlpha, kBeta), 2e-9);
}

TEST_P(AllreduceOnStar, TreeMatchesItsFormula) {
  const int world = GetParam();
  const double tree =
      simulated_allreduce_s(world, AllreduceAlgorithm::Tree, star_options(AllreduceAlgorithm::Tree, kAlpha, kBeta));
  const double formula = tree_allreduce_s(world, kBytes, kAlpha, kBeta);
  EXPECT_NEAR(tree, formula, 1e-2 * formula) << "W=" << world;
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, AllreduceOnStar, ::testing::Values(2, 4, 16));

TEST(AllreduceOnStar, SmallMessagesAreLatencyBound) {
  // 64 bytes: the latency term dominates; the ring pays it 2(W−1) times, the tree 2⌈log2 W⌉.
  const int world = 16;
  const double ring = simulated_allreduce_s(world, AllreduceAlgorithm::Ring,
                                            star_options(AllreduceAlgorithm::Ring, kAlpha, kBeta), 64);
  const double tree = simulated_allreduce_s(world, AllreduceAlgorithm::Tree,
                                            star_options(AllreduceAlgorithm::Tree, kAlpha, kBeta), 64);
  EXPECT_NEAR(ring, 30 * kAlpha, 0.01 * 30 * kAlpha);
  EXPECT_NEAR(tree, 8 * kAlpha, 0.01 * 8 * kAlpha);
}

// Two nodes of four ranks; the nodes' uplinks are 10× slower than the ranks' links. Only
// two ring edges cross nodes (one each way), so every ring step is paced by the uplink:
// t = 2(W−1)·(intra latency + inter latency + (S/W)/inter bandwidth).
ReplayOptions two_node_options(AllreduceAlgorithm algorithm) {
  ReplayOptions options = star_options(algorithm, kAlpha, kBeta);
  options.platform.kind = PlatformKind::TwoLevel;
  options.platform.gpus_per_node = 4;
  options.platform.intra_latency_s = 5e-6;
  options.platform.intra_bandwidth = 12.5e9;
  options.platform.inter_latency_s = 30e-6;
  options.platform.inter_bandwidth = 1.25e9;
  return options;
}

TEST(AllreduceOnTwoNodes, InterNodeLinkIsTheBottleneck) {
  const int world = 8;
  const ReplayOptions options = two_node_options(AllreduceAlgorithm::Ring);
  const double bottleneck = 2.0 * (world - 1) *
                            (options.platform.intra_latency_s + options.platform.inter_latency_s +
                             static_cast<double>(kBytes) / world / options.platform.inter_bandwidth);
  const double ring = simulated_allreduce_s(world, AllreduceAlgorithm::Ring, options);
  EXPECT_NEAR(ring, bottleneck, 1e-3 * bottleneck);
  const double aggregated =
      simulated_allreduce_s(world, AllreduceAlgorithm::RingAggregated, two_node_options(AllreduceAlgorithm::RingAggregated));
  EXPECT_NEAR(aggregated, bottleneck, 5e-3 * bottleneck);
  // Had the uplink been as fast as the ranks' links, the ring would be ~10× faster.
  EXPECT_GT(ring, 5 * ring_allreduce_s(world, kBytes, 35e-6, options.platform.intra_bandwidth));
}

TEST(AllreduceOnTwoNodes, TreeFlowsShareTheUplink) {
  // Every tree edge between the nodes carries S/2 each way, all at once through one uplink:
  // the payload takes (crossing edges)·(S/2)/inter bandwidth, plus 2⌈log2 W⌉ latencies.
  const int world = 8;
  const ReplayOptions options = two_node_options(AllreduceAlgorithm::Tree);
  int crossing = 0;
  const auto neighbours = double_binary_tree_neighbours(world);
  for (int rank = 0; rank < 4; ++rank) {
    for (int peer : neighbours[static_cast<std::size_t>(rank)]) crossing += peer >= 4 ? 1 : 0;
  }
  ASSERT_GT(crossing, 1);
  const double latency = options.platform.intra_latency_s + options.platform.inter_latency_s;
  const double expected = 2 * ceil_log2(world) * latency +
                          crossing * (static_cast<double>(kBytes) / 2) / options.platform.inter_bandwidth;
  const double tree = simulated_allreduce_s(world, AllreduceAlgorithm::Tree, options);
  EXPECT_NEAR(tree, expected, 1e-2 * expected) << crossing << " crossing edges";
}

TEST(Replay, OneRankNeedsNoNetwork) {
  const double single = simulated_allreduce_s(1, AllreduceAlgorithm::Ring, star_options(AllreduceAlgorithm::Ring, kAlpha, kBeta));
  EXPECT_EQ(single, 0.0);
}

}  // namespace
}  // namespace ddpsim::sim
