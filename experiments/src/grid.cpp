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

  std::vector<Point> points;
  for (int world_size : grid.world_sizes)
    for (double cap : grid.bucket_cap_mb)
      for (const auto& first : firsts)
        for (const auto& slowdown : grid.slowdown)
          for (const auto& delay : grid.delay)
            for (const auto& timeout : timeouts) {
              Point point;
              point.world_size = world_size;
              point.bucket_cap_mb = cap;
              point.first_bucket_cap_mb = first;
              point.slowdown = slowdown;
              point.delay = delay;
              point.timeout_s = timeout;
              std::vector<std::string> tokens;
              if (grid.world_sizes.size() > 1) tokens.push_back("w" + std::to_string(world_size));
              if (grid.bucket_cap_mb.size() > 1) tokens.push_back("cap" + format_number(cap));
              if (firsts.size() > 1) tokens.push_back("first" + format_number(*first));
              if (grid.slowdown.size() > 1) tokens.push_back(skew_token("slow", slowdown));
              if (grid.delay.size() > 1) tokens.push_back(skew_token("delay", delay));
              if (timeouts.size() > 1) tokens.push_back("to" + format_number(*timeout));
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
    for (size_t point = 0; point < num_points; ++point) schedule.push_back({point, rep});
  return schedule;
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
