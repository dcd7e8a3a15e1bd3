// A machine profile's all-reduce ladder as the replay's network, where the line fitted to it
// misses it beyond kMaxTrustedRelativeRms (a shaped link passing small messages in bursts; Note
// [the ladder as the network] in docs/model.md). The platform keeps the line's α and β
// (machine_settings.hpp): its α is every step's latency, its β the rate that contention and other
// transfers share; each all-reduce carries the payload that makes the line's bandwidth term the
// ladder's at its size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddpsim::sim {

// The fewest rungs a ladder needs to replace the line: ddp-machine-profile's default ladder (4 KiB
// to 64 MiB by ×4). A sparser ladder, interpolated between rungs far apart and each timed by few
// repeats, is no better evidence than the line through it (Note [the ladder as the network]).
inline constexpr std::size_t kMinLadderRungs = 8;

struct LadderRung {
  std::int64_t bytes = 0;
  double seconds = 0;  // one all-reduce alone, median
};

class NetworkLadder {
 public:
  NetworkLadder() = default;
  // `rungs` of a profile of `world_size` ranks, ascending by bytes; t = intercept_s +
  // slope_s_per_byte · S the line fitted to them. A rung slower than a larger one is taken at
  // the larger one's time: a larger all-reduce is never faster, so that rung's excess is noise
  // (a first rung that paid for warm-up).
  NetworkLadder(int world_size, const std::vector<LadderRung>& rungs, double intercept_s, double slope_s_per_byte);

  bool empty() const { return bytes_.empty(); }
  std::size_t rungs() const { return bytes_.size(); }

  // One all-reduce of `bytes` among the ladder's own ranks: linear between rungs, the first
  // rung's time below it, the last segment extended beyond the last.
  double time_s(std::int64_t bytes) const;

  // What an all-reduce of `bytes` among `world_size` ranks carries over the line's network so
  // that it takes the ladder's time: bytes × (ladder − intercept) / (line − intercept) at the
  // size that puts as many bytes on each ring link among the ladder's ranks. `bytes` itself for
  // an empty ladder or a world of one rank.
  double carried_bytes(std::int64_t bytes, int world_size) const;

 private:
  int world_size_ = 0;
  std::vector<std::int64_t> bytes_;
  std::vector<double> seconds_;  // never above a larger rung's
  double intercept_s_ = 0;
  double slope_s_per_byte_ = 0;
};

}  // namespace ddpsim::sim
