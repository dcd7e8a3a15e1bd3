// `--model resnet18`: ResNet-18 (He et al. 2016) in its CIFAR form on synthetic 3x32x32 images.
//
// The CIFAR variant, as in most data-parallel studies at this image size: a 3x3 stem without
// max-pooling, then four stages of two BasicBlocks (64, 128, 256, 512 channels; stride 2 from the
// second stage), global average pooling and a 10-way classifier. 11.2 M parameters in 62 tensors
// of very different sizes, which is what makes its bucketing interesting; its BatchNorm buffers
// exercise DDP's buffer broadcast.
#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include "../synthetic_classification.hpp"
#include "../workload.hpp"

namespace ddpsim::runtime {
namespace {

constexpr std::int64_t kResNetClasses = 10;

torch::nn::Conv2d conv3x3(std::int64_t in, std::int64_t out, std::int64_t stride) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

struct BasicBlockImpl : torch::nn::Module {
  BasicBlockImpl(std::int64_t in, std::int64_t out, std::int64_t stride)
      : conv1(register_module("conv1", conv3x3(in, out, stride))),
        bn1(register_module("bn1", torch::nn::BatchNorm2d(out))),
        conv2(register_module("conv2", conv3x3(out, out, 1))),
        bn2(register_module("bn2", torch::nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      // A 1x1 projection when the shortcut changes shape (option B of the paper).
      shortcut = register_module(
          "shortcut",
          torch::nn::Sequential(
              torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
              torch::nn::BatchNorm2d(out)));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(bn1(conv1(x)));
    y = bn2(conv2(y));
    return torch::relu(y + (shortcut ? shortcut->forward(x) : x));
  }

  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
  torch::nn::Sequential shortcut{nullptr};
};
TORCH_MODULE(BasicBlock);

struct ResNet18Impl : torch::nn::Module {
  ResNet18Impl()
      : stem(register_module("conv1", conv3x3(3, 64, 1))),
        stem_bn(register_module("bn1", torch::nn::BatchNorm2d(64))) {
    std::int64_t in = 64;
    const std::int64_t widths[] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage) {
      torch::nn::Sequential blocks;
      const std::int64_t out = widths[stage];
      blocks->push_back(BasicBlock(in, out, stage == 0 ? 1 : 2));
      blocks->push_back(BasicBlock(out, out, 1));
      stages.push_back(register_module("layer" + std::to_string(stage + 1), blocks));
      in = out;
    }
    fc = register_module("fc", torch::nn::Linear(512, kResNetClasses));
  }

  torch::Tensor forward(const torch::Tensor& images) {
    torch::Tensor x = torch::relu(stem_bn(stem(images)));
    for (auto& stage : stages) x = stage->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc(x);
  }

  torch::nn::Conv2d stem;
  torch::nn::BatchNorm2d stem_bn;
  std::vector<torch::nn::Sequential> stages;
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet18);

class ResNet18Workload final : public Workload {
 public:
  explicit ResNet18Workload(const TrainOptions& o)
      : data_({3, 32, 32}, kResNetClasses, o.dataset_size, o.seed) {
    torch::manual_seed(o.seed);
    net_ = ResNet18();
  }

  std::shared_ptr<torch::nn::Module> module() override { return net_.ptr(); }
  std::int64_t dataset_size() const override { return data_.size(); }
  Batch batch(const std::vector<std::int64_t>& indices) override { return data_.batch(indices); }
  torch::Tensor loss(const Batch& batch) override {
    return torch::nn::functional::cross_entropy(net_->forward(batch.input), batch.target);
  }

 private:
  SyntheticClassification data_;
  ResNet18 net_{nullptr};
};

}  // namespace

std::unique_ptr<Workload> make_resnet18_workload(const TrainOptions& options) {
  return std::make_unique<ResNet18Workload>(options);
}

}  // namespace ddpsim::runtime
