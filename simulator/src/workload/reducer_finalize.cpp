// Reducer::finalize_backward as a sequence of waits and copies (reducer_finalize.hpp).
#include "workload/reducer_finalize.hpp"

#include <algorithm>
#include <cmath>

#include "stats.hpp"

namespace ddpsim::sim {

double finalize_end_s(double autograd_done_s, const std::vector<double>& allreduce_end_s,
                      const std::vector<std::int64_t>& bucket_bytes, double seconds_per_byte) {
  double t = autograd_done_s;
  for (std::size_t b = 0; b < bucket_bytes.size(); ++b) {
    if (b < allreduce_end_s.size()) t = std::max(t, allreduce_end_s[b]);
    t += seconds_per_byte * static_cast<double>(bucket_bytes[b]);
  }
  return t;
}

double finalize_exposed_s(double autograd_done_s, const std::vector<double>& allreduce_end_s,
                          const std::vector<std::int64_t>& bucket_bytes, double seconds_per_byte) {
  double done = autograd_done_s;
  for (double end : allreduce_end_s) done = std::max(done, end);
  return std::max(0.0, finalize_end_s(autograd_done_s, allreduce_end_s, bucket_bytes, seconds_per_byte) - done);
}

double fit_finalize_seconds_per_byte(const std::vector<RecordedFinalize>& iterations,
                                     const std::vector<std::int64_t>& bucket_bytes) {
  std::int64_t total_bytes = 0;
  for (std::int64_t bytes : bucket_bytes) total_bytes += std::max<std::int64_t>(bytes, 0);
  if (total_bytes <= 0) return 0;
  std::vector<double> fitted;
  for (const RecordedFinalize& recorded : iterations) {
    const bool every_end = recorded.allreduce_end_s.size() == bucket_bytes.size() &&
                           std::all_of(recorded.allreduce_end_s.begin(), recorded.allreduce_end_s.end(),
                                       [](double end) { return end >= 0; });
    if (!every_end || !std::isfinite(recorded.tail_s)) continue;
    if (recorded.tail_s <= 0) {
      fitted.push_back(0);
      continue;
    }
    const auto exposed = [&](double per_byte) {
      return finalize_exposed_s(recorded.autograd_done_s, recorded.allreduce_end_s, bucket_bytes, per_byte);
    };
    // The last bucket's copy is always exposed, so tail / its bytes is a bound that reaches it.
    double high = recorded.tail_s / static_cast<double>(std::max<std::int64_t>(bucket_bytes.back(), 1));
    double low = 0;
    for (int grow = 0; grow < 200 && exposed(high) < recorded.tail_s; ++grow) high *= 2;  // 0 bytes last
    for (int step = 0; step < 60; ++step) {
      const double mid = 0.5 * (low + high);
      (exposed(mid) < recorded.tail_s ? low : high) = mid;
    }
    fitted.push_back(0.5 * (low + high));
  }
  return fitted.empty() ? 0 : median_of(fitted);
}

}  // namespace ddpsim::sim
