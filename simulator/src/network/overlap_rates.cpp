// The all-reduce rate while backward compute runs and after it (calibrate.hpp).
//
// Why two rates: where communication needs the same processors as compute (Gloo on the CPU
// cores that run autograd; NCCL kernels sharing SMs and memory bandwidth with compute kernels),
// an all-reduce launched during backward goes slower than one launched after it. One rate
// fitted over both is too fast for the buckets hidden behind compute and too slow for the tail
// that is not, which is the part that decides the iteration time. See Note [two rates] in
// docs/model.md.
#include <algorithm>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "ddpsim/sim/calibrate.hpp"
#include "workload/collective_windows.hpp"
#include "stats.hpp"

namespace ddpsim::sim {


namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;

std::vector<Interval> clipped(const std::vector<Interval>& intervals, std::int64_t low, std::int64_t high) {
  std::vector<Interval> inside;
  for (const auto& [begin, end] : intervals) {
    const std::int64_t b = std::max(begin, low);
    const std::int64_t e = std::min(end, high);
    if (e > b) inside.emplace_back(b, e);
  }
  return inside;
}

// One iteration's all-reduces (collective_windows) and the time the last rank's autograd
// finished (its last bucket became ready).
struct IterationWindows {
  std::vector<Interval> windows;
  std::vector<std::int64_t> bytes;
  std::int64_t compute_done_ns = std::numeric_limits<std::int64_t>::min();
};

}  // namespace

OverlapRates fit_overlap_rates(const trace::Trace& trace) {
  OverlapRates rates;
  const std::vector<std::int64_t> iterations = trace::without_warmup(trace.complete_iterations());
  std::vector<trace::Timelines> timelines;  // [rank]
  for (const trace::RankTrace& rank : trace.ranks) timelines.push_back(trace::build_timelines(rank));
  const std::map<std::int64_t, std::int64_t> compute_done = autograd_done_ns(timelines, iterations);
  std::vector<IterationWindows> per_iteration;
  for (const auto& [iteration, windows] : collective_windows(timelines, iterations)) {
    auto done = compute_done.find(iteration);
    if (done == compute_done.end()) continue;
    IterationWindows item;
    item.compute_done_ns = done->second;
    for (const CollectiveWindow& window : windows) {
      if (window.bytes <= 0 || window.end_ns <= window.begin_ns) continue;
      item.windows.emplace_back(window.begin_ns, window.end_ns);
      item.bytes.push_back(window.bytes);
    }
    if (!item.windows.empty()) per_iteration.push_back(std::move(item));
  }

  // During backward: the all-reduces that ended before autograd did, bytes over the time any
  // of them was in flight (Gloo runs two at once, as in allreduce_busy_spans).
  std::vector<double> busy_s_per_byte;
  std::vector<double> busy_two;  // the fraction of that time with two or more in flight
  for (const IterationWindows& item : per_iteration) {
    std::vector<Interval> before;
    std::int64_t bytes = 0;
    for (std::size_t i = 0; i < item.windows.size(); ++i) {
      if (item.windows[i].second > item.compute_done_ns) continue;
      before.push_back(item.windows[i]);
      bytes += item.bytes[i];
    }
    const std::int64_t in_flight_ns = union_length_ns(before);
    if (bytes > 0 && in_flight_ns > 0) {
      busy_s_per_byte.push_back(static_cast<double>(in_flight_ns) * 1e-9 / static_cast<double>(bytes));
      busy_two.push_back(static_cast<double>(overlapped_length_ns(before)) / static_cast<double>(in_flight_ns));
    }
  }
  rates.busy_iterations = static_cast<int>(busy_s_per_byte.size());
  if (busy_s_per_byte.size() < kMinOverlapIterations) return rates;
  const double busy = median_of(busy_s_per_byte);

  // After backward: what the iteration's all-reduces had left when autograd finished (their
  // in-flight time before it, at the rate during backward, went through already), over the
  // time any was in flight after it.
  std::vector<double> free_s_per_byte;
  std::vector<double> free_two;
  for (const IterationWindows& item : per_iteration) {
    std::int64_t bytes = 0;
    for (std::int64_t b : item.bytes) bytes += b;
    const double before_s =
        static_cast<double>(union_length_ns(clipped(item.windows, std::numeric_limits<std::int64_t>::min(), item.compute_done_ns))) * 1e-9;
    const std::vector<Interval> after = clipped(item.windows, item.compute_done_ns, std::numeric_limits<std::int64_t>::max());
    const double after_s = static_cast<double>(union_length_ns(after)) * 1e-9;
    const double left = static_cast<double>(bytes) - before_s / busy;
    // Less than a tenth of the bytes after backward: too little to measure a rate on.
    if (after_s > 0 && left > 0.1 * static_cast<double>(bytes)) {
      free_s_per_byte.push_back(after_s / left);
      free_two.push_back(static_cast<double>(overlapped_length_ns(after)) * 1e-9 / after_s);
    }
  }
  rates.free_iterations = static_cast<int>(free_s_per_byte.size());
  if (free_s_per_byte.size() < kMinOverlapIterations) return rates;
  rates.busy_s_per_byte = busy;
  rates.free_s_per_byte = median_of(free_s_per_byte);
  rates.busy_two_in_flight = median_of(busy_two);
  rates.free_two_in_flight = median_of(free_two);
  return rates;
}

}  // namespace ddpsim::sim
