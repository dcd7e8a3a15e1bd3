// Rank 0's progress lines: at most one a second, so printing never shows up in timings.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace ddpsim::runtime {

class ProgressMeter {
 public:
  using Clock = std::chrono::steady_clock;

  // `samples_per_iteration` counts every rank (batch size x world size).
  ProgressMeter(std::int64_t total_iterations, std::int64_t samples_per_iteration,
                std::FILE* out);

  // Call after each iteration; true when a line is due (then call report()).
  bool due(Clock::time_point now) const;
  // "iter 40/100  12.3 it/s  1574 samples/s  loss 0.5123": rates since the previous line.
  void report(std::int64_t iterations_done, double loss, Clock::time_point now);
  // The closing summary over the whole run, with the median time of one training step
  // (benchmark scripts read "median step <ms> ms").
  void finish(std::int64_t iterations_done, double loss, double median_step_s,
              Clock::time_point now);

 private:
  std::int64_t total_;
  std::int64_t samples_per_iteration_;
  std::FILE* out_;
  Clock::time_point start_;
  Clock::time_point last_;
  std::int64_t last_done_ = 0;
};

}  // namespace ddpsim::runtime
