#include "grid.hpp"

#include <map>

#include "names.hpp"

namespace ddpsim::experiment {
namespace {

std::string skew_token(const char* prefix, const SkewSetting& setting) {
  if (setting.empty()) return std::string(prefix) + "none";
  std::vector<std::string> parts;
  for (const auto& flag : setting) parts.push_back(sanitize_for_path(flag));
  return prefix + join(parts, "+");
}

}  // namespace

std::vector<Point> expand_grid(const Grid& grid) {
  // An absent optional axis is one "unset" value, so the loops below stay uniform.
  std::vector<std::optional<double>> firsts(grid.first_bucket_cap_mb.begin(),
                                            grid.first_bucket_cap_mb.end());
  if (firsts.empty()) firsts.push_back(std::nullopt);
  std::vector<std::optional<double>> timeouts(grid.timeout_s.begin(), grid.timeout_s.end());
  if (timeouts.empty()) timeouts.push_back(std::nullopt);
  std::vector<int> hosts = grid.hosts;
  if (hosts.empty()) hosts.push_back(1);

  std::vector<Point> points;
  for (int world_size : grid.world_sizes)
    for (double cap : grid.bucket_cap_mb)
      for (const auto& first : firsts)
        for (const auto& slowdown : grid.slowdown)
          for (const auto& delay : grid.delay)
            for (const auto& delay_dist : grid.delay_dist)
            for (const auto& timeout : timeouts)
            for (int host_count : hosts) {
              Point point;
              point.world_size = world_size;
              point.bucket_cap_mb = cap;
              point.first_bucket_cap_mb = grid.first_bucket_cap_follows ? std::optional<double>(cap) : first;
              point.slowdown = slowdown;
              point.delay = delay;
              point.delay_dist = delay_dist;
              point.timeout_s = timeout;
              point.hosts = host_count;
              std::vector<std::string> tokens;
              if (grid.world_sizes.size() > 1) tokens.push_back("w" + std::to_string(world_size));
              if (grid.bucket_cap_mb.size() > 1) tokens.push_back("cap" + format_number(cap));
              if (firsts.size() > 1) tokens.push_back("first" + format_number(*first));
              if (grid.slowdown.size() > 1) tokens.push_back(skew_token("slow", slowdown));
              if (grid.delay.size() > 1) tokens.push_back(skew_token("delay", delay));
              if (grid.delay_dist.size() > 1) tokens.push_back(skew_token("ddist", delay_dist));
              if (timeouts.size() > 1) tokens.push_back("to" + format_number(*timeout));
              if (hosts.size() > 1) tokens.push_back("h" + std::to_string(host_count));
              point.id = tokens.empty() ? "base" : sanitize_for_path(join(tokens, "_"));
              points.push_back(std::move(point));
            }

  // Values that print alike (a repeated axis value) would share a directory: number them.
  std::map<std::string, int> seen;
  for (auto& point : points) {
    int count = seen[point.id]++;
    if (count > 0) point.id += "_" + std::to_string(count + 1);
  }
  return points;
}

std::vector<RunKey> interleaved_schedule(size_t num_points, int repetitions) {
  std::vector<RunKey> schedule;
  for (int rep = 0; rep < repetitions; ++rep)
    for (size_t i = 0; i < num_points; ++i)
      schedule.push_back({(i + static_cast<size_t>(rep)) % num_points, rep});
  return schedule;
}

std::optional<size_t> baseline_point(const std::vector<Point>& points, const Baseline& baseline) {
  if (!baseline.enabled) return std::nullopt;
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    if ((!baseline.world_size || p.world_size == *baseline.world_size) &&
        (!baseline.bucket_cap_mb || p.bucket_cap_mb == *baseline.bucket_cap_mb) &&
        (!baseline.first_bucket_cap_mb || p.first_bucket_cap_mb == baseline.first_bucket_cap_mb) &&
        (!baseline.timeout_s || p.timeout_s == baseline.timeout_s) &&
        (!baseline.hosts || p.hosts == *baseline.hosts) && p.unskewed())
      return i;
  }
  return std::nullopt;  // parse_spec checked every value against the grid: not reached
}

std::vector<RunKey> pending_runs(const std::vector<RunKey>& schedule,
                                 const std::vector<Point>& points,
                                 const std::set<std::pair<std::string, int>>& finished) {
  std::vector<RunKey> pending;
  for (const auto& run : schedule) {
    if (!finished.count({points.at(run.point).id, run.rep})) pending.push_back(run);
  }
  return pending;
}

std::string run_name(const Point& point, int rep) {
  return point.id + "-rep" + std::to_string(rep);
}

}  // namespace ddpsim::experiment
