// `ddp-sim sweep` (sweep_command.hpp): flags in, sim::run_sweep out.
#include "sweep_command.hpp"

#include <iostream>
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/machine_settings.hpp"
#include "ddpsim/sim/sweep.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/summary.hpp"
#include "numeric_flags.hpp"
#include "progress.hpp"
#include "repeats.hpp"
#include "replay_flags.hpp"
#include "resource_check.hpp"

namespace ddpsim::cli {
namespace {

struct Flags {
  ReplayFlags replay;
  sim::SweepGrid grid;
  std::string out_csv;
  int jobs = 1;
  std::string shard;               // "I/N" or "slurm"; empty: the whole grid
  std::vector<std::string> merge;  // shard CSVs to join into --out instead of simulating
  std::vector<std::string> repeats;
  bool pool = false;
};

int run_merge(const Flags& flags) {
  check_output_file(flags.out_csv, "--out");
  const sim::SweepMerge merge = sim::merge_sweep_csvs(flags.grid, flags.merge, flags.out_csv);
  std::cout << "sweep: merged " << merge.rows << " rows of " << merge.points << " points from " << flags.merge.size()
            << " files into " << flags.out_csv << "\n";
  if (!merge.first_missing.empty()) {
    std::cerr << "ddp-sim: sweep --merge: " << merge.points - merge.rows << " of " << merge.points
              << " points have no row (first: " << merge.first_missing << "); is a shard unfinished?\n";
    return 1;
  }
  if (merge.failed == 0) return 0;
  std::cerr << "ddp-sim: sweep --merge: " << merge.failed << " of " << merge.points
            << " points failed (their error column in " << flags.out_csv << " says why)\n";
  return 1;
}

// Before the grid: the point of the largest world under each bucket cap (the caps set the
// buckets, so the events), --jobs of them at once, must fit. A point that cannot be prepared is
// left to fail in its own row.
void check_largest_points(const Flags& flags, const sim::ReplayRequest& request, const sim::MonteCarloPlan& plan,
                          const sim::SweepShard& shard) {
  const std::vector<sim::SweepPoint> points = sim::sweep_points(flags.grid, shard);
  if (points.empty()) return;
  const trace::Trace measured = trace::read_trace(request.trace_dir);
  std::map<double, sim::SweepPoint> largest;  // by cap
  for (const sim::SweepPoint& point : points) {
    const int world = point.world_size > 0 ? point.world_size : measured.world_size();
    auto [entry, inserted] = largest.try_emplace(point.bucket_cap_mb, point);
    const int known = entry->second.world_size > 0 ? entry->second.world_size : measured.world_size();
    if (!inserted && world > known) entry->second = point;
  }
  std::optional<sim::ResourceEstimate> worst;
  for (const auto& [cap, point] : largest) {
    try {
      const sim::PreparedReplay prepared = sim::prepare_replay(sim::point_request(request, point), measured);
      const sim::ResourceEstimate estimate = sim::estimate_replay(prepared, sim::plan_for(prepared, plan).runs);
      if (!worst || estimate.resident_bytes > worst->resident_bytes) worst = estimate;
    } catch (const std::exception&) {
      // its row's error column says why
    }
  }
  const int at_once = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(flags.jobs), points.size()));
  if (worst) check_resources(*worst, flags.replay.max_memory, "the sweep's largest point", at_once);
}

int run(const Flags& flags, bool runs_given) {
  if (!flags.merge.empty()) return run_merge(flags);
  check_output_file(flags.out_csv, "--out");  // before anything is read or simulated
  sim::ReplayRequest request = to_request(flags.replay);
  if (flags.pool) request.pooled_runs = flags.repeats;
  sim::MonteCarloPlan plan = to_plan(flags.replay);
  plan.runs_asked = runs_given;
  std::optional<sim::RunToRunSpread> spread;
  if (!flags.repeats.empty()) {
    const trace::Trace replayed = trace::read_trace(request.trace_dir);
    spread = run_to_run_of_repeats(flags.repeats, request.trace_dir, replayed,
                                   trace::summarize(replayed).median_iteration_s);
  }
  // Before minutes of points: a profile that does not belong with the trace fails once, here; and
  // a network fitted to the trace's sizes is looked at once, for the headline.
  std::string network_note;
  if (request.machine || (!request.calibration && !(request.bandwidth && request.latency))) {
    const trace::Trace measured = trace::read_trace(request.trace_dir);
    if (request.machine) {
      for (const std::string& warning : sim::check_machine_matches(*request.machine, measured, request.machine_file)) {
        std::cerr << "ddp-sim: warning: " << warning << "\n";
      }
    } else if (measured.world_size() >= 2) {
      try {
        network_note = sim::few_sizes_headline_note(sim::calibrate(measured, sim::AllreduceAlgorithm::Ring));
      } catch (const sim::CalibrationError&) {
        // The points say why, each in its error column.
      }
    }
  }
  // The compute scale for --unprofiled-iteration-ms is the trace's, whatever a point changes:
  // searched once, here (a time the trace cannot reach is refused before any point runs).
  if (request.unprofiled_iteration_s) request.unprofiled_scale = sim::prepare_replay(request).unprofiled_scale;
  const sim::SweepShard shard = flags.shard.empty() ? sim::SweepShard{} : sim::parse_sweep_shard(flags.shard);
  check_largest_points(flags, request, plan, shard);
  sim::SweepSummary summary;
  {
    Progress progress("sweep points", static_cast<long>(sim::sweep_points(flags.grid, shard).size()));
    summary = sim::run_sweep(request, plan, spread, flags.grid, shard, flags.out_csv, flags.jobs,
                             [&progress] { progress.step(); });
  }
  std::cout << "sweep: " << summary.simulated << " points simulated, " << summary.skipped << " already in "
            << flags.out_csv;
  if (shard.count > 1) std::cout << " (shard " << shard.index << "/" << shard.count << ")";
  if (!network_note.empty()) std::cout << "  <- " << network_note;
  std::cout << "\n";
  if (summary.failed == 0) return 0;
  std::cerr << "ddp-sim: sweep: " << summary.failed << " of " << summary.points
            << " points failed (their error column in " << flags.out_csv << " says why)\n";
  return 1;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  CLI::App* command = app.add_subcommand(
      "sweep", "Simulate every (bucket cap, slowdown, world size) point in parallel processes");
  // The grid first: it is what a sweep is about; the replay flags set what every point shares.
  const std::string grid = "Grid (every combination is one point)";
  command->add_option("--bucket-caps", flags->grid.bucket_caps_mb, "bucket_cap_mb values, MiB (0: the trace's layout)")
      ->delimiter(',')
      ->check(bucket_cap_mb(true))
      ->group(grid);
  // Text here: the library reads each entry with the skew syntax's parser (F >= 1).
  command->add_option("--slowdowns", flags->grid.slowdowns,
                      "Compute slowdowns: factors F >= 1 of --slowdown-rank, or RANK=F as --slowdown (e.g. 1.5,1=2); "
                      "a point's slowdown replaces a --slowdown of that rank")
      ->delimiter(',')
      ->group(grid);
  command->add_option("--slowdown-rank", flags->grid.slowdown_rank,
                      "The rank a plain --slowdowns factor slows (default 0); other than 0, the CSV's slowdown "
                      "column reads RANK=F")
      ->check(integer_in(0, kIntMax))
      ->group(grid);
  command->add_option("--world-sizes", flags->grid.world_sizes, "World sizes (0: the trace's)")
      ->delimiter(',')
      ->check(integer_in(0, kIntMax))
      ->group(grid);
  add_replay_options(command, flags->replay);
  CLI::Option* repeats = command->add_option(
      "--repeats", flags->repeats,
      "Other measured runs of TRACE_DIR's configuration: each point's interval widened by how much "
      "their medians differ from run to run (the run_to_run_* columns)");
  repeats->group("Runs");
  add_pool_flag(command, flags->pool, repeats);  // in --repeats' group
  command->add_option("--out", flags->out_csv, "CSV file: one row per point; existing rows are kept (resume)")
      ->required()
      ->group("Output");
  const std::string parallel = "Parallel and sharded sweeps";
  CLI::Option* jobs = command->add_option("--jobs", flags->jobs, "Points simulated at once (default 1)")
                          ->check(integer_in(1, kIntMax))
                          ->group(parallel);
  CLI::Option* shard = command->add_option(
      "--shard", flags->shard,
      "Simulate only shard I/N of the grid (points i with i % N == I), or 'slurm': this job array task's "
      "shard (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT); one --out per shard");
  shard->group(parallel);
  command
      ->add_option("--merge", flags->merge,
                   "Simulate nothing: write the rows of these shard CSVs into --out in grid order (give the "
                   "sweep's grid flags; TRACE_DIR is not read). Exit 1 when a point has no row or failed")
      ->delimiter(',')
      ->excludes(jobs)
      ->excludes(shard)
      ->group(parallel);
  return {command, [flags, command] { return run(*flags, command->count("--runs") > 0); }};
}

}  // namespace ddpsim::cli
