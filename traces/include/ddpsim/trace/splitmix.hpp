// SplitMix64's finaliser, the project's one counter-based mixer: a bijection whose outputs pass
// BigCrush when fed a counter, so chaining it over (seed, rank, iteration, stream) gives every
// tuple its own reproducible stream. The skew sampler, the simulator's draws and the runtime's
// synthetic data all use it, so the same seed means the same numbers everywhere.
#pragma once

#include <cstdint>

namespace ddpsim::trace {

inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace ddpsim::trace
