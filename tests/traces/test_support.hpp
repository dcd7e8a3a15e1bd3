// Shared helpers of the trace tests: file text and a small synthetic trace.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"
#include "temp_dir.hpp"

namespace ddpsim::trace::testing {

// The tests' one scratch directory (tests/common/temp_dir.hpp).
using TempDir = ddpsim::test_support::TempDir;

std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

// The metadata of FORMAT.md's worked example for one rank: 3 parameters (fc.weight 8 floats,
// fc.bias 2, out.weight 4), one bucket [2,1,0] in iteration 0, then buckets [2] and [1,0].
RunMeta example_meta(int rank, int world_size);

// Timings of one synthetic iteration, in ns relative to its begin; chosen by each test so
// that it can compute the expected summary by hand.
struct IterationPlan {
  std::int64_t forward_ns = 300'000;
  std::int64_t backward_ns = 600'000;  // backward_begin .. backward_end
  std::int64_t grad_ready_ns[3] = {100'000, 200'000, 200'400};  // params 2, 1, 0 after backward_begin
  std::int64_t allreduce_ns[2] = {200'000, 200'000};  // per bucket (bucket 1 starts when 0 ends)
  std::int64_t optimizer_ns = 50'000;
};

// A whole trace in FORMAT.md's example shape: `iterations` iterations per rank, iteration i of
// rank r starting at start_ns + i * 10 ms, following `plan`. Iteration 0 uses one bucket.
Trace example_trace(int world_size, int iterations, const IterationPlan& plan = {});
// The same with a plan per rank and iteration: plans[rank][iteration].
Trace example_trace(const std::vector<std::vector<IterationPlan>>& plans);

// Where iteration i of every rank begins in example traces.
inline std::int64_t example_iteration_begin_ns(std::int64_t iteration) {
  return 1'000'000 + iteration * 10'000'000LL;
}

}  // namespace ddpsim::trace::testing
