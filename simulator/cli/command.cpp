// Output files of the subcommands (command.hpp).
#include "command.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "ddpsim/trace/writable.hpp"

namespace ddpsim::cli {
namespace {

// The directory a new entry at `path` would be created in.
std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void check_creatable(const std::string& path, const std::string& flag, const char* what) {
  const std::string parent = parent_of(path);
  struct stat info {};
  if (::stat(parent.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || !trace::can_create_in(parent)) {
    throw UsageError(flag + " " + path + ": expected " + what + " in a writable directory, but " + parent +
                     " is not one");
  }
}

}  // namespace

void check_output_file(const std::string& path, const std::string& flag) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return check_creatable(path, flag, "a file");
  if (S_ISDIR(info.st_mode)) throw UsageError(flag + " " + path + ": expected a file, got a directory");
  if (::access(path.c_str(), W_OK) != 0) throw UsageError(flag + " " + path + ": expected a writable file");
}

void check_output_dir(const std::string& path, const std::string& flag) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    // The trace writer creates missing parents too: the nearest existing one must be writable.
    std::string missing = path;
    while (::stat(parent_of(missing).c_str(), &info) != 0 && parent_of(missing) != missing) missing = parent_of(missing);
    return check_creatable(missing, flag, "a directory");
  }
  if (!S_ISDIR(info.st_mode)) throw UsageError(flag + " " + path + ": expected a directory, got a file");
  if (!trace::can_create_in(path)) throw UsageError(flag + " " + path + ": expected a writable directory");
}

void write_output_file(const std::string& path, const std::string& text, const std::string& flag) {
  std::ofstream out(path);
  out << text;
  if (!out) throw UsageError(flag + " " + path + ": expected a writable file");
}

}  // namespace ddpsim::cli
