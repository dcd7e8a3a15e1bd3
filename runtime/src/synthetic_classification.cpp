#include "synthetic_classification.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "ddpsim/trace/splitmix.hpp"

namespace ddpsim::runtime {
namespace {

std::uint64_t mix(std::uint64_t x) { return trace::splitmix64(x); }

constexpr std::uint64_t kPatternStream = 1;
constexpr std::uint64_t kSampleStream = 2;
// How far apart the classes are, relative to the unit noise.
constexpr double kSignal = 0.5;

}  // namespace

at::Generator sample_generator(std::uint64_t seed, std::uint64_t stream, std::int64_t index) {
  const std::uint64_t key = mix(seed ^ mix(stream ^ mix(static_cast<std::uint64_t>(index))));
  return at::detail::createCPUGenerator(key);
}

SyntheticClassification::SyntheticClassification(std::vector<std::int64_t> sample_shape,
                                                 std::int64_t classes, std::int64_t size,
                                                 std::uint64_t seed)
    : sample_shape_(std::move(sample_shape)), classes_(classes), size_(size), seed_(seed) {
  std::vector<std::int64_t> shape = {classes_};
  shape.insert(shape.end(), sample_shape_.begin(), sample_shape_.end());
  class_patterns_ =
      at::randn(shape, sample_generator(seed_, kPatternStream, 0), at::kFloat) * kSignal;
}

Batch SyntheticClassification::batch(const std::vector<std::int64_t>& indices) const {
  const auto n = static_cast<std::int64_t>(indices.size());
  std::vector<std::int64_t> shape = {n};
  shape.insert(shape.end(), sample_shape_.begin(), sample_shape_.end());
  at::Tensor input = at::empty(shape, at::kFloat);
  at::Tensor target = at::empty({n}, at::kLong);
  auto labels = target.accessor<std::int64_t, 1>();
  for (std::int64_t row = 0; row < n; ++row) {
    at::Generator gen = sample_generator(seed_, kSampleStream, indices[row]);
    const std::int64_t label = at::randint(classes_, {1}, gen, at::kLong).item<std::int64_t>();
    labels[row] = label;
    input[row].normal_(0.0, 1.0, gen).add_(class_patterns_[label]);
  }
  return {input, target};
}

}  // namespace ddpsim::runtime
