// `ddp-sim sweep`: every (bucket cap, slowdown, world size) point of a grid, each a Monte
// Carlo of one what-if, simulated in parallel forked processes into one CSV that is also the
// sweep's memory: rows already there are kept and their points skipped, so a sweep that was
// interrupted resumes where it stopped. A grid can be cut into N shards run as N separate jobs
// (a SLURM job array), each into its own CSV; merge_sweep_csvs puts their rows back together.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ddpsim/sim/monte_carlo_runs.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/run_to_run.hpp"
#include "ddpsim/trace/skew.hpp"

namespace ddpsim::sim {

struct SweepGrid {
  std::vector<double> bucket_caps_mb;  // empty: {0}, 0 meaning the trace's own layout
  // --slowdowns entries as the user wrote them: "F", a factor of slowdown_rank, or "RANK=F",
  // --slowdown's syntax; either way read by trace::parse_slowdown (F >= 1). Empty: {"1"}.
  std::vector<std::string> slowdowns;
  std::vector<int> world_sizes;  // empty: {0}, the trace's
  // The rank a plain factor stretches (--slowdown-rank, default 0).
  int slowdown_rank = 0;
};

struct SweepPoint {
  double bucket_cap_mb = 0;
  trace::Slowdown slowdown;  // factor 1: nothing slowed
  int world_size = 0;
};

// Shard `index` of `count` (0 <= index < count): the grid's points i with i % count == index.
// Round robin rather than blocks, so the caps (outermost) spread over every shard and the
// shards' run times stay close. {0, 1}: the whole grid.
struct SweepShard {
  int index = 0;
  int count = 1;
};

struct SweepSummary {
  std::size_t points = 0;     // in the grid (in the shard, when sharded)
  std::size_t simulated = 0;  // by this call
  std::size_t skipped = 0;    // already in the CSV
  std::size_t failed = 0;     // points of the grid whose row has an error, or that have no row
};

// Every point of the grid, caps outermost, world sizes innermost: the row order of a --jobs 1
// sweep and of merge_sweep_csvs (with more jobs, rows are written as points finish).
// RequestError naming --slowdowns on an entry parse_slowdown refuses.
std::vector<SweepPoint> sweep_points(const SweepGrid& grid);
// The points of one shard, in grid order.
std::vector<SweepPoint> sweep_points(const SweepGrid& grid, const SweepShard& shard);

// "I/N" (0 <= I < N), or "slurm": this SLURM job array task's shard, I = SLURM_ARRAY_TASK_ID -
// SLURM_ARRAY_TASK_MIN and N = SLURM_ARRAY_TASK_COUNT, read through `env` (an array submitted
// as --array=0-N-1, or any contiguous range). RequestError naming --shard otherwise.
SweepShard parse_sweep_shard(const std::string& text);
// The same with the environment read through `env` (name -> value, nullptr when unset).
SweepShard parse_sweep_shard(const std::string& text, const std::function<const char*(const char*)>& env);

// Checks the grid against a trace of `trace_world` ranks: RequestError naming --bucket-caps,
// --slowdowns, --world-sizes or --slowdown-rank.
void check_sweep_grid(const SweepGrid& grid, int trace_world);

// The first three CSV columns of a point: its key when resuming. The slowdown column is a bare
// factor for rank 0 and RANK=F for another rank, so a resumed sweep or a merge never mistakes
// one rank's rows for another's (and "2" and "0=2" are the same point).
std::string sweep_key(const SweepPoint& point);

// The request of one point: `base` with the point's cap, world size and slowdown.
ReplayRequest point_request(const ReplayRequest& base, const SweepPoint& point);

// Checks the grid (check_sweep_grid, and --jobs), reads the trace once (a bad trace is one
// error, not one per point), then simulates the shard's points not yet in `csv_path`, `jobs`
// at a time. Each point is the Monte Carlo `replay` would run for it (plan_for: without --runs,
// 21 bootstrap runs at the trace's world size, so its row has an interval), its interval widened
// by `run_to_run` when given (the spread of measured runs of the trace's configuration). A point
// that fails gets a row whose last column says why; the summary counts them. RequestError naming
// --out when `csv_path` is a directory or a CSV with other columns.
SweepSummary run_sweep(const ReplayRequest& base, const MonteCarloPlan& plan,
                       const std::optional<RunToRunSpread>& run_to_run, const SweepGrid& grid,
                       const SweepShard& shard, const std::string& csv_path, int jobs,
                       const std::function<void()>& on_point_done = {});

struct SweepMerge {
  std::size_t points = 0;   // in the grid
  std::size_t rows = 0;     // written: points that have a row in some input
  std::size_t failed = 0;   // rows whose error column says why
  std::string first_missing;  // the key of the first point with no row ("" when none)
};

// Writes `out_csv` (atomically) with every row of the sweep CSVs `inputs` (the shards' --out
// files), in grid order: for the same grid, the rows of an unsharded --jobs 1 sweep, all
// columns alike but the measured wall_s. RequestError naming --merge when an input is not a
// sweep CSV, has a row of a point outside `grid` (another grid's shard), or shares a point
// with another input. Points with no row are counted, not refused: merging what has finished
// so far is allowed, and the caller decides.
SweepMerge merge_sweep_csvs(const SweepGrid& grid, const std::vector<std::string>& inputs,
                            const std::string& out_csv);

}  // namespace ddpsim::sim
