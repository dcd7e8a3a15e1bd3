// Loading Fashion-MNIST: a small fake copy the test writes, and the real dataset when installed.
#include "ddpsim/data/fashion_mnist.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>

namespace {

using ddpsim::data::DataError;
using ddpsim::data::IdxArray;
using ddpsim::data::LabeledImages;
using ddpsim::data::load_fashion_mnist;
using ddpsim::data::Split;

class FakeFashionMnist : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("ddpsim-fmnist-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write_split(Split split, std::uint32_t count, std::vector<std::uint8_t> labels) {
    IdxArray images{{count, 2, 3}, {}};
    for (std::size_t i = 0; i < images.element_count(); ++i) images.data.push_back(static_cast<std::uint8_t>(i));
    ddpsim::data::write_idx(ddpsim::data::fashion_mnist_images_path(dir_, split), images);
    ddpsim::data::write_idx(ddpsim::data::fashion_mnist_labels_path(dir_, split),
                            IdxArray{{static_cast<std::uint32_t>(labels.size())}, std::move(labels)});
  }

  std::string error_of(Split split) {
    try {
      load_fashion_mnist(dir_, split);
    } catch (const DataError& error) {
      return error.what();
    }
    return "";
  }

  std::string dir_;
};

TEST_F(FakeFashionMnist, LoadsImagesAndLabels) {
  write_split(Split::Test, 4, {9, 0, 3, 1});
  const LabeledImages split = load_fashion_mnist(dir_, Split::Test);
  EXPECT_EQ(split.count, 4u);
  EXPECT_EQ(split.rows, 2u);
  EXPECT_EQ(split.cols, 3u);
  EXPECT_EQ(split.labels, (std::vector<std::uint8_t>{9, 0, 3, 1}));
  ASSERT_EQ(split.pixels.size(), 24u);
  EXPECT_EQ(split.image(2)[0], 12);  // image 2 starts at byte 2 * 6
}

TEST_F(FakeFashionMnist, MissingFileSaysWhichPackageProvidesIt) {
  const std::string error = error_of(Split::Train);
  EXPECT_EQ(error.rfind(dir_ + "/train-images-idx3-ubyte.gz: no such file", 0), 0u) << error;
  EXPECT_NE(error.find("apt-get install dataset-fashion-mnist"), std::string::npos) << error;
}

TEST_F(FakeFashionMnist, RejectsMismatchedCountsAndBadLabels) {
  write_split(Split::Train, 3, {1, 2});
  EXPECT_NE(error_of(Split::Train).find(": 2 labels for 3 images"), std::string::npos) << error_of(Split::Train);
  write_split(Split::Train, 2, {1, 10});
  EXPECT_NE(error_of(Split::Train).find(": label 10 at index 1 is not a class 0..9"), std::string::npos);
}

TEST(RealFashionMnist, HasTheDocumentedShapeAndBalancedClasses) {
  const std::string dir = ddpsim::data::default_fashion_mnist_dir();
  if (!std::filesystem::exists(ddpsim::data::fashion_mnist_labels_path(dir, Split::Test))) {
    GTEST_SKIP() << "Fashion-MNIST not installed in " << dir << " (apt-get install dataset-fashion-mnist)";
  }
  for (const auto& [split, count] : {std::pair{Split::Train, 60000u}, std::pair{Split::Test, 10000u}}) {
    const LabeledImages data = load_fashion_mnist(dir, split);
    EXPECT_EQ(data.count, count);
    EXPECT_EQ(data.rows, 28u);
    EXPECT_EQ(data.cols, 28u);
    EXPECT_EQ(data.pixels.size(), std::size_t{count} * 28 * 28);
    // Fashion-MNIST has exactly count / 10 images of each class in both splits.
    std::array<std::size_t, 10> per_class{};
    for (const std::uint8_t label : data.labels) ++per_class[label];
    for (const std::size_t n : per_class) EXPECT_EQ(n, count / 10);
    // Real images, not zeros: some pixels are dark, some bright.
    const auto [low, high] = std::minmax_element(data.pixels.begin(), data.pixels.end());
    EXPECT_EQ(*low, 0);
    EXPECT_EQ(*high, 255);
  }
}

}  // namespace
