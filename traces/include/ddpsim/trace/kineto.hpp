// Import of PyTorch profiler (Kineto) Chrome traces of a real Python DDP job.
#pragma once

#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace {

// Converts one Kineto trace file per rank (rank r = rank_files[r]) into a ddpsim trace.
// Throws TraceError naming the file and what is missing when a trace lacks what is needed.
//
// Each trace needs its sidecar (see kineto_sidecar_path), written by
// experiments/peer/python_ddp_profiled.py: torch 1.13's profiler export holds no message
// sizes, so parameters and the bucket layout come from there. Phases come from the
// record_function labels "ddpsim.iteration#N", "ddpsim.forward", "ddpsim.backward",
// "ddpsim.optimizer"; the k-th "c10d::allreduce_" / "gloo:all_reduce" inside an iteration's
// backward is bucket k's launch / transfer. The trace is not written: see write_trace.
Trace import_kineto(const std::vector<std::string>& rank_files);

// The sidecar of a trace: its name with the trailing ".json" replaced by ".ddpsim.json"
// ("run/rank-0.kineto.json" -> "run/rank-0.kineto.ddpsim.json"); ".ddpsim.json" is appended
// when the name does not end in ".json".
std::string kineto_sidecar_path(const std::string& trace_path);

}  // namespace ddpsim::trace
