// The grid of an experiment: its points, and the order their repetitions run in.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spec.hpp"

namespace ddpsim::experiment {

// One configuration of the real job.
struct Point {
  std::string id;  // unique in the experiment, safe as a path: "w2_cap0.25", or "base"
  int world_size = 1;
  double bucket_cap_mb = 25;
  std::optional<double> first_bucket_cap_mb;
  SkewSetting slowdown;
  SkewSetting delay;
  SkewSetting delay_dist;
  std::optional<double> timeout_s;
  int hosts = 1;  // testbed hosts; world_size / hosts ranks each
  bool unskewed() const { return slowdown.empty() && delay.empty() && delay_dist.empty(); }
};

// One execution: repetition `rep` (0-based) of point `point` (an index into the points).
struct RunKey {
  size_t point = 0;
  int rep = 0;
  bool operator==(const RunKey& other) const { return point == other.point && rep == other.rep; }
};

// Every combination of the grid's axes, world size outermost and timeout innermost. The id
// names only the axes that take more than one value, so ids stay short.
std::vector<Point> expand_grid(const Grid& grid);

// Repetition r of every point before repetition r+1, and within repetition r the points'
// order rotated by r (A B C, B C A, C A B, …): machine drift (the CPU speed on these machines
// switches ~2x mid-run) then hits every point alike, and no point always runs first (or
// always right after the baseline).
std::vector<RunKey> interleaved_schedule(size_t num_points, int repetitions);

// The point `[predict] baseline` names (its index), or nullopt when the spec has none.
std::optional<size_t> baseline_point(const std::vector<Point>& points, const Baseline& baseline);

// The runs of `schedule` not yet in `finished` ((point id, rep) pairs), in schedule order.
std::vector<RunKey> pending_runs(const std::vector<RunKey>& schedule,
                                 const std::vector<Point>& points,
                                 const std::set<std::pair<std::string, int>>& finished);

// "POINT-repR": the name of a run's trace directory and the key of its summary rows.
std::string run_name(const Point& point, int rep);

}  // namespace ddpsim::experiment
