#pragma once
// Fashion-MNIST (Zalando, 28x28 grey images, 10 classes), as Debian's dataset-fashion-mnist
// package installs it: /usr/share/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ddpsim/data/idx.hpp"

namespace ddpsim::data {

enum class Split { Train, Test };

struct LabeledImages {
  std::size_t count = 0;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<std::uint8_t> pixels;  // count * rows * cols, image after image, row-major
  std::vector<std::uint8_t> labels;  // count, each in 0..9

  // Pixels of image i: rows*cols bytes starting here.
  const std::uint8_t* image(std::size_t i) const { return pixels.data() + i * rows * cols; }
};

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
inline constexpr int kFashionMnistClasses = 10;

// $DDPSIM_FASHION_MNIST_DIR if set, else kFashionMnistDir.
std::string default_fashion_mnist_dir();

// The two file paths of a split under `dir`: {images, labels}.
std::string fashion_mnist_images_path(const std::string& dir, Split split);
std::string fashion_mnist_labels_path(const std::string& dir, Split split);

// Loads a split and checks it: 3-D images, 1-D labels of the same count, labels below 10.
// A missing file gives a DataError naming it and the package that provides it
// ("apt-get install dataset-fashion-mnist").
LabeledImages load_fashion_mnist(const std::string& dir, Split split);

}  // namespace ddpsim::data
