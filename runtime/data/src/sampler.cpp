#include "ddpsim/data/sampler.hpp"

#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace ddpsim::data {

namespace {

// Uniform in [0, bound) by rejection: drop draws from the incomplete top block of 2^64 so
// every residue is equally likely. Fixed here, unlike std::uniform_int_distribution.
std::uint64_t uniform_below(std::mt19937_64& generator, std::uint64_t bound) {
  const std::uint64_t threshold = (0 - bound) % bound;  // = 2^64 mod bound
  while (true) {
    const std::uint64_t draw = generator();
    if (draw >= threshold) return draw % bound;
  }
}

}  // namespace

std::vector<std::size_t> seeded_permutation(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 generator(seed);
  for (std::size_t i = n; i > 1; --i) {  // Fisher-Yates: position i-1 takes one of 0..i-1
    const std::size_t j = static_cast<std::size_t>(uniform_below(generator, i));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

DistributedSampler::DistributedSampler(std::size_t dataset_size, int world_size, int rank, bool shuffle,
                                       std::uint64_t seed, bool drop_last)
    : dataset_size_(dataset_size),
      world_size_(world_size),
      rank_(rank),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  if (world_size < 1) throw std::invalid_argument("world size " + std::to_string(world_size) + ": expected >= 1");
  if (rank < 0 || rank >= world_size) {
    throw std::invalid_argument("rank " + std::to_string(rank) + ": expected 0.." + std::to_string(world_size - 1));
  }
  const auto replicas = static_cast<std::size_t>(world_size);
  // drop_last: floor(N / W) each, the tail is never visited; otherwise ceil(N / W), padded.
  num_samples_ = drop_last ? dataset_size / replicas : (dataset_size + replicas - 1) / replicas;
}

std::vector<std::size_t> DistributedSampler::indices() const {
  std::vector<std::size_t> order;
  if (shuffle_) {
    order = seeded_permutation(dataset_size_, seed_ + epoch_);
  } else {
    order.resize(dataset_size_);
    std::iota(order.begin(), order.end(), std::size_t{0});
  }
  const std::size_t total = total_size();
  if (order.size() < total) {
    // Pad by repeating from the start; for tiny datasets (N < W) that may take several rounds.
    const std::size_t original = order.size();
    for (std::size_t i = 0; order.size() < total; ++i) order.push_back(order[i % original]);
  } else {
    order.resize(total);
  }
  std::vector<std::size_t> mine;
  mine.reserve(num_samples_);
  for (std::size_t i = static_cast<std::size_t>(rank_); i < total; i += static_cast<std::size_t>(world_size_)) {
    mine.push_back(order[i]);
  }
  return mine;
}

}  // namespace ddpsim::data
