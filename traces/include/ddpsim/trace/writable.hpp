// Whether a file can be created in a directory, asked by creating one: access(W_OK) answers yes
// to root on any directory, /proc's and a read-only mount's included, and the refusal would
// then come after the work. The probe file is removed at once.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace ddpsim::trace {

inline bool can_create_in(const std::string& dir) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || ::access(dir.c_str(), W_OK | X_OK) != 0) return false;
  std::string name = dir + (dir.empty() || dir.back() == '/' ? "" : "/") + ".ddpsim-write-check-XXXXXX";
  std::vector<char> path(name.begin(), name.end());
  path.push_back('\0');
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(path.data());
  return true;
}

}  // namespace ddpsim::trace
