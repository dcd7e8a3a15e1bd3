// libFuzzer target for the skew flag parsers that ddp-train and ddp-sim share (--slowdown,
// --delay, --delay-dist): any text must give a value or one SkewError line, never a crash or a
// sanitizer report. A value accepted must keep the rules the runtime relies on (factor >= 1,
// stalls >= 0 and finite, draws >= 0 and the sleeps they become in int64 range) and print back to the same value.
//
// Input: the first byte picks the parser ('s' slowdown, 'd' delay, anything else delay-dist),
// the rest is the flag's text.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ddpsim/trace/skew.hpp"

namespace {

using namespace ddpsim::trace;

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const char kind = static_cast<char>(data[0]);
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (kind == 's') {
      const Slowdown slowdown = parse_slowdown(text);
      check(std::isfinite(slowdown.factor) && slowdown.factor >= 1 && slowdown.rank >= 0);
      const Slowdown back = parse_slowdown(to_string(slowdown));
      check(back.rank == slowdown.rank && back.factor == slowdown.factor);
    } else if (kind == 'd') {
      const FixedDelay delay = parse_delay(text);
      check(std::isfinite(delay.ms) && delay.ms >= 0 && delay.iteration >= -1);
      SkewSpec spec;
      spec.delays.push_back(delay);
      check(spec.fixed_delay_ns(delay.rank == kAllRanks ? 3 : delay.rank, delay.iteration < 0 ? 7 : delay.iteration) >= 0);
      const FixedDelay back = parse_delay(to_string(delay));
      check(back.rank == delay.rank && back.ms == delay.ms && back.iteration == delay.iteration);
    } else {
      const DelayDistribution distribution = parse_delay_distribution(text);
      SkewSpec spec;
      spec.distributions.push_back(distribution);
      for (std::int64_t iteration = 0; iteration < 4; ++iteration) {
        const double ms = sample_delay_ms(distribution, 7, 1, iteration);
        check(!std::isnan(ms) && ms >= 0);  // +inf from e.g. lognormal:2,1e300; capped below
        check(spec.random_delay_ns(distribution.rank == kAllRanks ? 1 : distribution.rank, iteration) >= 0);
      }
      const DelayDistribution back = parse_delay_distribution(to_string(distribution));
      check(back.rank == distribution.rank && back.kind == distribution.kind && back.a == distribution.a &&
            back.b == distribution.b);
    }
  } catch (const SkewError& error) {
    check(std::strchr(error.what(), '\n') == nullptr);  // errors are one line
  }
  return 0;
}
