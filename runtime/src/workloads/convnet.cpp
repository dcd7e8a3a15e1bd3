// `--model convnet`: a small CNN on real data, Fashion-MNIST's 60,000 training images (and its
// 10,000 t10k test images for --eval-every).
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

#include <tuple>
#include <utility>

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

data::LabeledImages load_split(const std::string& dir_option, data::Split split) {
  const std::string dir = dir_option.empty() ? data::default_fashion_mnist_dir() : dir_option;
  try {
    return data::load_fashion_mnist(dir, split);
  } catch (const data::DataError& error) {
    throw UsageError(std::string("--model convnet needs Fashion-MNIST: ") + error.what());
  }
}

// Images as bytes [count, 1, rows, cols] and labels as int64 [count].
std::pair<torch::Tensor, torch::Tensor> as_tensors(const data::LabeledImages& set) {
  const auto count = static_cast<std::int64_t>(set.count);
  torch::Tensor images = torch::from_blob(const_cast<std::uint8_t*>(set.pixels.data()),
                                          {count, 1, static_cast<std::int64_t>(set.rows),
                                           static_cast<std::int64_t>(set.cols)},
                                          torch::kUInt8)
                             .clone();
  torch::Tensor labels =
      torch::from_blob(const_cast<std::uint8_t*>(set.labels.data()), {count}, torch::kUInt8)
          .to(torch::kLong);
  return {images, labels};
}

// Normalised float pixels and labels of the samples at `indices`.
Batch select(const torch::Tensor& images, const torch::Tensor& labels,
             const std::vector<std::int64_t>& indices) {
  const auto index = torch::tensor(indices, torch::kLong);
  auto pixels = images.index_select(0, index).to(torch::kFloat).div_(255.0);
  return {pixels.sub_(kPixelMean).div_(kPixelStd), labels.index_select(0, index)};
}

class ConvNetWorkload final : public Workload {
 public:
  explicit ConvNetWorkload(const TrainOptions& o) {
    // Kept as bytes (47 MB); batches are converted to float when drawn.
    std::tie(images_, labels_) = as_tensors(load_split(o.data_dir, data::Split::Train));
    // The t10k files, only when evaluating.
    if (o.eval_every > 0) {
      std::tie(test_images_, test_labels_) = as_tensors(load_split(o.data_dir, data::Split::Test));
    }
    torch::manual_seed(o.seed);
    net_ = make_convnet();
  }

  std::shared_ptr<torch::nn::Module> module() override { return net_.ptr(); }
  std::int64_t dataset_size() const override { return images_.size(0); }

  Batch batch(const std::vector<std::int64_t>& indices) override {
    return select(images_, labels_, indices);
  }
  std::int64_t eval_dataset_size() const override {
    return test_images_.defined() ? test_images_.size(0) : 0;
  }
  Batch eval_batch(const std::vector<std::int64_t>& indices) override {
    return select(test_images_, test_labels_, indices);
  }
  torch::Tensor logits(const torch::Tensor& input) override { return net_->forward(input); }

  torch::Tensor loss(const Batch& batch) override {
    return torch::nn::functional::cross_entropy(net_->forward(batch.input), batch.target);
  }

 private:
  torch::Tensor images_;
  torch::Tensor labels_;
  torch::Tensor test_images_;  // undefined unless --eval-every
  torch::Tensor test_labels_;
  torch::nn::Sequential net_;
};

}  // namespace

std::unique_ptr<Workload> make_convnet_workload(const TrainOptions& options) {
  return std::make_unique<ConvNetWorkload>(options);
}

}  // namespace ddpsim::runtime
