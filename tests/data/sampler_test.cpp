// DistributedSampler: PyTorch's sharding semantics, checked on whole epochs of every rank.
#include "ddpsim/data/sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace {

using ddpsim::data::DistributedSampler;

struct Case {
  std::size_t dataset_size;
  int world_size;
  bool drop_last;
};

// Every rank's indices for one epoch.
std::vector<std::vector<std::size_t>> shards(const Case& c, bool shuffle, std::uint64_t seed, std::uint64_t epoch) {
  std::vector<std::vector<std::size_t>> result;
  for (int rank = 0; rank < c.world_size; ++rank) {
    DistributedSampler sampler(c.dataset_size, c.world_size, rank, shuffle, seed, c.drop_last);
    sampler.set_epoch(epoch);
    result.push_back(sampler.indices());
  }
  return result;
}

class SamplerShards : public ::testing::TestWithParam<Case> {};

TEST_P(SamplerShards, AreEqualSizedAndCoverTheDatasetAsPyTorchDoes) {
  const Case c = GetParam();
  const std::size_t w = static_cast<std::size_t>(c.world_size);
  const std::size_t per_rank = c.drop_last ? c.dataset_size / w : (c.dataset_size + w - 1) / w;
  for (const bool shuffle : {false, true}) {
    const auto all = shards(c, shuffle, 42, 3);
    std::map<std::size_t, int> visits;
    for (const auto& shard : all) {
      EXPECT_EQ(shard.size(), per_rank);
      for (const std::size_t index : shard) {
        ASSERT_LT(index, c.dataset_size);
        ++visits[index];
      }
    }
    const std::size_t visited = per_rank * w;
    if (c.drop_last) {
      // Disjoint; the tail of the permutation (N mod W indices) is dropped.
      EXPECT_EQ(visits.size(), visited);
      for (const auto& [index, n] : visits) EXPECT_EQ(n, 1) << "index " << index;
    } else {
      // Every index at least once; the padding repeats exactly total - N of them.
      EXPECT_EQ(visits.size(), c.dataset_size);
      std::size_t repeats = 0;
      for (const auto& [index, n] : visits) repeats += static_cast<std::size_t>(n - 1);
      EXPECT_EQ(repeats, visited - c.dataset_size);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, SamplerShards,
                         ::testing::Values(Case{12, 4, false},  // divides evenly: no padding
                                           Case{12, 4, true}, Case{10, 4, false},  // padded by 2
                                           Case{10, 4, true},                      // 2 dropped
                                           Case{3, 8, false},  // fewer samples than ranks: padded several rounds
                                           Case{3, 8, true}, Case{1, 1, false}, Case{0, 2, false},
                                           Case{60000, 3, false}, Case{10007, 16, true}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           const Case& c = info.param;
                           return "N" + std::to_string(c.dataset_size) + "_W" + std::to_string(c.world_size) +
                                  (c.drop_last ? "_DropLast" : "_Padded");
                         });

TEST(DistributedSampler, WithoutShuffleItIsPyTorchsInterleaving) {
  // PyTorch: indices = [0..9] + [0, 1] (padding), rank r takes r::4.
  const auto all = shards({10, 4, false}, false, 0, 0);
  EXPECT_EQ(all[0], (std::vector<std::size_t>{0, 4, 8}));
  EXPECT_EQ(all[1], (std::vector<std::size_t>{1, 5, 9}));
  EXPECT_EQ(all[2], (std::vector<std::size_t>{2, 6, 0}));
  EXPECT_EQ(all[3], (std::vector<std::size_t>{3, 7, 1}));
  const auto dropped = shards({10, 4, true}, false, 0, 0);
  EXPECT_EQ(dropped[3], (std::vector<std::size_t>{3, 7}));
}

TEST(DistributedSampler, RanksInterleaveOneSharedPermutation) {
  // Rebuild the global order from the shards: it must be the seed+epoch permutation itself.
  const Case c{101, 4, false};
  const auto all = shards(c, true, 7, 5);
  const std::vector<std::size_t> permutation = ddpsim::data::seeded_permutation(c.dataset_size, 7 + 5);
  for (std::size_t position = 0; position < 4 * all[0].size(); ++position) {
    const std::size_t expected = permutation[position % c.dataset_size];
    EXPECT_EQ(all[position % 4][position / 4], expected) << "position " << position;
  }
}

TEST(DistributedSampler, SameEpochSameOrderDifferentEpochDifferentOrder) {
  DistributedSampler sampler(1000, 2, 1, true, 123);
  sampler.set_epoch(4);
  const auto first = sampler.indices();
  EXPECT_EQ(DistributedSampler(1000, 2, 1, true, 123).indices(), shards({1000, 2, false}, true, 123, 0)[1]);
  sampler.set_epoch(5);
  const auto next_epoch = sampler.indices();
  sampler.set_epoch(4);
  EXPECT_EQ(sampler.indices(), first);
  EXPECT_NE(next_epoch, first);
  // Another seed gives another order too, and the order is shuffled at all.
  EXPECT_NE(DistributedSampler(1000, 2, 1, true, 124).indices(), DistributedSampler(1000, 2, 1, true, 123).indices());
  EXPECT_NE(first, DistributedSampler(1000, 2, 1, false, 123).indices());
}

TEST(DistributedSampler, PermutationIsAPermutationAndFixedAcrossPlatforms) {
  const auto order = ddpsim::data::seeded_permutation(50, 2024);
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> identity(50);
  std::iota(identity.begin(), identity.end(), std::size_t{0});
  EXPECT_EQ(sorted, identity);
  // Pinned: every machine of a job (and every future build) must draw this exact order.
  // Regenerate only on a deliberate change of the shuffle, which invalidates old experiments.
  EXPECT_EQ(ddpsim::data::seeded_permutation(10, 0), (std::vector<std::size_t>{7, 2, 0, 8, 3, 9, 6, 1, 5, 4}));
}

TEST(DistributedSampler, ShuffleIsRoughlyUniform) {
  // Where does element 0 land over many seeds? Each of 4 positions about 1/4 of the time.
  std::vector<int> landed(4, 0);
  for (std::uint64_t seed = 0; seed < 4000; ++seed) {
    const auto order = ddpsim::data::seeded_permutation(4, seed);
    ++landed[static_cast<std::size_t>(std::find(order.begin(), order.end(), 0u) - order.begin())];
  }
  for (const int n : landed) EXPECT_NEAR(n, 1000, 150);
}

TEST(DistributedSampler, RejectsBadRanks) {
  EXPECT_THROW(DistributedSampler(10, 0, 0), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(10, 2, 2), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(10, 2, -1), std::invalid_argument);
}

}  // namespace
