// Small pieces of io.hpp shared by the writer and the reader: errors, file names, clocks.
#include "ddpsim/trace/io.hpp"

#include <charconv>
#include <chrono>
#include <ctime>
#include <filesystem>

#include "rank_files.hpp"

namespace ddpsim::trace {

namespace {

// A TraceError must stay on one line whatever the input held (a fuzzed file, a binary blob),
// so control characters are escaped and overlong quotes are shortened.
std::string one_line(const std::string& text) {
  constexpr std::size_t kMaxLength = 160;
  std::string out;
  for (char c : text) {
    if (out.size() >= kMaxLength) {
      out += "...";
      break;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

TraceError::TraceError(const std::string& file, long line, const std::string& expected,
                       const std::string& got)
    : std::runtime_error(one_line(file) + ":" + std::to_string(line) + ": expected " +
                         one_line(expected) + ", got " + one_line(got)),
      file_(file),
      line_(line) {}

std::string meta_file_name(int rank) { return "rank-" + std::to_string(rank) + ".meta.json"; }

std::string events_file_name(int rank) {
  return "rank-" + std::to_string(rank) + ".events.csv";
}

std::multimap<int, std::string> detail::rank_files_in(const std::string& dir) {
  std::multimap<int, std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("rank-", 0) != 0) continue;
    const char* begin = name.c_str() + 5;
    const char* end = name.c_str() + name.size();
    int rank = -1;
    const auto [ptr, ec] = std::from_chars(begin, end, rank);
    if (ec != std::errc() || rank < 0) continue;
    const std::string rest(ptr);
    if (rest == ".meta.json" || rest == ".events.csv") found.emplace(rank, entry.path().string());
  }
  return found;
}

std::int64_t now_ns() {
  // steady_clock is CLOCK_MONOTONIC on Linux with libstdc++ and libc++.
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace ddpsim::trace
