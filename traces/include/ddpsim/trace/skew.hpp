// Injected skew: which ranks run slower, and when they stall.
//
// One syntax for the runtime (`ddp-train` sleeps) and the simulator (`ddp-sim` adds the same
// time), recorded in the trace's `skew` metadata so a trace says what was injected into it:
//
//   --slowdown RANK=F          the rank's compute phases take F times their measured time (F >= 1)
//   --delay RANK=MS[@ITER]     the rank stalls MS milliseconds at the start of iteration ITER
//                              (every iteration without @ITER); RANK may be `all`
//   --delay-dist RANK=DIST     a random stall at the start of every iteration, in milliseconds:
//                              lognormal:MU,SIGMA (ln of the delay ~ N(MU, SIGMA^2)),
//                              exp:MEAN, uniform:A,B; RANK may be `all` (independent draws)
//   seed                       what the random stalls are drawn from
//
// The random stall of (rank, iteration) is a pure function of (seed, rank, iteration): no
// generator state, so the runtime and the simulator draw exactly the same delays, whatever order
// they ask in, on any platform.
//
// Torch-free and SimGrid-free, like the rest of the trace contract.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpsim::trace {

// Bad skew text: one line naming the flag, the value and what was expected.
class SkewError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A rank value that means every rank.
inline constexpr int kAllRanks = -1;

struct Slowdown {
  int rank = 0;
  double factor = 1.0;  // >= 1
};

struct FixedDelay {
  int rank = 0;                 // or kAllRanks
  double ms = 0.0;              // >= 0
  std::int64_t iteration = -1;  // -1: every iteration
};

struct DelayDistribution {
  enum class Kind { LogNormal, Exponential, Uniform };
  int rank = kAllRanks;
  Kind kind = Kind::Exponential;
  // lognormal: MU, SIGMA of ln(ms); exp: MEAN, unused; uniform: A, B (0 <= A <= B).
  double a = 0.0;
  double b = 0.0;

  // The distribution's mean in milliseconds.
  double mean_ms() const;
};

struct SkewSpec {
  std::vector<Slowdown> slowdowns;
  std::vector<FixedDelay> delays;
  std::vector<DelayDistribution> distributions;
  std::uint64_t seed = 0;

  bool empty() const;
  // The rank's slowdown factor (1 when none was given).
  double slowdown_factor(int rank) const;
  // The fixed stall of (rank, iteration) in nanoseconds: the sum of every --delay that matches.
  std::int64_t fixed_delay_ns(int rank, std::int64_t iteration) const;
  // The random stall of (rank, iteration) in nanoseconds: the sum of one draw from each
  // matching distribution. Pure: the same arguments always give the same value.
  std::int64_t random_delay_ns(int rank, std::int64_t iteration) const;
  // fixed + random: what a rank sleeps at the start of an iteration.
  std::int64_t delay_ns(int rank, std::int64_t iteration) const;

  // Throws SkewError when a rank is not in a job of `world_size` ranks.
  void check_ranks(int world_size) const;

  // The trace's `skew` metadata: "slowdown", "delay", "delay_dist" hold the flag values joined
  // by ';' (only those given), "seed" whenever anything is given. Empty for no skew.
  std::map<std::string, std::string> to_meta() const;
};

// Parse one flag value; throw SkewError("--slowdown 1=0.5: expected RANK=F with F >= 1").
Slowdown parse_slowdown(const std::string& text);
FixedDelay parse_delay(const std::string& text);
DelayDistribution parse_delay_distribution(const std::string& text);

// The inverse of SkewSpec::to_meta (e.g. the simulator reading a measured trace). Unknown keys
// are ignored; bad values throw SkewError naming the key.
SkewSpec skew_from_meta(const std::map<std::string, std::string>& meta);

// Flag values as given on a command line, back from a parsed spec (to_meta's per-entry form).
std::string to_string(const Slowdown& slowdown);
std::string to_string(const FixedDelay& delay);
std::string to_string(const DelayDistribution& distribution);

// One draw of `distribution` in milliseconds for (seed, rank, iteration); `stream` separates
// several distributions that apply to the same rank. Pure and platform-independent (a
// counter-based hash, not a stateful generator).
double sample_delay_ms(const DelayDistribution& distribution, std::uint64_t seed, int rank,
                       std::int64_t iteration, std::uint64_t stream = 0);

}  // namespace ddpsim::trace
