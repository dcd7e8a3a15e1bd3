// A sweep's points, their CSV keys, the request each replays and the grid's checks (sweep.hpp).
#include <cmath>
#include <iomanip>
#include <sstream>

#include "ddpsim/sim/sweep.hpp"
#include "ddpsim/sim/text_of.hpp"

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

void check_sweep_grid(const SweepGrid& grid, int trace_world) {
  for (double cap : grid.bucket_caps_mb) {
    if (!std::isfinite(cap) || cap < 0 || cap * 1024.0 * 1024.0 >= 9.2e18) {
      throw RequestError("--bucket-caps: expected MiB in [0, 8.7e12] (0: the trace's layout), got " + text_of(cap));
    }
  }
  bool slowed = false;
  for (double factor : grid.slowdowns) {
    try {
      point_request({}, {0, factor, 0}, 0);  // the skew syntax's rule: F >= 1, finite
    } catch (const trace::SkewError&) {
      throw RequestError("--slowdowns: expected factors F >= 1 (the rule of --slowdown), got " + text_of(factor));
    }
    slowed = slowed || factor != 1.0;
  }
  for (int world : grid.world_sizes) {
    if (world < 0) {
      throw RequestError("--world-sizes: expected 0 (the trace's) or a number of ranks >= 1, got " +
                         std::to_string(world));
    }
  }
  if (grid.slowdown_rank < 0) {
    throw RequestError("--slowdown-rank: expected a rank >= 0, got " + std::to_string(grid.slowdown_rank));
  }
  for (const SweepPoint& point : sweep_points(grid)) {
    const int world = point.world_size > 0 ? point.world_size : trace_world;
    if (slowed && grid.slowdown_rank >= world) {
      throw RequestError("--slowdown-rank: expected a rank below every world size swept (" + std::to_string(world) +
                         "), got " + std::to_string(grid.slowdown_rank));
    }
  }
}

}  // namespace ddpsim::sim
