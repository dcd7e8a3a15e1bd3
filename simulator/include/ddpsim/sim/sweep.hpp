// `ddp-sim sweep`: every (bucket cap, slowdown, world size) point of a grid, each a Monte
// Carlo of one what-if, simulated in parallel forked processes into one CSV that is also the
// sweep's memory: rows already there are kept and their points skipped, so a sweep that was
// interrupted resumes where it stopped.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ddpsim/sim/monte_carlo_runs.hpp"
#include "ddpsim/sim/prepared_replay.hpp"

namespace ddpsim::sim {

struct SweepGrid {
  std::vector<double> bucket_caps_mb;  // empty: {0}, 0 meaning the trace's own layout
  std::vector<double> slowdowns;       // compute factors (>= 1, SkewSpec's rule); empty: {1}
  std::vector<int> world_sizes;        // empty: {0}, the trace's
  // The rank the slowdowns stretch. Rank 0 keeps the CSV's slowdown column a bare factor;
  // another rank writes RANK=F there, so a resumed sweep never mistakes one rank's rows for
  // another's.
  int slowdown_rank = 0;
};

struct SweepPoint {
  double bucket_cap_mb = 0;
  double slowdown = 1;
  int world_size = 0;
};

struct SweepSummary {
  std::size_t points = 0;     // in the grid
  std::size_t simulated = 0;  // by this call
  std::size_t skipped = 0;    // already in the CSV
  std::size_t failed = 0;     // points of the grid whose row has an error, or that have no row
};

// Every point of the grid, caps outermost, world sizes innermost (the CSV's row order).
std::vector<SweepPoint> sweep_points(const SweepGrid& grid);

// The first three CSV columns of a point: its key when resuming.
std::string sweep_key(const SweepPoint& point, int slowdown_rank);

// The request of one point: `base` with the point's cap, world size and slowdown.
ReplayRequest point_request(const ReplayRequest& base, const SweepPoint& point, int slowdown_rank);

// Checks the grid (RequestError naming --bucket-caps, --slowdowns, --world-sizes,
// --slowdown-rank or --jobs), reads the trace once (a bad trace is one error, not one per
// point), then simulates the points not yet in `csv_path`, `jobs` at a time. A point that
// fails gets a row whose last column says why; the summary counts them.
SweepSummary run_sweep(const ReplayRequest& base, const MonteCarloPlan& plan, const SweepGrid& grid,
                       const std::string& csv_path, int jobs, const std::function<void()>& on_point_done = {});

}  // namespace ddpsim::sim
