// All-reduce algorithms in SimGrid against their closed forms, on uncontended and
// bottlenecked platforms. Every replay runs in a forked child (one SimGrid engine each).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/trace/skew.hpp"
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

// The three ways of timing an aggregated collective's network phase (network_phase.hpp)
// against each other. Any `--cfg network/...` leaves the phase to SimGrid's flows, even one
// that repeats the default model.
ReplayOptions with_simgrid_flows(ReplayOptions options) {
  options.simgrid_config.push_back("network/model:CM02");
  return options;
}

TEST(NetworkPhase, ExactRingMatchesSimGridFlowsOnTwoNodes) {
  // No link carries two ring flows: the closed form is what SimGrid's flows give.
  const int world = 8;
  const ReplayOptions exact = two_node_options(AllreduceAlgorithm::RingAggregated);
  const double closed_form = simulated_allreduce_s(world, AllreduceAlgorithm::RingAggregated, exact);
  const double flows = simulated_allreduce_s(world, AllreduceAlgorithm::RingAggregated, with_simgrid_flows(exact));
  EXPECT_NEAR(closed_form, flows, 1e-9 * flows);
}

TEST(NetworkPhase, BottleneckBoundIsWithinOnePercentOfSimGridFlowsForTheTree) {
  // Tree flows share links. The bound (max_simulated_flows = 0) may only overstate.
  ReplayOptions star = star_options(AllreduceAlgorithm::Tree, kAlpha, kBeta);
  ReplayOptions nodes = two_node_options(AllreduceAlgorithm::Tree);
  nodes.platform.gpus_per_node = 8;
  for (auto [world, options] : {std::pair{16, star}, std::pair{64, nodes}}) {
    const double flows = simulated_allreduce_s(world, AllreduceAlgorithm::Tree, options);
    options.max_simulated_flows = 0;
    const double bound = simulated_allreduce_s(world, AllreduceAlgorithm::Tree, options);
    EXPECT_GE(bound, flows * (1 - 1e-9)) << "W=" << world;
    EXPECT_LE(bound, flows * 1.01) << "W=" << world;
  }
}

// 65,536 ranks replaying a 2-rank workload on the star: 2 classes of identical ranks, every
// rank's flow on the platform, the phase timed once per size (exact for the ring, the
// bottleneck bound for the tree, whose busiest links carry 4 flows of S/2).
TEST(ReplayAtScale, SixtyFiveThousandRanksFollowTheClosedFormsOnTheStar) {
  const int world = 65536;
  for (AllreduceAlgorithm algorithm : {AllreduceAlgorithm::RingAggregated, AllreduceAlgorithm::Tree}) {
    ReplayOptions options = star_options(algorithm, kAlpha, kBeta);
    options.world_size = world;
    const ReplayResult result = replay_isolated(communication_only_workload(2, kBytes), options);
    ASSERT_TRUE(result.failure.empty()) << result.failure;
    const std::vector<double> durations = allreduce_durations_s(result);
    ASSERT_EQ(static_cast<int>(durations.size()), world);
    const double half = std::llround(static_cast<double>(kBytes) / 2);
    const double expected = algorithm == AllreduceAlgorithm::Tree
                                ? 2 * ceil_log2(world) * kAlpha + 4 * half / kBeta
                                : testing::ring_allreduce_s(world, kBytes, kAlpha, kBeta);
    for (int rank : {0, 1, 2, 4097, world - 1}) {
      EXPECT_NEAR(durations[static_cast<std::size_t>(rank)], expected, 3e-9) << to_string(algorithm) << " rank " << rank;
    }
  }
}

// 4,096 ranks, eight per node, uplinks 10x slower. The ring is paced by them (exact: one
// ring flow per link); the tree by the uplink that the most tree edges cross (bound).
TEST(ReplayAtScale, FourThousandRanksFollowTheRingOnTwoLevel) {
  const int world = 4096;
  ReplayOptions options = two_node_options(AllreduceAlgorithm::RingAggregated);
  options.platform.gpus_per_node = 8;
  options.world_size = world;
  const ReplayResult result = replay_isolated(communication_only_workload(2, kBytes), options);
  ASSERT_TRUE(result.failure.empty()) << result.failure;
  const std::vector<double> durations = allreduce_durations_s(result);
  ASSERT_EQ(static_cast<int>(durations.size()), world);
  const double expected = testing::ring_allreduce_s(
      world, kBytes, options.platform.intra_latency_s + options.platform.inter_latency_s, options.platform.inter_bandwidth);
  for (int rank : {0, 1, 2, 2049, world - 1}) {
    EXPECT_NEAR(durations[static_cast<std::size_t>(rank)], expected, 3e-9) << "rank " << rank;
  }
  EXPECT_EQ(result.messages, world);
}

TEST(ReplayAtScale, FourThousandRanksOfTheTreeArePacedByTheBusiestUplink) {
  const int world = 4096;
  const int per_node = 8;
  ReplayOptions options = two_node_options(AllreduceAlgorithm::Tree);
  options.platform.gpus_per_node = per_node;
  options.world_size = world;
  // The busiest uplink direction: tree edges leaving (or entering) one node, S/2 each.
  std::vector<int> leaving(world / per_node, 0);
  std::vector<int> entering(world / per_node, 0);
  const auto neighbours = double_binary_tree_neighbours(world);
  for (int rank = 0; rank < world; ++rank) {
    for (int peer : neighbours[static_cast<std::size_t>(rank)]) {
      if (peer / per_node == rank / per_node) continue;
      ++leaving[static_cast<std::size_t>(rank / per_node)];
      ++entering[static_cast<std::size_t>(peer / per_node)];
    }
  }
  const int busiest = std::max(*std::max_element(leaving.begin(), leaving.end()),
                               *std::max_element(entering.begin(), entering.end()));
  const double step_latency = options.platform.intra_latency_s + options.platform.inter_latency_s;
  const double half = std::llround(static_cast<double>(kBytes) / 2);
  const double expected = 2 * ceil_log2(world) * step_latency + busiest * half / options.platform.inter_bandwidth;
  const ReplayResult result = replay_isolated(communication_only_workload(2, kBytes), options);
  ASSERT_TRUE(result.failure.empty()) << result.failure;
  const std::vector<double> durations = allreduce_durations_s(result);
  ASSERT_EQ(static_cast<int>(durations.size()), world);
  EXPECT_NEAR(durations.front(), expected, 3e-9) << busiest << " tree edges through one uplink";
  EXPECT_NEAR(durations.back(), expected, 3e-9);
}

TEST(ReplayAtScale, ManyDistinctRanksRunWithoutStackGuards) {
  // A random stall per rank makes every rank its own class: 2 actors each, more than the
  // kernel's 65,530 mappings allow with a guard page per stack.
#if defined(__SANITIZE_ADDRESS__)
  // Under ASan the actors are threads (replay.cpp), which have no SimGrid stacks or guard
  // pages to test, and 80,000 of them exceed the thread limit.
  GTEST_SKIP() << "SimGrid's stack guards are not used under ASan (thread contexts)";
#endif
  const int world = 40000;
  ReplayOptions options = star_options(AllreduceAlgorithm::RingAggregated, kAlpha, kBeta);
  options.world_size = world;
  options.skew.distributions.push_back(trace::parse_delay_distribution("all=exp:1"));
  const ReplayResult result = replay_isolated(communication_only_workload(2, kBytes), options);
  ASSERT_TRUE(result.failure.empty()) << result.failure;
  ASSERT_EQ(static_cast<int>(result.events.size()), world);
  // Every rank leaves the all-reduce together, after the last one's stall.
  std::int64_t end = -1;
  for (const auto& events : result.events) {
    for (const auto& event : events) {
      if (event.type != trace::EventType::AllreduceEnd) continue;
      if (end < 0) end = event.t_ns;
      EXPECT_EQ(event.t_ns, end);
    }
  }
}

TEST(Replay, OneRankNeedsNoNetwork) {
  const double single = simulated_allreduce_s(1, AllreduceAlgorithm::Ring, star_options(AllreduceAlgorithm::Ring, kAlpha, kBeta));
  EXPECT_EQ(single, 0.0);
}

}  // namespace
}  // namespace ddpsim::sim
