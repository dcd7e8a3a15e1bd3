// provenance.json: what produced an experiment's results (code, spec, machine, packages).
#pragma once

#include <string>
#include <vector>

#include "spec.hpp"

namespace ddpsim::experiment {

// Throws std::runtime_error when `path` records a different spec text: resuming into results
// of another spec would mix configurations in one summary.csv.
// With `predict_may_differ` (ddp-experiment run --repredict) the two may differ in their
// [predict] table only: the measurements stay those of the same jobs.
void check_same_spec(const std::string& path, const ExperimentSpec& spec, bool predict_may_differ = false);

// Writes (atomically) the provenance, appending this session to the "sessions" list of an
// existing file: git sha, host, kernel, package versions, date, command line.
void write_provenance(const std::string& path, const ExperimentSpec& spec,
                      const std::vector<std::string>& command_line, const std::string& bin_dir);

}  // namespace ddpsim::experiment
