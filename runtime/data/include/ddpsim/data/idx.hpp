#pragma once
// Reading IDX files (the MNIST / Fashion-MNIST container), optionally gzip-compressed.
//
// Layout (big-endian): two zero bytes, an element-type byte (0x08 = unsigned byte), a byte
// with the number of dimensions D, then D uint32 sizes, then the elements in row-major order.
// Only unsigned-byte data is supported: that is what image and label files hold.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpsim::data {

struct IdxArray {
  std::vector<std::uint32_t> dims;  // e.g. {60000, 28, 28}
  std::vector<std::uint8_t> data;   // product(dims) bytes, row-major

  std::size_t element_count() const;  // product of dims (1 for zero dims)
};

// A file that cannot be read as expected. what() is one line starting with the file path,
// e.g. "/x/train-images-idx3-ubyte.gz: bad magic 0x1f8b0800: not an IDX file".
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads a .gz or plain IDX file (zlib reads uncompressed files transparently). Throws DataError
// for a missing/unreadable file, bad magic, an unsupported element type, truncated data or
// trailing bytes.
IdxArray read_idx(const std::string& path);

// Writes `array` as an IDX file of unsigned bytes, gzip-compressed when `gzip` is true (for
// tests and small derived datasets). Throws DataError.
void write_idx(const std::string& path, const IdxArray& array, bool gzip = true);

}  // namespace ddpsim::data
