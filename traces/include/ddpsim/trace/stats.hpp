// The statistics every part of ddpsim reports with, defined once so that a "median" printed by
// ddp-train, ddp-trace summary and ddp-sim is the same number for the same values.
#pragma once

#include <algorithm>
#include <limits>
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

// How far a prediction is from a measurement, as a fraction: (predicted - measured) / measured;
// NaN when measured is 0. The one definition of "error" in ddpsim: ddp-sim replay's report, the
// experiment runner's error_pct column (x 100) and its distribution errors all use it, and
// ddpsim-plot reads that column instead of recomputing it.
inline double relative_error(double predicted, double measured) {
  if (measured == 0) return std::numeric_limits<double>::quiet_NaN();
  return (predicted - measured) / measured;
}

}  // namespace ddpsim::trace
