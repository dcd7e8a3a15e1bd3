// A synthetic classification dataset that a model can actually learn.
//
// Sample i has a label drawn from (seed, i) and an input that is Gaussian noise plus a fixed
// per-class pattern, so the loss falls as training proceeds (a flat loss would hide bugs in
// gradient averaging) while no dataset needs to exist on disk.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "workload.hpp"

namespace ddpsim::runtime {

class SyntheticClassification {
 public:
  // `sample_shape` excludes the batch dimension, e.g. {3, 32, 32}.
  SyntheticClassification(std::vector<std::int64_t> sample_shape, std::int64_t classes,
                          std::int64_t size, std::uint64_t seed);

  std::int64_t size() const { return size_; }
  Batch batch(const std::vector<std::int64_t>& indices) const;

 private:
  std::vector<std::int64_t> sample_shape_;
  std::int64_t classes_;
  std::int64_t size_;
  std::uint64_t seed_;
  at::Tensor class_patterns_;  // [classes, sample_shape...]
};

}  // namespace ddpsim::runtime
