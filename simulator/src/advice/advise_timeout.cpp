// Advice 2: the shortest safe collective timeout and what a real hang then costs (advise.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <sstream>
#include <tuple>

#include "ddpsim/sim/advise.hpp"
#include "ddpsim/trace/timeline.hpp"
#include "stats.hpp"

namespace ddpsim::sim {

std::vector<double> allreduce_waits_s(const trace::Trace& trace, const std::vector<std::int64_t>& iterations) {
  const std::set<std::int64_t> wanted(iterations.begin(), iterations.end());
  std::map<std::int64_t, double> longest;  // iteration → longest wait
  for (const trace::RankTrace& rank : trace.ranks) {
    // Each all-reduce as the timelines pair it: a begin with the next end of its bucket.
    for (const auto& [iteration, timeline] : trace::build_timelines(rank)) {
      if (!wanted.count(iteration)) continue;
      for (const trace::BucketAllreduce& allreduce : timeline.allreduces) {
        double& wait = longest[iteration];
        wait = std::max(wait, static_cast<double>(allreduce.interval.duration_ns()) * 1e-9);
      }
    }
  }
  std::vector<double> waits;
  for (const auto& [iteration, wait] : longest) waits.push_back(wait);
  return waits;
}

double timeout_for_probability(const std::vector<double>& waits_s, double per_iteration_probability,
                               double* threshold_s, double* scale_s) {
  constexpr double kFloor_s = 1e-3;
  if (waits_s.empty()) return kFloor_s;
  const double u = percentile_of(waits_s, 0.5);
  std::vector<double> excess;
  for (double wait : waits_s) {
    if (wait > u) excess.push_back(wait - u);
  }
  const double above = static_cast<double>(excess.size()) / static_cast<double>(waits_s.size());
  const double sigma = mean_of(excess);  // the exponential's maximum-likelihood scale
  if (threshold_s != nullptr) *threshold_s = u;
  if (scale_s != nullptr) *scale_s = sigma;
  double timeout = u;
  if (sigma > 0 && per_iteration_probability > 0 && per_iteration_probability < above) {
    timeout = u + sigma * std::log(above / per_iteration_probability);
  }
  const double longest = *std::max_element(waits_s.begin(), waits_s.end());
  return std::max({timeout, longest, kFloor_s});
}

std::string timeout_line(double timeout_s) {
  std::ostringstream line;
  line << "timeout=timedelta(seconds=" << std::ceil(timeout_s * 1e3) / 1e3 << ")";
  return line.str();
}

namespace {

// P(stall > x ms) of one distribution.
double survival(const trace::DelayDistribution& d, double x_ms) {
  using Kind = trace::DelayDistribution::Kind;
  switch (d.kind) {
    case Kind::Exponential:
      return x_ms <= 0 ? 1.0 : std::exp(-x_ms / d.a);
    case Kind::LogNormal:
      if (x_ms <= 0) return 1.0;
      if (d.b == 0) return x_ms < std::exp(d.a) ? 1.0 : 0.0;
      return 0.5 * std::erfc((std::log(x_ms) - d.a) / (d.b * std::sqrt(2.0)));
    case Kind::Uniform:
      if (x_ms < d.a) return 1.0;
      if (x_ms >= d.b) return 0.0;
      return (d.b - x_ms) / (d.b - d.a);
  }
  return 0.0;
}

// P(the longest stall of any rank > x ms): every rank's stall independent.
double any_stall_beyond(const std::vector<const trace::DelayDistribution*>& per_rank, double x_ms) {
  // 1 - prod(1 - S) as -expm1(sum log1p(-S)): exact for the tiny probabilities a timeout targets.
  double log_none = 0.0;
  for (const trace::DelayDistribution* d : per_rank) {
    if (d != nullptr) log_none += std::log1p(-survival(*d, x_ms));
  }
  return -std::expm1(log_none);
}

// Replays a few iterations with `hang_rank` stalled for good at the second one; the time from
// its stall to the first rank's timeout. NaN when no rank timed out.
double time_to_detect_hang(const AdviceSetup& setup, int hang_rank, double timeout_s) {
  ReplayOptions options = setup.options;
  options.iterations = std::min<std::int64_t>(3, options.iterations);
  options.timeout_s = timeout_s;
  trace::FixedDelay hang;
  hang.rank = hang_rank;
  hang.ms = (100 * timeout_s + 3600) * 1e3;
  hang.iteration = setup.model.first_source_iteration() + std::min<std::int64_t>(1, options.iterations - 1);
  options.skew.delays.push_back(hang);
  const ReplayResult result = replay_isolated(setup.model, options);
  if (result.failure.empty()) return std::nan("");
  for (const trace::Event& event : result.events.at(static_cast<std::size_t>(hang_rank))) {
    if (event.type == trace::EventType::Delay) return result.simulated_end_s - static_cast<double>(event.t_ns) * 1e-9;
  }
  return std::nan("");
}

}  // namespace

double stall_for_probability(const std::vector<trace::DelayDistribution>& stalls, int world_size,
                             double per_iteration_probability) {
  std::vector<const trace::DelayDistribution*> per_rank(static_cast<std::size_t>(std::max(world_size, 0)), nullptr);
  for (const trace::DelayDistribution& d : stalls) {
    if (d.rank != trace::kAllRanks && (d.rank < 0 || d.rank >= world_size)) {
      throw std::invalid_argument("--stall-dist " + trace::to_string(d) + ": expected a rank below the trace's world size " +
                                  std::to_string(world_size));
    }
    for (int r = 0; r < world_size; ++r) {
      if (d.rank != trace::kAllRanks && d.rank != r) continue;
      if (per_rank[static_cast<std::size_t>(r)] != nullptr) {
        throw std::invalid_argument("--stall-dist " + trace::to_string(d) + ": expected one distribution per rank, got two for rank " +
                                    std::to_string(r));
      }
      per_rank[static_cast<std::size_t>(r)] = &d;
    }
  }
  const double p = per_iteration_probability;
  if (any_stall_beyond(per_rank, 0) <= p) return 0;
  // The smallest x with P(any stall > x) <= p: double an upper bound, then bisect.
  double low = 0;
  double high = 1;
  for (int i = 0; i < 2000 && any_stall_beyond(per_rank, high) > p; ++i) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double middle = 0.5 * (low + high);
    (any_stall_beyond(per_rank, middle) > p ? low : high) = middle;
  }
  return high * 1e-3;  // ms -> s
}

TimeoutAdvice advise_timeout(const AdviceSetup& setup, const trace::Trace& trace, double epsilon,
                             double iterations_per_day, const std::vector<trace::DelayDistribution>& stall_model) {
  TimeoutAdvice advice;
  advice.epsilon = epsilon;
  advice.iterations_per_day_assumed = iterations_per_day <= 0;
  advice.iterations_per_day =
      iterations_per_day > 0 ? iterations_per_day
                             : (setup.median_iteration_s > 0 ? 86400.0 / setup.median_iteration_s : 0);
  for (const trace::DelayDistribution& d : stall_model) advice.stall_dist.push_back(trace::to_string(d));
  if (stall_model.empty()) {
    advice.model = setup.model_description +
                   "; false timeouts: exponential tail of the per-iteration longest all-reduce wait above its median";
  } else {
    std::string given;
    for (const std::string& text : advice.stall_dist) given += (given.empty() ? "" : " ") + ("--stall-dist " + text);
    advice.model = setup.model_description + "; false timeouts: the stall model given (" + given +
                   ", each rank independent), not the trace's stalls, on top of the median measured longest all-reduce wait";
  }
  const std::vector<double> waits = allreduce_waits_s(trace, setup.model.source_iterations);
  advice.wait_samples = static_cast<int>(waits.size());
  if (waits.empty() || advice.iterations_per_day <= 0) {
    advice.unavailable_reason = "the trace has no complete all-reduce to measure the ranks' waits";
    return advice;
  }
  advice.available = true;
  advice.wait_p50_s = percentile_of(waits, 0.5);
  advice.wait_max_s = *std::max_element(waits.begin(), waits.end());
  // P(no false timeout in a day) = (1 − p)^N ≥ 1 − ε.
  advice.per_iteration_probability = -std::expm1(std::log1p(-epsilon) / advice.iterations_per_day);
  if (stall_model.empty()) {
    advice.timeout_s = timeout_for_probability(waits, advice.per_iteration_probability, &advice.tail_threshold_s,
                                               &advice.tail_scale_s);
  } else {
    // The wait a timeout bounds is the transfer and the usual spread (the median measured)
    // plus the stall of the rank the others wait for.
    constexpr double kFloor_s = 1e-3;
    advice.stall_quantile_s = stall_for_probability(stall_model, setup.model.world_size, advice.per_iteration_probability);
    advice.timeout_s = std::max(advice.wait_p50_s + advice.stall_quantile_s, kFloor_s);
    advice.measured_exceeds = advice.wait_max_s > advice.timeout_s;
  }
  advice.hang_rank = setup.model.world_size - 1;
  advice.time_to_detect_s = time_to_detect_hang(setup, advice.hang_rank, advice.timeout_s);
  ReplayOptions options = setup.options;
  options.timeout_s = advice.timeout_s;
  // With a given model, the check replays those stalls (the replay's own --delay-dist draws).
  for (const trace::DelayDistribution& d : stall_model) options.skew.distributions.push_back(d);
  advice.replay_survives = replay_isolated(setup.model, options).failure.empty();
  return advice;
}

}  // namespace ddpsim::sim
