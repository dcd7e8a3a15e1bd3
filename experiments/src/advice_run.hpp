// Runs an [advice] experiment: jobs that act on `ddp-sim advise`'s answer for a baseline run
// of the same job, and OUT/NAME/advice.csv, one row per job (advice_check.hpp's columns).
//   timeout     per repetition: the baseline ([workload] as given, e.g. with --eval-every and
//               --checkpoint-every) is advised; [advice] follow_runs jobs of follow_factor x its
//               iterations run with the advised --timeout (a failure is a false timeout), and
//               hang_runs jobs with the advised --timeout and --delay HANG_RANK=MS@ITER, MS =
//               hang_stall_factor x the timeout (a hung rank: its detection time is measured).
//   bucket      per [grid] bucket_cap_mb (the trace's own cap): the baseline is advised, then
//               `repetitions` pairs of jobs at the own cap and at the cap compared (the advised
//               one, or with "keep yours" the fastest other layout searched), interleaved
//               (own other, other own, ...), so drift hits both caps alike.
//   stragglers  every [grid] point (a --slowdown setting) x repetition in the grid's interleaved
//               order, each run advised: the ranks slowed and the ranks named, side by side.
// It starts over on every call (each run depends on its baseline's advice): the previous
// advice.csv, traces, logs and advice files of OUT/NAME are removed first.
#pragma once

#include <ostream>

#include "runner.hpp"
#include "spec.hpp"

namespace ddpsim::experiment {

// The exit status as run_experiment's: 0 every job ran (a false timeout or a detected hang is
// an outcome, not an error), 1 some job or advise call broke (its row says why), 130 interrupted.
int run_advice_experiment(const ExperimentSpec& spec, const RunOptions& options, std::ostream& out,
                          std::ostream& err);

}  // namespace ddpsim::experiment
