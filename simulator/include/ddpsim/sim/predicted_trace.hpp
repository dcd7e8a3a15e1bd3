// The predicted run, in the trace format every trace tool reads (traces/FORMAT.md).
#pragma once

#include <string>

#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/model.hpp"
#include "ddpsim/trace/summary.hpp"

namespace ddpsim::sim {

// One rank file per simulated rank: the source trace's metadata with source "simulated",
// backend "simgrid", the replayed bucket layout from iteration 0, and the simulation's
// settings (algorithm, platform, α, β, compute mode, SimGrid configuration) in `settings`.
// A result per class is written out per rank (per_rank).
trace::Trace make_predicted_trace(const WorkloadModel& model, const ReplayOptions& options,
                                  const ReplayResult& result);

// trace::summarize(make_predicted_trace(...)), without writing out the ranks of a result per
// class: its trace holds one rank per class (trace::summarize's class form).
trace::Summary summarize_prediction(const WorkloadModel& model, const ReplayOptions& options,
                                    const ReplayResult& result);

}  // namespace ddpsim::sim
