// The Monte Carlo loop every replaying subcommand shares: N replays of one prepared what-if,
// each with its own random draws, each in its own forked SimGrid engine.
//
// One --seed gives each run two independent streams (SplitMix64, ddpsim/trace/splitmix.hpp):
// the stalls, drawn exactly as `ddp-train --seed` would draw them, and which measured rank a
// rank beyond the trace copies. With one stream for both, changing the stall draws also
// changed which ranks were copied, so a what-if on stalls compared different workloads.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ddpsim/sim/monte_carlo.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/trace/summary.hpp"

namespace ddpsim::sim {

struct RunSeeds {
  std::uint64_t stalls = 0;       // ReplayOptions::skew.seed
  std::uint64_t rank_copies = 0;  // ReplayOptions::rank_copy_seed
  std::uint64_t resample = 0;     // ReplayOptions::resample_seed (0: iterations in order)
};

// Run `run` of a Monte Carlo started from `seed`. Stalls use seed + run, so run 0 stalls as
// `ddp-train --seed seed` does and every timeout of a timeout curve sees the same draws; with
// `bootstrap`, runs after the first resample the measured iterations (2 × stalls + 1: odd,
// so never 0, which means "no resampling").
RunSeeds seeds_of_run(std::uint64_t seed, int run, bool bootstrap);

struct MonteCarloPlan {
  int runs = 1;
  std::uint64_t seed = 0;
  bool bootstrap = false;  // runs 1..N-1 resample the measured iterations (an interval)
  // false when the user gave no --runs: plan_for may then choose the what-if default.
  bool runs_asked = true;
};

// Without --runs, a what-if at its trace's world size replays this many times, runs 2..N
// resampling the measured iterations, so that its median comes with a 90 % interval (issue
// 16). Cheap there: each run replays as many ranks as were measured. A scale-out, whose runs
// each simulate the larger world, asks for an interval with --runs N --bootstrap.
constexpr int kWhatIfRuns = 21;

// `plan`, or kWhatIfRuns bootstrap runs when `plan` did not ask for runs, asked for one, and
// `prepared` changes something at the trace's world size (whatif_changes, report.hpp). One rule
// for `replay` and for each point of a `sweep`, so a sweep's point is the replay of its flags.
// `measured`: the summary of prepared.measured, when the caller has it; the first form makes one
// only when the rest of the rule leaves the choice open.
MonteCarloPlan plan_for(const PreparedReplay& prepared, const MonteCarloPlan& plan);
MonteCarloPlan plan_for(const PreparedReplay& prepared, const MonteCarloPlan& plan, const trace::Summary& measured);

// Throws RequestError naming --runs / --bootstrap when the plan cannot be run.
void check_plan(const MonteCarloPlan& plan);

// Replays `prepared` plan.runs times. Run 0 replays the trace's iterations in order: its full
// result goes to *first_result when given. `on_run_done` is called after each run (a
// progress bar). Throws SimulationError (one line) when a run cannot be simulated, including
// a predicted run longer than the trace format's nanosecond clock can hold.
std::vector<RunOutcome> run_monte_carlo(const PreparedReplay& prepared, const MonteCarloPlan& plan,
                                        ReplayResult* first_result = nullptr,
                                        const std::function<void()>& on_run_done = {});

}  // namespace ddpsim::sim
