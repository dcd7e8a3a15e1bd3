#include "names.hpp"

#include <cctype>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>

namespace ddpsim::experiment {

std::string format_number(double value) {
  // Exponents only where plain digits would be unwieldy: "30", not "3e+01" (it ends up in
  // flags and directory names).
  const double magnitude = std::fabs(value);
  const bool plain = magnitude == 0 || (magnitude >= 1e-4 && magnitude < 1e15);
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (plain && std::strchr(buffer, 'e')) continue;
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

bool is_safe_name(const std::string& name) {
  if (name.empty()) return false;
  for (unsigned char c : name) {
    if (!std::isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::string sanitize_for_path(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else if (c == '=') {
      out += '-';
    } else if (c == '@') {
      out += "at";
    } else {
      out += '_';
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

}  // namespace ddpsim::experiment
