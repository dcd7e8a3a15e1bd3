// Numeric flag validators (numeric_flags.hpp).
#include "numeric_flags.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "ddpsim/trace/one_line.hpp"

namespace ddpsim::cli {
namespace {

constexpr double kLargestCapMb = 8.7e12;  // × 2^20 bytes stays below 2^63

bool all_digits(const std::string& text, std::size_t from) {
  if (text.size() <= from) return false;
  for (std::size_t i = from; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

// The flag's text as an error shows it, on one line (found by fuzz_numeric_flags).
std::string shown(std::string text) { return trace::one_line(std::move(text)); }

}  // namespace

CLI::Validator integer_in(std::int64_t min, std::int64_t max) {
  const std::string expected =
      "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got ";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        if (!all_digits(text, text.rfind('-', 0) == 0 ? 1 : 0)) return expected + shown(text);
        errno = 0;
        const long long value = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE || value < min || value > max) return expected + shown(text);
        return "";
      },
      "INTEGER");
}

CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        errno = 0;
        if (all_digits(text, 0)) {
          std::strtoull(text.c_str(), nullptr, 10);
          if (errno != ERANGE) return "";
        }
        return "expected an integer in [0, " + std::to_string(std::numeric_limits<std::uint64_t>::max()) +
               "], got " + shown(text);
      },
      "UINT64");
}

CLI::Validator finite_number(double min, double max, bool min_open, const std::string& expected) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(text.c_str(), &end);
        const bool parsed = end != text.c_str() && *end == '\0' && std::isfinite(value) &&
                            !(errno == ERANGE && std::fabs(value) > 1);  // overflow, not underflow
        if (!parsed || value > max || value < min || (min_open && value == min)) {
          return "expected " + expected + ", got " + shown(text);
        }
        return "";
      },
      "NUMBER");
}

CLI::Validator positive_number() {
  return finite_number(0, std::numeric_limits<double>::max(), true, "a finite number > 0");
}

CLI::Validator non_negative_number() {
  return finite_number(0, std::numeric_limits<double>::max(), false, "a finite number >= 0");
}

CLI::Validator bandwidth() {
  return finite_number(1, std::numeric_limits<double>::max(), false, "a finite number of bytes/s >= 1");
}

CLI::Validator bucket_cap_mb(bool zero_ok) {
  return finite_number(0, kLargestCapMb, !zero_ok,
                       zero_ok ? "MiB in [0, 8.7e12] (0: the trace's layout)" : "MiB in (0, 8.7e12]");
}

}  // namespace ddpsim::cli
