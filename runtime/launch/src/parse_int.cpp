#include "parse_int.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace ddpsim::launch::detail {

std::optional<int> parse_int(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const char first = text.front();
  if (!(first == '-' || (first >= '0' && first <= '9'))) return std::nullopt;  // strtol skips spaces, accepts '+'
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size() || end == text.c_str()) return std::nullopt;
  if (value < INT_MIN || value > INT_MAX) return std::nullopt;
  return static_cast<int>(value);
}

}  // namespace ddpsim::launch::detail
