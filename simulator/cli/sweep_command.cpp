// `ddp-sim sweep` (sweep_command.hpp): flags in, sim::run_sweep out.
#include "sweep_command.hpp"

#include <iostream>
#include <limits>
#include <memory>

#include "ddpsim/sim/sweep.hpp"
#include "numeric_flags.hpp"
#include "progress.hpp"
#include "replay_flags.hpp"

namespace ddpsim::cli {
namespace {

struct Flags {
  ReplayFlags replay;
  sim::SweepGrid grid;
  std::string out_csv;
  int jobs = 1;
};

int run(const Flags& flags) {
  const sim::ReplayRequest request = to_request(flags.replay);
  const sim::MonteCarloPlan plan = to_plan(flags.replay);
  check_output_file(flags.out_csv, "--out");
  sim::SweepSummary summary;
  {
    Progress progress("sweep points", static_cast<long>(sim::sweep_points(flags.grid).size()));
    summary = sim::run_sweep(request, plan, flags.grid, flags.out_csv, flags.jobs, [&progress] { progress.step(); });
  }
  std::cout << "sweep: " << summary.simulated << " points simulated, " << summary.skipped << " already in "
            << flags.out_csv << "\n";
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
  add_replay_options(command, flags->replay);
  command->add_option("--bucket-caps", flags->grid.bucket_caps_mb, "bucket_cap_mb values, MiB (0: the trace's layout)")
      ->delimiter(',')
      ->check(bucket_cap_mb(true));
  command->add_option("--slowdowns", flags->grid.slowdowns,
                      "Compute slowdown factors F >= 1 of --slowdown-rank (a point's slowdown replaces a "
                      "--slowdown of that rank)")
      ->delimiter(',')
      // A number here; F >= 1 is the skew syntax's rule, applied by the library's SkewSpec parser.
      ->check(finite_number(-std::numeric_limits<double>::max(), std::numeric_limits<double>::max(), false,
                            "a finite number"));
  command->add_option("--slowdown-rank", flags->grid.slowdown_rank,
                      "The rank --slowdowns slows (default 0); other than 0, the CSV's slowdown column reads RANK=F")
      ->check(integer_in(0, kIntMax));
  command->add_option("--world-sizes", flags->grid.world_sizes, "World sizes (0: the trace's)")
      ->delimiter(',')
      ->check(integer_in(0, kIntMax));
  command->add_option("--out", flags->out_csv, "CSV file: one row per point; existing rows are kept (resume)")
      ->required();
  command->add_option("--jobs", flags->jobs, "Points simulated at once (default 1)")->check(integer_in(1, kIntMax));
  return {command, [flags] { return run(*flags); }};
}

}  // namespace ddpsim::cli
