#include "ddpsim/process/fork_call.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

namespace ddpsim::process {

pid_t fork_call(const std::function<int()>& body) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid > 0) return pid;
  int code = 1;
  try {
    code = body();
  } catch (...) {
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(code);
}

}  // namespace ddpsim::process
