// Import of PyTorch profiler (Kineto) Chrome traces of a real Python DDP job.
#pragma once

#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace {

// Converts one profiler trace file per rank (rank r = rank_files[r]) into a ddpsim trace.
// Throws TraceError naming the file and what is missing when a trace lacks what is needed.
//
// A file with a sidecar beside it (see kineto_sidecar_path), written by
// experiments/peer/python_ddp_profiled.py, is read with it: torch 1.13's profiler export holds
// no message sizes, so parameters and the bucket layout come from there. Phases come from the
// record_function labels "ddpsim.iteration#N", "ddpsim.forward", "ddpsim.backward",
// "ddpsim.optimizer"; the k-th "c10d::allreduce_" / "gloo:all_reduce" inside an iteration's
// backward is bucket k's launch / transfer (traces/src/kineto_sidecar.cpp).
// A file without one is a standard torch.profiler trace (.json or .json.gz): iterations from
// "ProfilerStep#N", each bucket's all-reduce from the c10d op and its NCCL kernel or Gloo
// worker span, one pseudo-parameter per bucket (traces/src/kineto_standard.cpp).
// One file of a job of W > 1 ranks is copied to every rank (settings.replicated_from_rank).
// The trace is not written: see write_trace.
Trace import_kineto(const std::vector<std::string>& rank_files);

// The sidecar of a trace: its name with the trailing ".json" replaced by ".ddpsim.json"
// ("run/rank-0.kineto.json" -> "run/rank-0.kineto.ddpsim.json"); ".ddpsim.json" is appended
// when the name does not end in ".json".
std::string kineto_sidecar_path(const std::string& trace_path);

}  // namespace ddpsim::trace
