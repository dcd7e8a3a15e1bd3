// Helpers of the multi-process runtime tests that assert (gtest): a job that must succeed, and
// the largest difference between two parameter dumps.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "launched_job.hpp"
#include "param_dump.hpp"

namespace ddpsim::runtime::testing {

inline double max_difference(const Dump& a, const Dump& b) {
  double worst = 0;
  for (const auto& [key, values] : a) worst = std::max(worst, max_abs_difference(values, b.at(key)));
  return worst;
}

// ddp-launch of the small MLP job train_command makes, expected to exit 0.
inline JobResult run_ok(const TempDir& dir, const std::string& tag, const std::vector<std::string>& extra,
                        int nproc = 2) {
  const JobResult job = launch(train_command(dir, tag, extra), dir, nproc, tag);
  EXPECT_EQ(job.exit_code, 0) << tag << ":\n" << job.output;
  return job;
}

}  // namespace ddpsim::runtime::testing
