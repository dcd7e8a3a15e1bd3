#pragma once
// Which dataset indices each rank visits in an epoch, with the semantics of PyTorch's
// torch.utils.data.DistributedSampler:
//   - every rank draws the same permutation of 0..N-1, seeded with seed + epoch (so call
//     set_epoch each epoch, or every epoch repeats the same order);
//   - the index list is padded to a multiple of world_size by repeating it from the start
//     (drop_last = false), or truncated to one (drop_last = true);
//   - rank r takes positions r, r + W, r + 2W, ...
// So the shards of one epoch are disjoint without padding, cover the whole dataset, and every
// rank gets the same number of samples (needed: DDP ranks must run the same iteration count).
//
// The permutation is our own (std::mt19937_64, whose output the standard fixes, and a
// Fisher-Yates shuffle with unbiased bounded draws) because std::shuffle and
// std::uniform_int_distribution differ between standard libraries: the order must be the same
// on every machine of a job. It is not bit-identical to PyTorch's (torch.randperm).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddpsim::data {

class DistributedSampler {
 public:
  // Throws std::invalid_argument for world_size < 1 or rank outside 0..world_size-1.
  DistributedSampler(std::size_t dataset_size, int world_size, int rank, bool shuffle = true,
                     std::uint64_t seed = 0, bool drop_last = false);

  void set_epoch(std::uint64_t epoch) { epoch_ = epoch; }
  std::uint64_t epoch() const { return epoch_; }

  // This rank's indices for the current epoch, num_samples() of them.
  std::vector<std::size_t> indices() const;

  std::size_t num_samples() const { return num_samples_; }                      // per rank
  std::size_t total_size() const { return num_samples_ * static_cast<std::size_t>(world_size_); }

 private:
  std::size_t dataset_size_;
  int world_size_;
  int rank_;
  bool shuffle_;
  std::uint64_t seed_;
  bool drop_last_;
  std::uint64_t epoch_ = 0;
  std::size_t num_samples_;
};

// The permutation of 0..n-1 every rank draws for `seed` (deterministic across platforms).
std::vector<std::size_t> seeded_permutation(std::size_t n, std::uint64_t seed);

}  // namespace ddpsim::data
