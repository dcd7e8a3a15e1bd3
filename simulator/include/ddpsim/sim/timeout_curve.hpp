// The process-group timeout what-if: for each timeout T, how often a Monte Carlo of the same
// replay fails and how soon, and the smallest T whose failure probability is at most ε.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ddpsim/sim/monte_carlo.hpp"
#include "ddpsim/sim/monte_carlo_runs.hpp"
#include "ddpsim/sim/prepared_replay.hpp"

namespace ddpsim::sim {

struct TimeoutPoint {
  double timeout_s = 0;
  IterationDistribution distribution;
};

struct TimeoutCurve {
  std::string trace_dir;
  int runs = 0;
  double epsilon = 0;
  std::vector<TimeoutPoint> points;     // by increasing timeout
  std::optional<double> smallest_safe_s;  // the first T with P(fail) <= epsilon
};

// Throws RequestError (naming --timeouts or --epsilon) for timeouts that are not finite and
// positive, none at all, or an ε outside [0, 1]: callable before the trace is read.
void check_timeout_curve(const std::vector<double>& timeouts_s, double epsilon);

// Checks as above, then replays every timeout. Every timeout replays the same stall draws
// (seeds_of_run does not depend on T), so a longer timeout never fails a run a shorter one
// survived and the curve is monotone.
TimeoutCurve timeout_curve(PreparedReplay prepared, std::vector<double> timeouts_s, const MonteCarloPlan& plan,
                           double epsilon, const std::function<void()>& on_run_done = {});

std::string timeout_curve_to_text(const TimeoutCurve& curve);
std::string timeout_curve_to_csv(const TimeoutCurve& curve);  // a header and one row per timeout
std::string timeout_curve_to_json(const TimeoutCurve& curve);

}  // namespace ddpsim::sim
