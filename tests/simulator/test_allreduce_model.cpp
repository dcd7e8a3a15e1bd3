// Closed forms and the double binary tree's shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ddpsim/sim/allreduce.hpp"

namespace ddpsim::sim {
namespace {

TEST(AllreduceFormula, RingTerms) {
  // W = 4, S = 4 MB, α = 10 us, β = 1 GB/s: 6 steps of (10 us + 1 ms).
  EXPECT_NEAR(ring_allreduce_s(4, 4e6, 10e-6, 1e9), 6 * (10e-6 + 1e-3), 1e-12);
  EXPECT_EQ(ring_allreduce_s(1, 4e6, 10e-6, 1e9), 0.0);
  const FormulaShape shape = allreduce_formula_shape(AllreduceAlgorithm::RingAggregated, 8);
  EXPECT_DOUBLE_EQ(shape.latency_coefficient, 14);
  EXPECT_DOUBLE_EQ(shape.bandwidth_coefficient, 14.0 / 8);
}

TEST(AllreduceFormula, NamesRoundTrip) {
  for (auto algorithm : {AllreduceAlgorithm::Ring, AllreduceAlgorithm::RingAggregated,
                         AllreduceAlgorithm::Analytic, AllreduceAlgorithm::Tree, AllreduceAlgorithm::Auto}) {
    EXPECT_EQ(allreduce_algorithm_from_string(to_string(algorithm)), algorithm);
  }
  EXPECT_FALSE(allreduce_algorithm_from_string("butterfly").has_value());
}

TEST(AllreduceFormula, CeilLog2) {
  EXPECT_EQ(ceil_log2(1), 0);
  EXPECT_EQ(ceil_log2(2), 1);
  EXPECT_EQ(ceil_log2(3), 2);
  EXPECT_EQ(ceil_log2(16), 4);
  EXPECT_EQ(ceil_log2(17), 5);
}

// Follows parents from `rank` to the root; fails on a cycle.
int depth_of(const std::vector<int>& parents, int rank) {
  int depth = 0;
  for (int r = rank; parents[static_cast<std::size_t>(r)] >= 0; r = parents[static_cast<std::size_t>(r)]) {
    if (++depth > static_cast<int>(parents.size())) return -1;
  }
  return depth;
}

class DoubleBinaryTree : public ::testing::TestWithParam<int> {};

TEST_P(DoubleBinaryTree, IsABalancedBinaryTree) {
  const int world = GetParam();
  const std::vector<int> parents = binary_tree_parents(world);
  ASSERT_EQ(static_cast<int>(parents.size()), world);
  EXPECT_EQ(parents[0], -1);
  std::vector<int> children(static_cast<std::size_t>(world), 0);
  for (int r = 1; r < world; ++r) {
    const int parent = parents[static_cast<std::size_t>(r)];
    ASSERT_GE(parent, 0) << "rank " << r;
    ASSERT_LT(parent, world);
    ++children[static_cast<std::size_t>(parent)];
    const int depth = depth_of(parents, r);
    ASSERT_GE(depth, 1) << "rank " << r << " is not connected to the root";
    EXPECT_LE(depth, ceil_log2(world)) << "rank " << r;
  }
  for (int r = 0; r < world; ++r) EXPECT_LE(children[static_cast<std::size_t>(r)], 2);
}

TEST_P(DoubleBinaryTree, MostRanksAreLeavesInOneTreeAndInnerInTheOther) {
  const int world = GetParam();
  const auto neighbours = double_binary_tree_neighbours(world);
  int total_degree = 0;
  for (const auto& peers : neighbours) {
    EXPECT_GE(peers.size(), 1u);
    EXPECT_LE(peers.size(), 4u);  // parent + 2 children in one tree, parent in the other
    total_degree += static_cast<int>(peers.size());
  }
  // Two trees of W−1 edges, each edge counted at both ends.
  EXPECT_EQ(total_degree, 4 * (world - 1));
  EXPECT_EQ(double_binary_tree_max_degree(world), std::min(world, 4));
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, DoubleBinaryTree, ::testing::Values(2, 3, 4, 5, 8, 16, 33, 1024));

TEST(AllreduceFormula, TreeTerms) {
  // W = 16: 2·4 latencies; the busiest rank moves 4 half-buffers each way.
  EXPECT_NEAR(tree_allreduce_s(16, 1e6, 10e-6, 1e9), 8 * 10e-6 + 2 * 1e-3, 1e-12);
  EXPECT_NEAR(tree_allreduce_s(2, 1e6, 10e-6, 1e9), 2 * 10e-6 + 1e-3, 1e-12);
}

}  // namespace
}  // namespace ddpsim::sim
