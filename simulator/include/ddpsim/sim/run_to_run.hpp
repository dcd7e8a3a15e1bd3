// How much two measured runs of one configuration differ on the machine that ran them, and a
// prediction's interval widened by it.
//
// A prediction replays one baseline run and is compared with another run. The bootstrap
// interval (monte_carlo.hpp, median_interval) says how much the prediction depends on which
// iterations that one run happened to record; it cannot see how much the machine drifts from
// one run to the next, which on a shared machine dominates. Measured on several runs of the
// baseline's configuration, the spread of the ratio of two runs' medians widens the interval to
// what a comparison with another run needs. See Note [run-to-run drift] in docs/model.md.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ddpsim/sim/monte_carlo.hpp"

namespace ddpsim::sim {

struct RunToRunSpread {
  int runs = 0;             // measured runs of the configuration
  double level = 0.9;
  double ratio_low = 1;     // quantile (1 - level) / 2 of m_i / m_j over every ordered pair i != j
  double ratio_high = 1;    // quantile 1 - (1 - level) / 2
};

// The spread of `median_iteration_s`, one measured median per run (seconds, > 0; two or more,
// std::invalid_argument otherwise). Quantiles interpolated linearly. Two runs give a rough
// spread (their one ratio, both ways); the report says how many runs it came from.
RunToRunSpread run_to_run_spread(const std::vector<double>& median_iteration_s, double level = 0.9);

// [low · ratio_low, high · ratio_high]: where another run of the predicted configuration's
// median should fall. Without a bootstrap interval, around the prediction itself.
MedianInterval widened(const MedianInterval& interval, const RunToRunSpread& spread);
MedianInterval widened(double predicted_median_s, const RunToRunSpread& spread);

// "median iteration, 90 % interval with the run-to-run spread of 5 runs of the baseline
// (ratios 0.93-1.07): [lo, hi] ms\n"
std::string run_to_run_interval_to_text(const MedianInterval& interval, const RunToRunSpread& spread);

// "pooled: 5 runs (the trace and its --repeats), 146 complete iterations": what `replay --pool`
// and `advise --pool` replayed as one run (trace/concatenate.hpp).
std::string pooled_runs_to_text(std::size_t runs, std::size_t complete_iterations);

}  // namespace ddpsim::sim
