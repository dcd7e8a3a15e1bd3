// libFuzzer target for ddp-sim's numeric flag validators (simulator/cli/numeric_flags.cpp): the
// parsers of the platform flags (--bandwidth, --latency, --intra-bandwidth, --gpus-per-node,
// --world-size, --cores, ...) and of every other number ddp-sim reads. Any text must be accepted
// as a value within the flag's range, or refused with one line "expected ..., got TEXT"; never
// a crash or a sanitizer report.
//
// Input: the first byte picks the validator, the rest is the flag's text up to its first NUL
// (argv holds no NUL).
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string>

#include "numeric_flags.hpp"

namespace {

using namespace ddpsim::cli;

void check(bool condition) {
  if (!condition) std::abort();
}

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr double kDoubleMax = std::numeric_limits<double>::max();

struct Integer { std::int64_t min, max; };
struct Number { CLI::Validator validator; double min, max; bool min_open; };

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  text = text.substr(0, text.find('\0'));
  const std::string original = text;
  // ddp-sim's uses (replay_flags.cpp, advise_command.cpp, sweep_command.cpp, ...).
  static const Integer integers[] = {{1, kIntMax}, {0, kIntMax}, {1, kInt64Max}, {0, kInt64Max}, {11, kIntMax}};
  static const Number numbers[] = {{positive_number(), 0, kDoubleMax, true},
                                   {non_negative_number(), 0, kDoubleMax, false},
                                   {bandwidth(), 1, kDoubleMax, false},
                                   {bucket_cap_mb(false), 0, 8.7e12, true},
                                   {bucket_cap_mb(true), 0, 8.7e12, false},
                                   {finite_number(1, kIntMax, false, "cores"), 1, kIntMax, false},  // --cores
                                   {finite_number(0, 1, true, "fraction"), 0, 1, true}};  // --overlap-bandwidth-fraction
  const std::size_t choice = data[0] % (std::size(integers) + std::size(numbers) + 1);
  std::string message;
  if (choice < std::size(integers)) {
    const Integer range = integers[choice];
    message = integer_in(range.min, range.max)(text);
    if (message.empty()) {
      errno = 0;
      char* end = nullptr;
      const long long value = std::strtoll(text.c_str(), &end, 10);
      check(errno == 0 && *end == '\0' && value >= range.min && value <= range.max);
    }
  } else if (choice < std::size(integers) + std::size(numbers)) {
    const Number& range = numbers[choice - std::size(integers)];
    message = range.validator(text);
    if (message.empty()) {
      char* end = nullptr;
      const double value = std::strtod(text.c_str(), &end);
      check(*end == '\0' && std::isfinite(value) && value >= range.min && value <= range.max &&
            !(range.min_open && value == range.min));
    }
  } else {
    message = unsigned_integer()(text);
    if (message.empty()) {
      errno = 0;
      std::strtoull(text.c_str(), nullptr, 10);
      check(errno == 0 && !text.empty() && text[0] != '-' && text[0] != '+');
    }
  }
  check(text == original);  // a validator does not rewrite the value
  if (!message.empty()) {
    check(message.rfind("expected ", 0) == 0);
    for (char c : message) check(c != '\n' && c != '\r');  // one line
  }
  return 0;
}
