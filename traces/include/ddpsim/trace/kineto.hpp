// Import of PyTorch profiler (Kineto) Chrome traces of a real Python DDP job.
#pragma once

#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace {

// Converts one Kineto trace file per rank (rank r = rank_files[r]) into a ddpsim trace.
// Throws TraceError naming the file and what is missing when a trace lacks what is needed.
Trace import_kineto(const std::vector<std::string>& rank_files);

}  // namespace ddpsim::trace
