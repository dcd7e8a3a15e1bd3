#include "ddpsim/data/idx.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace ddpsim::data {

namespace {

constexpr std::uint8_t kUnsignedByte = 0x08;
// Larger than any dataset we would hold in memory as bytes; guards against a garbled header
// asking for petabytes before we notice the file is short.
constexpr std::size_t kMaxElements = std::size_t{1} << 36;

// Owns a gzFile; reads exactly n bytes or reports how many it got.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    errno = 0;
    file_ = gzopen(path.c_str(), "rb");
    if (file_ == nullptr) {
      const int error = errno;
      throw DataError(path + ": cannot open: " + (error != 0 ? std::strerror(error) : "out of memory"));
    }
    gzbuffer(file_, 1 << 17);
  }
  ~GzReader() { gzclose(file_); }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Bytes actually read (< n only at end of data); throws on a decompression error.
  std::size_t read(void* into, std::size_t n) {
    auto* out = static_cast<unsigned char*>(into);
    std::size_t done = 0;
    while (done < n) {
      // gzread takes an unsigned count: read in chunks below its limit.
      const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - done, 1u << 30));
      const int got = gzread(file_, out + done, chunk);
      if (got < 0) {
        int code = 0;
        const char* message = gzerror(file_, &code);
        throw DataError(path_ + ": corrupt gzip data: " + (message != nullptr ? message : "unknown error"));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
};

std::string hex32(std::uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

std::uint32_t big_endian_u32(const unsigned char* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) |
         std::uint32_t{bytes[3]};
}

}  // namespace

std::size_t IdxArray::element_count() const {
  std::size_t count = 1;
  for (const std::uint32_t dim : dims) count *= dim;
  return count;
}

IdxArray read_idx(const std::string& path) {
  GzReader file(path);
  unsigned char magic[4];
  const std::size_t got_magic = file.read(magic, sizeof magic);
  if (got_magic < sizeof magic) {
    throw DataError(path + ": truncated: " + std::to_string(got_magic) + " bytes, expected a 4-byte IDX header");
  }
  if (magic[0] != 0 || magic[1] != 0) {
    throw DataError(path + ": bad magic " + hex32(big_endian_u32(magic)) + ": not an IDX file");
  }
  if (magic[2] != kUnsignedByte) {
    char type[5];
    std::snprintf(type, sizeof type, "0x%02x", magic[2]);
    throw DataError(path + ": element type " + type + " not supported (only 0x08, unsigned byte)");
  }

  IdxArray array;
  const std::size_t rank = magic[3];
  std::vector<unsigned char> dim_bytes(4 * rank);
  const std::size_t got_dims = file.read(dim_bytes.data(), dim_bytes.size());
  if (got_dims < dim_bytes.size()) {
    throw DataError(path + ": truncated: header declares " + std::to_string(rank) + " dimensions but ends after " +
                    std::to_string(got_dims / 4));
  }
  std::size_t count = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::uint32_t dim = big_endian_u32(dim_bytes.data() + 4 * d);
    array.dims.push_back(dim);
    if (dim != 0 && count > kMaxElements / dim) {
      throw DataError(path + ": dimensions too large (more than " + std::to_string(kMaxElements) + " elements)");
    }
    count *= dim;
  }

  array.data.resize(count);
  const std::size_t got_data = file.read(array.data.data(), count);
  if (got_data < count) {
    throw DataError(path + ": truncated: expected " + std::to_string(count) + " bytes of data, got " +
                    std::to_string(got_data));
  }
  unsigned char extra;
  if (file.read(&extra, 1) != 0) {
    throw DataError(path + ": unexpected bytes after the " + std::to_string(count) + " bytes the header declares");
  }
  return array;
}

void write_idx(const std::string& path, const IdxArray& array, bool gzip) {
  if (array.dims.size() > 255) throw DataError(path + ": an IDX file holds at most 255 dimensions");
  if (array.data.size() != array.element_count()) {
    throw DataError(path + ": " + std::to_string(array.data.size()) + " bytes of data for dimensions holding " +
                    std::to_string(array.element_count()));
  }
  std::vector<unsigned char> bytes{0, 0, kUnsignedByte, static_cast<unsigned char>(array.dims.size())};
  for (const std::uint32_t dim : array.dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<unsigned char>(dim >> shift));
  }
  bytes.insert(bytes.end(), array.data.begin(), array.data.end());

  errno = 0;
  gzFile file = gzopen(path.c_str(), gzip ? "wb" : "wbT");  // 'T': write without compression
  if (file == nullptr) throw DataError(path + ": cannot create: " + std::strerror(errno != 0 ? errno : ENOMEM));
  std::size_t done = 0;
  bool ok = true;
  while (ok && done < bytes.size()) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(bytes.size() - done, 1u << 30));
    const int wrote = gzwrite(file, bytes.data() + done, chunk);
    ok = wrote > 0;
    done += ok ? static_cast<std::size_t>(wrote) : 0;
  }
  if (gzclose(file) != Z_OK || !ok) throw DataError(path + ": write failed");
}

}  // namespace ddpsim::data
