// The simulator's JSON documents as values, for documents that embed one in another (the replay
// report embeds its calibration, ddp-sim replay --json adds the run distribution, the timeout
// curve one distribution per point); the *_to_json functions are their text.
#pragma once

#include <nlohmann/json.hpp>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/monte_carlo.hpp"
#include "ddpsim/sim/report.hpp"

namespace ddpsim::sim {

// `timed_by_ladder`: its warnings as calibration_warnings gives them for a replay on a ladder.
nlohmann::json calibration_json(const Calibration& calibration, bool timed_by_ladder = false);
nlohmann::json distribution_json(const IterationDistribution& distribution);
nlohmann::json report_json(const ReplayReport& report);

}  // namespace ddpsim::sim
