// `--model convnet`: a small CNN on real data, Fashion-MNIST's 60,000 training images.
//
// Two 3x3 convolutions (32 and 64 channels, each followed by ReLU and 2x2 max-pooling) and two
// fully connected layers (3136 -> 128 -> 10): 0.42 M parameters, most of them in the first
// fully connected layer, so gradients arrive in a small-large-small pattern.
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>
#include <torch/utils.h>

#include "../workload.hpp"
#include "ddpsim/data/fashion_mnist.hpp"

namespace ddpsim::runtime {
namespace {

// Fashion-MNIST's training-set pixel mean and standard deviation (on the 0..1 scale).
constexpr double kPixelMean = 0.2860;
constexpr double kPixelStd = 0.3530;

torch::nn::Sequential make_convnet() {
  using namespace torch::nn;
  return Sequential(Conv2d(Conv2dOptions(1, 32, 3).padding(1)), ReLU(), MaxPool2d(2),
                    Conv2d(Conv2dOptions(32, 64, 3).padding(1)), ReLU(), MaxPool2d(2),
                    Flatten(), Linear(64 * 7 * 7, 128), ReLU(), Linear(128, data::kFashionMnistClasses));
}

data::LabeledImages load_training_set(const std::string& dir_option) {
  const std::string dir = dir_option.empty() ? data::default_fashion_mnist_dir() : dir_option;
  try {
    return data::load_fashion_mnist(dir, data::Split::Train);
  } catch (const data::DataError& error) {
    throw UsageError(std::string("--model convnet needs Fashion-MNIST: ") + error.what());
  }
}

class ConvNetWorkload final : public Workload {
 public:
  explicit ConvNetWorkload(const TrainOptions& o) {
    const data::LabeledImages set = load_training_set(o.data_dir);
    const auto count = static_cast<std::int64_t>(set.count);
    // Kept as bytes (47 MB); batches are converted to float when drawn.
    images_ = torch::from_blob(const_cast<std::uint8_t*>(set.pixels.data()),
                               {count, 1, static_cast<std::int64_t>(set.rows),
                                static_cast<std::int64_t>(set.cols)},
                               torch::kUInt8)
                  .clone();
    labels_ = torch::from_blob(const_cast<std::uint8_t*>(set.labels.data()), {count},
                               torch::kUInt8)
                  .to(torch::kLong);
    torch::manual_seed(o.seed);
    net_ = make_convnet();
  }

  std::shared_ptr<torch::nn::Module> module() override { return net_.ptr(); }
  std::int64_t dataset_size() const override { return images_.size(0); }

  Batch batch(const std::vector<std::int64_t>& indices) override {
    const auto index = torch::tensor(indices, torch::kLong);
    auto pixels = images_.index_select(0, index).to(torch::kFloat).div_(255.0);
    return {pixels.sub_(kPixelMean).div_(kPixelStd), labels_.index_select(0, index)};
  }

  torch::Tensor loss(const Batch& batch) override {
    return torch::nn::functional::cross_entropy(net_->forward(batch.input), batch.target);
  }

 private:
  torch::Tensor images_;
  torch::Tensor labels_;
  torch::nn::Sequential net_;
};

}  // namespace

std::unique_ptr<Workload> make_convnet_workload(const TrainOptions& options) {
  return std::make_unique<ConvNetWorkload>(options);
}

}  // namespace ddpsim::runtime
