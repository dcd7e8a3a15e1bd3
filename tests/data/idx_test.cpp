// Reading IDX files the test writes itself (gzip and plain), and their errors.
#include "ddpsim/data/idx.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace {

using ddpsim::data::DataError;
using ddpsim::data::IdxArray;
using ddpsim::data::read_idx;
using ddpsim::data::write_idx;

class IdxFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ddpsim-idx-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes raw bytes, gzip-compressed, bypassing write_idx (to build malformed files).
  std::string write_gz(const std::string& name, const std::vector<unsigned char>& bytes) const {
    const std::string file_path = path(name);
    gzFile file = gzopen(file_path.c_str(), "wb");
    EXPECT_NE(file, nullptr);
    if (!bytes.empty()) gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(file);
    return file_path;
  }

  std::string error_of(const std::string& file_path) const {
    try {
      read_idx(file_path);
    } catch (const DataError& error) {
      return error.what();
    }
    return "";
  }

  std::filesystem::path dir_;
};

IdxArray counting_array(std::vector<std::uint32_t> dims) {
  IdxArray array;
  array.dims = std::move(dims);
  array.data.resize(array.element_count());
  for (std::size_t i = 0; i < array.data.size(); ++i) array.data[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return array;
}

TEST_F(IdxFiles, RoundTripsGzipAndPlainFiles) {
  const IdxArray original = counting_array({5, 3, 4});
  for (const bool gzip : {true, false}) {
    const std::string file_path = path(gzip ? "a.idx.gz" : "a.idx");
    write_idx(file_path, original, gzip);
    const IdxArray read = read_idx(file_path);
    EXPECT_EQ(read.dims, original.dims);
    EXPECT_EQ(read.data, original.data);
  }
  // The gzip file really is compressed: it starts with the gzip magic, not the IDX one.
  std::ifstream raw(path("a.idx.gz"), std::ios::binary);
  EXPECT_EQ(raw.get(), 0x1f);
  EXPECT_EQ(raw.get(), 0x8b);
}

TEST_F(IdxFiles, ParsesTheHeaderByteByByte) {
  // 2 x 3, big-endian dimensions.
  const std::string file_path = write_gz("hand.gz", {0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 10, 11, 12, 13, 14, 15});
  const IdxArray array = read_idx(file_path);
  EXPECT_EQ(array.dims, (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(array.data, (std::vector<std::uint8_t>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(array.element_count(), 6u);
}

TEST_F(IdxFiles, MissingFileNamesIt) {
  const std::string missing = path("nope.gz");
  EXPECT_EQ(error_of(missing), missing + ": cannot open: No such file or directory");
}

TEST_F(IdxFiles, RejectsBadMagic) {
  const std::string file_path = write_gz("magic.gz", {0x12, 0x34, 8, 1, 0, 0, 0, 1, 0});
  EXPECT_EQ(error_of(file_path), file_path + ": bad magic 0x12340801: not an IDX file");
}

TEST_F(IdxFiles, RejectsUnsupportedElementTypes) {
  const std::string file_path = write_gz("float.gz", {0, 0, 0x0d, 1, 0, 0, 0, 1, 0, 0, 0, 0});
  EXPECT_EQ(error_of(file_path), file_path + ": element type 0x0d not supported (only 0x08, unsigned byte)");
}

TEST_F(IdxFiles, RejectsTruncatedFiles) {
  const std::string empty = write_gz("empty.gz", {});
  EXPECT_EQ(error_of(empty), empty + ": truncated: 0 bytes, expected a 4-byte IDX header");
  const std::string short_dims = write_gz("dims.gz", {0, 0, 8, 3, 0, 0, 0, 2, 0, 0});
  EXPECT_EQ(error_of(short_dims), short_dims + ": truncated: header declares 3 dimensions but ends after 1");
  const std::string short_data = write_gz("data.gz", {0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4});
  EXPECT_EQ(error_of(short_data), short_data + ": truncated: expected 6 bytes of data, got 4");
}

TEST_F(IdxFiles, RejectsTrailingBytes) {
  const std::string file_path = write_gz("long.gz", {0, 0, 8, 1, 0, 0, 0, 2, 1, 2, 3});
  EXPECT_EQ(error_of(file_path), file_path + ": unexpected bytes after the 2 bytes the header declares");
}

TEST_F(IdxFiles, RejectsAbsurdDimensionsBeforeAllocating) {
  const std::string file_path =
      write_gz("huge.gz", {0, 0, 8, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
  EXPECT_NE(error_of(file_path).find(": dimensions too large"), std::string::npos);
}

TEST_F(IdxFiles, RejectsCorruptGzipStreams) {
  const IdxArray original = counting_array({100, 100});
  const std::string file_path = path("corrupt.gz");
  write_idx(file_path, original, true);
  {  // Flip bytes in the middle of the deflate stream.
    std::fstream file(file_path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(30);
    const char garbage[8] = {'\xde', '\xad', '\xbe', '\xef', '\xde', '\xad', '\xbe', '\xef'};
    file.write(garbage, sizeof garbage);
  }
  const std::string error = error_of(file_path);
  EXPECT_EQ(error.rfind(file_path + ": ", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST_F(IdxFiles, WriteRejectsMismatchedData) {
  IdxArray array = counting_array({2, 2});
  array.data.pop_back();
  EXPECT_THROW(write_idx(path("bad.gz"), array), DataError);
}

}  // namespace
