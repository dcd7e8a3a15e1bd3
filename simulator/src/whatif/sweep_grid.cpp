// A sweep's points, their CSV keys, the request each replays and the grid's checks (sweep.hpp).
#include <cmath>
#include <iomanip>
#include <sstream>

#include "ddpsim/sim/sweep.hpp"
#include "ddpsim/sim/text_of.hpp"

namespace ddpsim::sim {
namespace {

// One --slowdowns entry: RANK=F as the user wrote it, or a plain F of --slowdown-rank. Either
// way the user's own text goes through the skew syntax's parser, so a sweep's slowdown obeys
// --slowdown's rule (F >= 1, finite) and no factor is formatted and read back.
struct Entry {
  trace::Slowdown slowdown;
  bool names_rank = false;  // RANK=F: the rank is the entry's, not --slowdown-rank's
};

Entry parse_entry(const std::string& text, int slowdown_rank) {
  const bool names_rank = text.find('=') != std::string::npos;
  if (!names_rank && slowdown_rank < 0) {
    throw RequestError("--slowdown-rank: expected a rank >= 0, got " + std::to_string(slowdown_rank));
  }
  try {
    return {trace::parse_slowdown(names_rank ? text : std::to_string(slowdown_rank) + "=" + text), names_rank};
  } catch (const trace::SkewError&) {
    throw RequestError("--slowdowns: expected factors F >= 1 or RANK=F entries (the rule of --slowdown), got '" +
                       text_of(text) + "'");
  }
}

std::vector<Entry> parse_entries(const SweepGrid& grid) {
  std::vector<Entry> entries;
  for (const std::string& text : grid.slowdowns) entries.push_back(parse_entry(text, grid.slowdown_rank));
  if (entries.empty()) entries.push_back({trace::Slowdown{grid.slowdown_rank, 1.0}, false});
  return entries;
}

}  // namespace

std::vector<SweepPoint> sweep_points(const SweepGrid& grid) {
  const std::vector<double> caps = grid.bucket_caps_mb.empty() ? std::vector<double>{0} : grid.bucket_caps_mb;
  const std::vector<Entry> slowdowns = parse_entries(grid);
  const std::vector<int> worlds = grid.world_sizes.empty() ? std::vector<int>{0} : grid.world_sizes;
  std::vector<SweepPoint> points;
  for (double cap : caps) {
    for (const Entry& entry : slowdowns) {
      for (int world : worlds) points.push_back({cap, entry.slowdown, world});
    }
  }
  return points;
}

std::string sweep_key(const SweepPoint& point) {
  std::ostringstream key;
  key << std::setprecision(9) << point.bucket_cap_mb << ",";
  if (point.slowdown.rank != 0) key << point.slowdown.rank << "=";
  key << point.slowdown.factor << "," << point.world_size;
  return key.str();
}

ReplayRequest point_request(const ReplayRequest& base, const SweepPoint& point) {
  ReplayRequest request = base;
  if (point.bucket_cap_mb > 0) request.bucket_cap_mb = point.bucket_cap_mb;  // 0: the trace's own layout
  request.world_size = point.world_size;
  // Last, so it wins over a --slowdown of the same rank.
  if (point.slowdown.factor != 1.0) request.skew.slowdowns.push_back(point.slowdown);
  return request;
}

void check_sweep_grid(const SweepGrid& grid, int trace_world) {
  for (double cap : grid.bucket_caps_mb) {
    if (!std::isfinite(cap) || cap < 0 || cap * 1024.0 * 1024.0 >= 9.2e18) {
      throw RequestError("--bucket-caps: expected MiB in [0, 8.7e12] (0: the trace's layout), got " + text_of(cap));
    }
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
  const std::vector<Entry> entries = parse_entries(grid);
  const std::vector<int> worlds = grid.world_sizes.empty() ? std::vector<int>{0} : grid.world_sizes;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& entry = entries[i];
    // A plain factor of 1 slows nothing, so --slowdown-rank need not exist then; a RANK=F
    // entry names its rank, which must.
    if (!entry.names_rank && entry.slowdown.factor == 1.0) continue;
    for (int world_size : worlds) {
      const int world = world_size > 0 ? world_size : trace_world;
      if (entry.slowdown.rank < world) continue;
      if (!entry.names_rank) {
        throw RequestError("--slowdown-rank: expected a rank below every world size swept (" + std::to_string(world) +
                           "), got " + std::to_string(grid.slowdown_rank));
      }
      throw RequestError("--slowdowns: expected ranks below every world size swept (" + std::to_string(world) +
                         "), got '" + text_of(grid.slowdowns[i]) + "'");
    }
  }
}

}  // namespace ddpsim::sim
