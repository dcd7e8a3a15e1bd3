// The statistics every part of ddpsim reports with, defined once so that a "median" printed by
// ddp-train, ddp-trace summary and ddp-sim is the same number for the same values.
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

namespace ddpsim::trace {

// Median: the middle value, or the mean of the two middle values for an even count (as
// Python's statistics.median and numpy.median); 0 for no values.
inline double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(middle), values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<long>(middle));
  return (lower + upper) / 2;
}

inline double mean_of(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace ddpsim::trace
