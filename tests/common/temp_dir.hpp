// The one scratch directory of every part's tests: fresh for each object, under the system's
// temp dir ($TMPDIR when set), and removed with everything in it when the object goes, also
// when the test fails or throws. mkdtemp makes the name unique across processes too, so tests
// that ctest runs in parallel never share one.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace ddpsim::test_support {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ddpsim-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary directory from " + pattern);
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // The path of `name` inside the directory (nothing is created).
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  // Writes `text` to `name` inside the directory; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = *this / name;
    std::ofstream(path) << text;
    return path;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace ddpsim::test_support
