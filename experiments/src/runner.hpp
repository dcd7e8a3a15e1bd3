// Runs an experiment: every pending point × repetition, in interleaved order, each as a real
// job followed by its predictions, one group of summary.csv rows per run.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "grid.hpp"
#include "results.hpp"
#include "spec.hpp"

namespace ddpsim::experiment {

struct RunOptions {
  std::string out_root = "results";  // results go to OUT_ROOT/NAME/
  std::string bin_dir;               // where ddp-launch, ddp-train, ddp-sim, ddp-trace live
  std::string testbed_script = "scripts/testbed.sh";  // for specs with [launch] testbed_rate
  std::string corun_script = "experiments/peer/corun_bench.sh";  // for [predict] corun_profile
  std::string resume_script = ".venv/bin/ddpsim-sleep-resume-cost";  // for [predict] resume_profile
  bool dry_run = false;              // print the commands, run nothing, write nothing
  // Predict every finished run again from its kept trace with this spec's [predict], which
  // may differ from the one the results came from (nothing else may): a model compared with
  // another on the same measurements. The runs are not measured again.
  bool repredict = false;
  bool progress_bar = false;         // redraw a bar (stderr is a terminal) instead of lines
  std::vector<std::string> command_line;  // for provenance
};

// Returns the exit status: 0 all runs ok, 1 some run ended in status "error" (its rows say
// why; a rerun retries it), 130 interrupted. Throws SpecError/std::runtime_error for problems
// that stop the experiment before it starts (unreadable results, spec mismatch).
int run_experiment(const ExperimentSpec& spec, const RunOptions& options, std::ostream& out,
                   std::ostream& err);

// The configuration columns of a point's rows (config_columns(): experiment, world_size, caps,
// skew, …), as text from the spec.
Row config_row(const ExperimentSpec& spec, const Point& point);

}  // namespace ddpsim::experiment
