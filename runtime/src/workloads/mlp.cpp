// `--model mlp`: a stack of Linear+ReLU layers on synthetic data.
//
// The simplest model whose size is set directly: --depth hidden layers of --width x --width
// weights, so one knob gives a chosen number of buckets and gradient bytes per layer.
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include <algorithm>

#include "../synthetic_classification.hpp"
#include "../workload.hpp"

namespace ddpsim::runtime {
namespace {

constexpr std::int64_t kMlpClasses = 10;

class MlpWorkload final : public Workload {
 public:
  explicit MlpWorkload(const TrainOptions& o)
      : data_({o.width}, kMlpClasses, o.dataset_size, o.seed) {
    torch::manual_seed(o.seed);
    net_ = torch::nn::Sequential();
    for (std::int64_t layer = 0; layer < o.depth; ++layer) {
      net_->push_back(torch::nn::Linear(o.width, o.width));
      net_->push_back(torch::nn::ReLU());
    }
    net_->push_back(torch::nn::Linear(o.width, kMlpClasses));
  }

  std::shared_ptr<torch::nn::Module> module() override { return net_.ptr(); }
  std::int64_t dataset_size() const override { return data_.size(); }
  Batch batch(const std::vector<std::int64_t>& indices) override { return data_.batch(indices); }
  torch::Tensor loss(const Batch& batch) override {
    return torch::nn::functional::cross_entropy(net_->forward(batch.input), batch.target);
  }
  // The test split: the dataset_size / 6 samples after the training ones (Fashion-MNIST's
  // proportion, 10,000 per 60,000), drawn from the same distribution, never trained on.
  std::int64_t eval_dataset_size() const override {
    return std::max<std::int64_t>(1, data_.size() / 6);
  }
  Batch eval_batch(const std::vector<std::int64_t>& indices) override {
    std::vector<std::int64_t> shifted(indices);
    for (auto& i : shifted) i += data_.size();
    return data_.batch(shifted);
  }
  torch::Tensor logits(const torch::Tensor& input) override { return net_->forward(input); }

 private:
  SyntheticClassification data_;
  torch::nn::Sequential net_;
};

}  // namespace

std::unique_ptr<Workload> make_mlp_workload(const TrainOptions& options) {
  return std::make_unique<MlpWorkload>(options);
}

}  // namespace ddpsim::runtime
