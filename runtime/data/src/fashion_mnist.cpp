#include "ddpsim/data/fashion_mnist.hpp"

#include <sys/stat.h>

#include <cstdlib>

namespace ddpsim::data {

namespace {

std::string split_prefix(Split split) { return split == Split::Train ? "train" : "t10k"; }

void require_file(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    throw DataError(path + ": no such file (Fashion-MNIST: apt-get install dataset-fashion-mnist, or set "
                           "DDPSIM_FASHION_MNIST_DIR)");
  }
}

}  // namespace

std::string default_fashion_mnist_dir() {
  const char* dir = std::getenv("DDPSIM_FASHION_MNIST_DIR");
  return dir != nullptr && *dir != '\0' ? dir : kFashionMnistDir;
}

std::string fashion_mnist_images_path(const std::string& dir, Split split) {
  return dir + "/" + split_prefix(split) + "-images-idx3-ubyte.gz";
}

std::string fashion_mnist_labels_path(const std::string& dir, Split split) {
  return dir + "/" + split_prefix(split) + "-labels-idx1-ubyte.gz";
}

LabeledImages load_fashion_mnist(const std::string& dir, Split split) {
  const std::string images_path = fashion_mnist_images_path(dir, split);
  const std::string labels_path = fashion_mnist_labels_path(dir, split);
  require_file(images_path);
  require_file(labels_path);
  IdxArray images = read_idx(images_path);
  IdxArray labels = read_idx(labels_path);
  if (images.dims.size() != 3) {
    throw DataError(images_path + ": expected 3 dimensions (count, rows, cols), got " +
                    std::to_string(images.dims.size()));
  }
  if (labels.dims.size() != 1) {
    throw DataError(labels_path + ": expected 1 dimension (count), got " + std::to_string(labels.dims.size()));
  }
  if (labels.dims[0] != images.dims[0]) {
    throw DataError(labels_path + ": " + std::to_string(labels.dims[0]) + " labels for " +
                    std::to_string(images.dims[0]) + " images in " + images_path);
  }
  for (std::size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] >= kFashionMnistClasses) {
      throw DataError(labels_path + ": label " + std::to_string(labels.data[i]) + " at index " + std::to_string(i) +
                      " is not a class 0.." + std::to_string(kFashionMnistClasses - 1));
    }
  }
  LabeledImages result;
  result.count = images.dims[0];
  result.rows = images.dims[1];
  result.cols = images.dims[2];
  result.pixels = std::move(images.data);
  result.labels = std::move(labels.data);
  return result;
}

}  // namespace ddpsim::data
