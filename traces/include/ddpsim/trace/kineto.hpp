// Import of PyTorch profiler (Kineto) Chrome traces of a real Python DDP job.
#pragma once

#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace {

// Converts one profiler trace file per rank (rank r = rank_files[r]) into a ddpsim trace.
// Throws TraceError naming the file and what is missing when a trace lacks what is needed.
//
// Each file is a standard torch.profiler trace (.json or .json.gz): iterations from
// "ProfilerStep#N", each bucket's all-reduce from the c10d op and its NCCL kernel or Gloo
// worker span, the parameters from the AccumulateGrad events' shapes where the profile was
// recorded with record_shapes=True, else one pseudo-parameter per bucket
// (traces/src/kineto_standard.cpp).
// One file of a job of W > 1 ranks is copied to every rank (settings.replicated_from_rank).
// The trace is not written: see write_trace.
Trace import_kineto(const std::vector<std::string>& rank_files);

// What an import kept, for the reader of `ddp-trace import`, one line each: the steps (fewer
// than kFewProfiledSteps said to be few; those left out named, as under no_sync()), then what a
// bucket-cap what-if rests on: per-gradient parameters (exact, and the caps inferred) or one
// pseudo-parameter per bucket (approximate, and why).
constexpr long kFewProfiledSteps = 5;
std::string describe_import(const Trace& trace);

}  // namespace ddpsim::trace
