#include "ddpsim/trace/skew.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>

#include "ddpsim/trace/one_line.hpp"
#include "ddpsim/trace/splitmix.hpp"

namespace ddpsim::trace {
namespace {

constexpr double kNsPerMs = 1e6;
// The longest stall: its nanoseconds (and those of a few summed) still fit an int64. A larger
// --delay used to overflow llround into a negative sleep (found by fuzz_skew).
constexpr double kMaxDelayMs = 1e12;

// Milliseconds to nanoseconds, a total of stalls capped at the longest one.
std::int64_t stall_ns(double total_ms) {
  return std::llround(std::min(std::max(total_ms, 0.0), kMaxDelayMs) * kNsPerMs);
}
constexpr double kTwoPi = 6.283185307179586476925286766559;

// Flag text as an error shows it, so every SkewError stays one line.
std::string shown(const std::string& text) { return one_line(text); }

// The whole text as a finite double, or nullopt ("1.5x", "", "nan" are rejected).
std::optional<double> parse_number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// A non-negative decimal integer that fits `limit`, or nullopt.
std::optional<std::int64_t> parse_count(const std::string& text, std::int64_t limit) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value > limit) return std::nullopt;
  return value;
}

// "RANK" or, when allowed, "all".
std::optional<int> parse_rank(const std::string& text, bool allow_all) {
  if (allow_all && text == "all") return kAllRanks;
  const auto rank = parse_count(text, std::numeric_limits<int>::max());
  if (!rank) return std::nullopt;
  return static_cast<int>(*rank);
}

// Shortest decimal text that reads back as the same double ("2.5", not "2.5000000000000000").
std::string format_number(double value) {
  for (int precision = 6; precision <= 17; ++precision) {
    std::ostringstream out;
    out.precision(precision);
    out << value;
    if (std::strtod(out.str().c_str(), nullptr) == value) return out.str();
  }
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

std::string rank_text(int rank) { return rank == kAllRanks ? "all" : std::to_string(rank); }

bool rank_matches(int spec_rank, int rank) { return spec_rank == kAllRanks || spec_rank == rank; }

// Splits "A=B" at the first '='; nullopt without one.
std::optional<std::pair<std::string, std::string>> split_assignment(const std::string& text) {
  const auto at = text.find('=');
  if (at == std::string::npos) return std::nullopt;
  return std::make_pair(text.substr(0, at), text.substr(at + 1));
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    const auto at = text.find(separator, start);
    parts.push_back(text.substr(start, at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

std::uint64_t mix64(std::uint64_t z) { return splitmix64(z); }

// A double in (0, 1): never 0, so log() is always finite.
double open_unit(std::uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

}  // namespace

double DelayDistribution::mean_ms() const {
  switch (kind) {
    case Kind::LogNormal:
      return std::exp(a + b * b / 2.0);
    case Kind::Exponential:
      return a;
    case Kind::Uniform:
      return (a + b) / 2.0;
  }
  return 0.0;
}

bool SkewSpec::empty() const {
  return slowdowns.empty() && delays.empty() && distributions.empty();
}

double SkewSpec::slowdown_factor(int rank) const {
  double factor = 1.0;
  for (const Slowdown& s : slowdowns) {
    if (s.rank == rank) factor = s.factor;
  }
  return factor;
}

std::int64_t SkewSpec::fixed_delay_ns(int rank, std::int64_t iteration) const {
  double total_ms = 0.0;
  for (const FixedDelay& d : delays) {
    if (rank_matches(d.rank, rank) && (d.iteration < 0 || d.iteration == iteration)) {
      total_ms += d.ms;
    }
  }
  return stall_ns(total_ms);
}

std::int64_t SkewSpec::random_delay_ns(int rank, std::int64_t iteration) const {
  double total_ms = 0.0;
  for (std::size_t i = 0; i < distributions.size(); ++i) {
    const DelayDistribution& d = distributions[i];
    if (rank_matches(d.rank, rank)) total_ms += sample_delay_ms(d, seed, rank, iteration, i);
  }
  return stall_ns(total_ms);
}

std::int64_t SkewSpec::delay_ns(int rank, std::int64_t iteration) const {
  return fixed_delay_ns(rank, iteration) + random_delay_ns(rank, iteration);
}

void SkewSpec::check_ranks(int world_size) const {
  const auto check = [world_size](const char* flag, int rank, const std::string& value) {
    if (rank != kAllRanks && rank >= world_size) {
      throw SkewError(std::string(flag) + " " + shown(value) + ": rank " + std::to_string(rank) +
                      " is not in a job of " + std::to_string(world_size) + " ranks");
    }
  };
  for (const auto& s : slowdowns) check("--slowdown", s.rank, to_string(s));
  for (const auto& d : delays) check("--delay", d.rank, to_string(d));
  for (const auto& d : distributions) check("--delay-dist", d.rank, to_string(d));
}

std::map<std::string, std::string> SkewSpec::to_meta() const {
  std::map<std::string, std::string> meta;
  const auto join = [&meta](const char* key, const auto& entries) {
    if (entries.empty()) return;
    std::string text;
    for (const auto& entry : entries) text += (text.empty() ? "" : ";") + to_string(entry);
    meta[key] = text;
  };
  join("slowdown", slowdowns);
  join("delay", delays);
  join("delay_dist", distributions);
  if (!meta.empty()) meta["seed"] = std::to_string(seed);
  return meta;
}

Slowdown parse_slowdown(const std::string& text) {
  const auto fail = [&text]() -> Slowdown {
    throw SkewError("--slowdown " + shown(text) + ": expected RANK=F with F >= 1 (e.g. 1=1.5)");
  };
  const auto parts = split_assignment(text);
  if (!parts) return fail();
  const auto rank = parse_rank(parts->first, /*allow_all=*/false);
  const auto factor = parse_number(parts->second);
  if (!rank || !factor || *factor < 1.0) return fail();
  return Slowdown{*rank, *factor};
}

FixedDelay parse_delay(const std::string& text) {
  const auto fail = [&text]() -> FixedDelay {
    throw SkewError("--delay " + shown(text) +
                    ": expected RANK=MS or RANK=MS@ITER (RANK an integer or all, 0 <= MS <= 1e12 "
                    "milliseconds, ITER >= 0; e.g. 1=10000@3)");
  };
  const auto parts = split_assignment(text);
  if (!parts) return fail();
  FixedDelay delay;
  const auto rank = parse_rank(parts->first, /*allow_all=*/true);
  std::string ms_text = parts->second;
  if (const auto at = ms_text.find('@'); at != std::string::npos) {
    const auto iteration =
        parse_count(ms_text.substr(at + 1), std::numeric_limits<std::int64_t>::max());
    if (!iteration) return fail();
    delay.iteration = *iteration;
    ms_text = ms_text.substr(0, at);
  }
  const auto ms = parse_number(ms_text);
  if (!rank || !ms || *ms < 0.0 || *ms > kMaxDelayMs) return fail();
  delay.rank = *rank;
  delay.ms = *ms;
  return delay;
}

DelayDistribution parse_delay_distribution(const std::string& text) {
  const auto fail = [&text](const std::string& why) -> DelayDistribution {
    throw SkewError("--delay-dist " + shown(text) + ": expected " + why);
  };
  const std::string usage =
      "RANK|all=lognormal:MU,SIGMA|exp:MEAN|uniform:A,B (milliseconds; e.g. all=exp:20)";
  const auto parts = split_assignment(text);
  if (!parts) return fail(usage);
  const auto rank = parse_rank(parts->first, /*allow_all=*/true);
  const auto colon = parts->second.find(':');
  if (!rank || colon == std::string::npos) return fail(usage);
  const std::string name = parts->second.substr(0, colon);
  std::vector<double> args;
  for (const std::string& field : split(parts->second.substr(colon + 1), ',')) {
    const auto value = parse_number(field);
    if (!value) return fail(usage);
    args.push_back(*value);
  }
  DelayDistribution d;
  d.rank = *rank;
  if (name == "lognormal") {
    if (args.size() != 2 || args[1] < 0) return fail("lognormal:MU,SIGMA with SIGMA >= 0");
    d.kind = DelayDistribution::Kind::LogNormal;
    d.a = args[0];
    d.b = args[1];
  } else if (name == "exp") {
    if (args.size() != 1 || args[0] <= 0) return fail("exp:MEAN with MEAN > 0 milliseconds");
    d.kind = DelayDistribution::Kind::Exponential;
    d.a = args[0];
  } else if (name == "uniform") {
    if (args.size() != 2 || args[0] < 0 || args[1] < args[0]) {
      return fail("uniform:A,B with 0 <= A <= B milliseconds");
    }
    d.kind = DelayDistribution::Kind::Uniform;
    d.a = args[0];
    d.b = args[1];
  } else {
    return fail(usage);
  }
  return d;
}

SkewSpec skew_from_meta(const std::map<std::string, std::string>& meta) {
  SkewSpec spec;
  const auto entries = [&meta](const char* key) {
    const auto found = meta.find(key);
    return found == meta.end() || found->second.empty() ? std::vector<std::string>{}
                                                        : split(found->second, ';');
  };
  try {
    for (const auto& e : entries("slowdown")) spec.slowdowns.push_back(parse_slowdown(e));
    for (const auto& e : entries("delay")) spec.delays.push_back(parse_delay(e));
    for (const auto& e : entries("delay_dist")) {
      spec.distributions.push_back(parse_delay_distribution(e));
    }
  } catch (const SkewError& error) {
    throw SkewError(std::string("skew metadata: ") + error.what());
  }
  if (const auto found = meta.find("seed"); found != meta.end()) {
    const std::string& text = found->second;
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] < '0' || text[0] > '9' || errno == ERANGE ||
        end != text.c_str() + text.size()) {
      throw SkewError("skew metadata: seed " + shown(text) + ": expected a non-negative integer");
    }
    spec.seed = value;
  }
  return spec;
}

std::string to_string(const Slowdown& s) {
  return std::to_string(s.rank) + "=" + format_number(s.factor);
}

std::string to_string(const FixedDelay& d) {
  std::string text = rank_text(d.rank) + "=" + format_number(d.ms);
  if (d.iteration >= 0) text += "@" + std::to_string(d.iteration);
  return text;
}

std::string to_string(const DelayDistribution& d) {
  const std::string prefix = rank_text(d.rank) + "=";
  switch (d.kind) {
    case DelayDistribution::Kind::LogNormal:
      return prefix + "lognormal:" + format_number(d.a) + "," + format_number(d.b);
    case DelayDistribution::Kind::Exponential:
      return prefix + "exp:" + format_number(d.a);
    case DelayDistribution::Kind::Uniform:
      return prefix + "uniform:" + format_number(d.a) + "," + format_number(d.b);
  }
  return prefix;
}

double sample_delay_ms(const DelayDistribution& d, std::uint64_t seed, int rank,
                       std::int64_t iteration, std::uint64_t stream) {
  std::uint64_t key = mix64(seed);
  key = mix64(key ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(rank)));
  key = mix64(key ^ static_cast<std::uint64_t>(iteration));
  key = mix64(key ^ stream);
  const double u1 = open_unit(key);
  switch (d.kind) {
    case DelayDistribution::Kind::Exponential:
      return -d.a * std::log(u1);
    case DelayDistribution::Kind::Uniform:
      return d.a + (d.b - d.a) * u1;
    case DelayDistribution::Kind::LogNormal: {
      // Box-Muller with a second, independent uniform from the same key.
      const double u2 = open_unit(mix64(key));
      const double normal = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
      return std::exp(d.a + d.b * normal);
    }
  }
  return 0.0;
}

}  // namespace ddpsim::trace
