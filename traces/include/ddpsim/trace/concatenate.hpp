// Several measured runs of one configuration as one trace: the iterations of each, one run after
// another.
//
// Why: on a shared machine one run's speed drifts from the next's by more than the effects a
// what-if asks about, and a replay of one baseline run inherits that run's speed (Note
// [run-to-run drift] in docs/model.md). Replayed together, five runs of the baseline give a
// prediction at the machine's typical speed; the per-iteration compute model draws from every
// run's iterations, and each iteration keeps its ranks' correlation.
#pragma once

#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace {

// `runs[0]` whole, then each later run's complete iterations without its warm-up (without_warmup),
// renumbered to follow on and shifted in time to begin 1 ms after the previous run's last event
// (every rank by the same amount, so ranks stay aligned; runs of other hosts or boots have
// unrelated clocks). Iterations a run did not complete on every rank are left out, its failure
// with them. A bucket layout that differs from the one in force gets its own entry in
// bucket_assignments. Metadata are runs[0]'s. TraceError when `runs` is empty or the runs'
// world sizes differ; the caller checks that they are runs of one configuration
// (configuration.hpp).
Trace concatenate_runs(const std::vector<Trace>& runs);

}  // namespace ddpsim::trace
