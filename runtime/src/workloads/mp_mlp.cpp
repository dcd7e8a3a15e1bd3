#include "mp_mlp.hpp"

#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include "../synthetic_classification.hpp"

namespace ddpsim::runtime {
namespace {

constexpr std::int64_t kMpMlpClasses = 10;

// The two stages as one module, so DDP sees every parameter of both devices.
struct TwoStageMlpImpl : torch::nn::Module {
  TwoStageMlpImpl(const TrainOptions& o, torch::Device first, torch::Device second)
      : first_device(first), second_device(second) {
    // The same layers as `--model mlp`, the first half on one device, the rest on the other.
    const std::int64_t first_layers = (o.depth + 1) / 2;
    for (std::int64_t layer = 0; layer < o.depth; ++layer) {
      auto& stage = layer < first_layers ? stage0 : stage1;
      stage->push_back(torch::nn::Linear(o.width, o.width));
      stage->push_back(torch::nn::ReLU());
    }
    stage1->push_back(torch::nn::Linear(o.width, kMpMlpClasses));
    register_module("stage0", stage0);
    register_module("stage1", stage1);
    stage0->to(first_device);
    stage1->to(second_device);
  }

  torch::Tensor forward(const torch::Tensor& input) {
    const torch::Tensor hidden = stage0->forward(input.to(first_device));
    return stage1->forward(hidden.to(second_device));
  }

  torch::nn::Sequential stage0;
  torch::nn::Sequential stage1;
  torch::Device first_device;
  torch::Device second_device;
};
TORCH_MODULE(TwoStageMlp);

class MpMlpWorkload final : public Workload {
 public:
  MpMlpWorkload(const TrainOptions& o, torch::Device first, torch::Device second)
      : data_({o.width}, kMpMlpClasses, o.dataset_size, o.seed) {
    torch::manual_seed(o.seed);
    net_ = TwoStageMlp(o, first, second);
  }

  std::shared_ptr<torch::nn::Module> module() override { return net_.ptr(); }
  std::int64_t dataset_size() const override { return data_.size(); }
  Batch batch(const std::vector<std::int64_t>& indices) override { return data_.batch(indices); }
  torch::Tensor loss(const Batch& batch) override {
    const torch::Tensor logits = net_->forward(batch.input);
    return torch::nn::functional::cross_entropy(logits, batch.target.to(logits.device()));
  }

 private:
  SyntheticClassification data_;
  TwoStageMlp net_{nullptr};
};

}  // namespace

std::unique_ptr<Workload> make_mp_mlp_workload(const TrainOptions& options, int local_rank) {
  torch::Device first(torch::kCPU);
  torch::Device second(torch::kCPU);
  const int needed = 2 * local_rank + 2;
  if (torch::cuda::is_available() && static_cast<int>(torch::cuda::device_count()) >= needed) {
    first = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(2 * local_rank));
    second = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(2 * local_rank + 1));
  }
  return std::make_unique<MpMlpWorkload>(options, first, second);
}

}  // namespace ddpsim::runtime
