// A training workload: a model, the data it learns from, and its loss.
//
// Data is addressed by sample index so that the DistributedSampler decides who sees what: a
// workload turns a list of indices into a batch. Synthetic workloads derive sample i from
// (seed, i) alone, so any rank can build any sample without a shared dataset file, and W ranks
// with batch b see exactly the samples that 1 rank with batch W*b sees.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ddpsim/runtime/train_options.hpp"

namespace ddpsim::runtime {

struct Batch {
  torch::Tensor input;
  torch::Tensor target;
};

class Workload {
 public:
  virtual ~Workload() = default;

  virtual std::shared_ptr<torch::nn::Module> module() = 0;
  // Samples in the dataset (what the sampler shards).
  virtual std::int64_t dataset_size() const = 0;
  // The samples at `indices`, on the CPU.
  virtual Batch batch(const std::vector<std::int64_t>& indices) = 0;
  // Forward pass and mean loss over the batch.
  virtual torch::Tensor loss(const Batch& batch) = 0;

  // The test split, for evaluation (--eval-every): how many samples (0: the workload has none),
  // the samples at `indices` (0-based within the split, on the CPU), and the model's logits.
  virtual std::int64_t eval_dataset_size() const { return 0; }
  virtual Batch eval_batch(const std::vector<std::int64_t>& indices);
  virtual torch::Tensor logits(const torch::Tensor& input);
};

// Each builds its model with torch's global RNG seeded from options.seed (rank 0's weights are
// broadcast anyway). Throws UsageError when the data cannot be had (convnet without dataset).
std::unique_ptr<Workload> make_mlp_workload(const TrainOptions& options);
std::unique_ptr<Workload> make_convnet_workload(const TrainOptions& options);
std::unique_ptr<Workload> make_resnet18_workload(const TrainOptions& options);
std::unique_ptr<Workload> make_transformer_workload(const TrainOptions& options);

// A generator whose stream depends only on (seed, stream, index): per-sample synthetic data.
at::Generator sample_generator(std::uint64_t seed, std::uint64_t stream, std::int64_t index);

}  // namespace ddpsim::runtime
