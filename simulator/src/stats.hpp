// Small statistics shared by the workload extraction and the calibration.
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

namespace ddpsim::sim {

// Median (mean of the two middle values for an even count); 0 for no values.
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

}  // namespace ddpsim::sim
