// A machine profile's ladder as the replay's network (network_ladder.hpp).
#include "ddpsim/sim/network_ladder.hpp"

#include <algorithm>
#include <cmath>

namespace ddpsim::sim {
namespace {

// Bytes each rank sends over its ring link per byte all-reduced: 2(W−1)/W.
double ring_link_share(int world_size) { return 2.0 * (world_size - 1) / world_size; }

}  // namespace

NetworkLadder::NetworkLadder(int world_size, const std::vector<LadderRung>& rungs, double intercept_s,
                             double slope_s_per_byte)
    : world_size_(world_size), intercept_s_(intercept_s), slope_s_per_byte_(slope_s_per_byte) {
  for (const LadderRung& rung : rungs) {
    bytes_.push_back(rung.bytes);
    seconds_.push_back(rung.seconds);
  }
  for (std::size_t i = seconds_.size(); i-- > 1;) seconds_[i - 1] = std::min(seconds_[i - 1], seconds_[i]);
}

double NetworkLadder::time_s(std::int64_t bytes) const {
  if (bytes_.size() == 1 || bytes <= bytes_.front()) return seconds_.front();
  std::size_t high = 1;
  while (high + 1 < bytes_.size() && bytes_[high] < bytes) ++high;
  const std::size_t low = high - 1;
  double slope = (seconds_[high] - seconds_[low]) / static_cast<double>(bytes_[high] - bytes_[low]);
  // Beyond the last rung a flat last segment (two rungs alike) would make size free: the line's slope.
  if (bytes > bytes_[high] && !(slope > 0)) slope = slope_s_per_byte_;
  return seconds_[low] + slope * static_cast<double>(bytes - bytes_[low]);
}

double NetworkLadder::carried_bytes(std::int64_t bytes, int world_size) const {
  if (empty() || world_size < 2 || world_size_ < 2 || bytes <= 0 || !(slope_s_per_byte_ > 0)) {
    return static_cast<double>(bytes);
  }
  const double at_ladder = static_cast<double>(bytes) * ring_link_share(world_size) / ring_link_share(world_size_);
  const double bandwidth_s = time_s(std::llround(at_ladder)) - intercept_s_;
  return std::max(0.0, bandwidth_s) / (slope_s_per_byte_ * at_ladder) * static_cast<double>(bytes);
}

}  // namespace ddpsim::sim
