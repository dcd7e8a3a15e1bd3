#include "workload/measured_pace.hpp"

#include <algorithm>
#include <utility>

#include "ddpsim/sim/workload_model.hpp"

namespace ddpsim::sim {

MeasuredPace::MeasuredPace(const std::vector<trace::Timelines>& timelines,
                           const std::function<double(double)>& core_slowdown, int trace_ranks) {
  const auto pace_of = [&](int computing) { return shared_core_pace(core_slowdown, trace_ranks, std::max(computing, 1)); };
  alone_pace_ = pace_of(1);
  std::vector<std::pair<std::int64_t, int>> edges;  // (t, +1 a rank starts computing, -1 it stops)
  const auto add = [&edges](std::int64_t begin, std::int64_t end) {
    if (begin < 0 || end <= begin) return;
    edges.emplace_back(begin, +1);
    edges.emplace_back(end, -1);
  };
  for (const trace::Timelines& rank : timelines) {
    for (const auto& [iteration, timeline] : rank) {
      add(timeline.forward.begin, timeline.forward.end);
      std::int64_t autograd_end = timeline.last_grad_ready;
      for (const auto& [bucket, t_ns] : timeline.bucket_ready) autograd_end = std::max(autograd_end, t_ns);
      add(timeline.backward.begin, autograd_end);
      add(timeline.optimizer.begin, timeline.optimizer.end);
    }
  }
  std::sort(edges.begin(), edges.end());
  int computing = 0;
  for (std::size_t i = 0; i < edges.size();) {
    const std::int64_t t_ns = edges[i].first;
    for (; i < edges.size() && edges[i].first == t_ns; ++i) computing += edges[i].second;
    const double before = at_ns_.empty() ? 0.0
                                         : before_ns_.back() + static_cast<double>(t_ns - at_ns_.back()) * pace_.back();
    at_ns_.push_back(t_ns);
    before_ns_.push_back(before);
    pace_.push_back(pace_of(computing));
  }
}

double MeasuredPace::integral_ns(std::int64_t t_ns) const {
  if (at_ns_.empty()) return static_cast<double>(t_ns) * alone_pace_;
  const auto next = std::upper_bound(at_ns_.begin(), at_ns_.end(), t_ns);
  if (next == at_ns_.begin()) return static_cast<double>(t_ns - at_ns_.front()) * alone_pace_;
  const auto i = static_cast<std::size_t>(next - at_ns_.begin()) - 1;
  return before_ns_[i] + static_cast<double>(t_ns - at_ns_[i]) * pace_[i];
}

double MeasuredPace::work_s(std::int64_t from_ns, std::int64_t to_ns) const {
  if (to_ns <= from_ns) return 0;
  return (integral_ns(to_ns) - integral_ns(from_ns)) * 1e-9;
}

}  // namespace ddpsim::sim
