// A sweep's points, their CSV keys and the request each replays (sweep.hpp).
#include <cmath>
#include <iomanip>
#include <sstream>

#include "ddpsim/sim/sweep.hpp"

namespace ddpsim::sim {

std::vector<SweepPoint> sweep_points(const SweepGrid& grid) {
  const std::vector<double> caps = grid.bucket_caps_mb.empty() ? std::vector<double>{0} : grid.bucket_caps_mb;
  const std::vector<double> slowdowns = grid.slowdowns.empty() ? std::vector<double>{1.0} : grid.slowdowns;
  const std::vector<int> worlds = grid.world_sizes.empty() ? std::vector<int>{0} : grid.world_sizes;
  std::vector<SweepPoint> points;
  for (double cap : caps) {
    for (double factor : slowdowns) {
      for (int world : worlds) points.push_back({cap, factor, world});
    }
  }
  return points;
}

std::string sweep_key(const SweepPoint& point, int slowdown_rank) {
  std::ostringstream key;
  key << std::setprecision(9) << point.bucket_cap_mb << ",";
  if (slowdown_rank != 0) key << slowdown_rank << "=";
  key << point.slowdown << "," << point.world_size;
  return key.str();
}

ReplayRequest point_request(const ReplayRequest& base, const SweepPoint& point, int slowdown_rank) {
  ReplayRequest request = base;
  if (point.bucket_cap_mb > 0) request.bucket_cap_mb = point.bucket_cap_mb;  // 0: the trace's own layout
  request.world_size = point.world_size;
  if (point.slowdown != 1.0) {
    // Through the skew syntax, so a sweep's slowdown obeys the rule of every other one; it
    // comes last, so it wins over a --slowdown of the same rank.
    std::ostringstream entry;
    entry << std::setprecision(17) << slowdown_rank << "=" << point.slowdown;
    request.skew.slowdowns.push_back(trace::parse_slowdown(entry.str()));
  }
  return request;
}

}  // namespace ddpsim::sim
