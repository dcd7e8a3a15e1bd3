// Advice 2: the shortest safe collective timeout and what a real hang then costs (advise.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
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

double chi_square_quantile_even(int k, double q) {
  // P(χ²_{2k} <= x) = 1 − Σ_{j<k} e^(−y) y^j / j!, y = x / 2: each term in logs (k may be large).
  const auto cdf = [k](double x) {
    const double y = x / 2;
    if (y <= 0) return 0.0;
    double tail = 0;
    for (int j = 0; j < k; ++j) tail += std::exp(-y + j * std::log(y) - std::lgamma(j + 1.0));
    return 1 - tail;
  };
  double low = 0;
  double high = 2.0 * k + 20 * std::sqrt(2.0 * k) + 50;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double middle = 0.5 * (low + high);
    (cdf(middle) < q ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

void fit_tail(CollectiveWaits& waits, double per_occurrence_probability, double confidence) {
  const std::vector<double>& values = waits.waits_s;
  waits.probability = per_occurrence_probability;
  if (values.empty()) return;
  const double u = percentile_of(values, 0.5);
  std::vector<double> excess;
  for (double wait : values) {
    if (wait > u) excess.push_back(wait - u);
  }
  const auto n = static_cast<double>(values.size());
  const int k = static_cast<int>(excess.size());
  waits.fitted = true;
  waits.tail_threshold_s = u;
  waits.exceedances = k;
  waits.tail_scale_s = mean_of(excess);
  // 2kσ̂/σ ~ χ²(2k): σ <= 2kσ̂ / χ²_{1−c}(2k) with confidence c.
  waits.tail_scale_upper_s = k > 0 ? 2 * k * waits.tail_scale_s / chi_square_quantile_even(k, 1 - confidence) : 0;
  const double above = k / n;
  const double p = per_occurrence_probability;
  double tail = u;
  if (waits.tail_scale_upper_s > 0 && p > 0 && p < above) tail = u + waits.tail_scale_upper_s * std::log(above / p);
  waits.tail_s = std::max(tail, *std::max_element(values.begin(), values.end()));
  waits.extrapolated = p > 0 && p * n < 1;
  // No false timeout in m occurrences bounds P below −ln(1 − c) / m (c = 95 %: ~3 / m).
  if (p > 0 && waits.occurrences_per_iteration > 0) {
    waits.iterations_to_support = -std::log(1 - confidence) / p / waits.occurrences_per_iteration;
  }
}

namespace {

std::string ms(double seconds) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  return text;
}

std::string general(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

// What every timeout answer takes for granted (Note [timeout over every collective]).
std::vector<std::string> assumptions(double confidence) {
  return {
      "the recorded run's waits are the job's: same machine, ranks, backend, data and loop; OS jitter, I/O and "
      "data-loading stalls, preemption and network faults longer than any recorded are not in the trace",
      "a kind with fewer than " + std::to_string(kMinTailObservations) + " observations waits at most " +
          general(kFloorFactor) + "x the longer of its longest wait and the longest phase around it (a rank may wait out "
          "a peer's whole evaluation, checkpoint write or first iteration)",
      "a fitted kind's waits above their median are exponential; its scale is taken at its " +
          general(100 * confidence) + " % upper confidence bound",
      "P(false timeout) per day is split evenly over the fitted kinds (a union bound)",
      "collectives the job's loop adds that the recorded loop did not run (a logged loss's all-reduce, a barrier) "
      "are not covered"};
}

}  // namespace

TimeoutAdvice advise_timeout(const AdviceSetup& setup, const trace::Trace& trace, double epsilon,
                             double iterations_per_day, const std::vector<trace::DelayDistribution>& stall_model) {
  TimeoutAdvice advice;
  advice.epsilon = epsilon;
  advice.iterations_per_day_assumed = iterations_per_day <= 0;
  advice.iterations_per_day =
      iterations_per_day > 0 ? iterations_per_day
                             : (setup.median_iteration_s > 0 ? 86400.0 / setup.median_iteration_s : 0);
  for (const trace::DelayDistribution& d : stall_model) advice.stall_dist.push_back(trace::to_string(d));
  std::string gradient_model;
  if (stall_model.empty()) {
    gradient_model = "exponential tail of the per-iteration longest all-reduce wait above its median";
  } else {
    std::string given;
    for (const std::string& text : advice.stall_dist) given += (given.empty() ? "" : " ") + ("--stall-dist " + text);
    gradient_model = "the stall model given (" + given +
                     ", each rank independent), not the trace's stalls, on top of the median measured longest all-reduce wait";
  }
  advice.model = setup.model_description + "; false timeouts: every collective kind the trace shows; gradient all-reduces: " +
                 gradient_model + "; other kinds: their own waits";
  advice.assumes = assumptions(advice.confidence);
  advice.kinds = collective_waits(trace, steady_iterations(trace, setup.model.source_iterations), &advice.unaccounted);
  const auto gradient = std::find_if(advice.kinds.begin(), advice.kinds.end(),
                                     [](const CollectiveWaits& kind) { return kind.kind == "gradient_allreduce"; });
  if (gradient == advice.kinds.end() || advice.iterations_per_day <= 0) {
    advice.unavailable_reason = "the trace has no complete all-reduce to measure the ranks' waits";
    return advice;
  }
  advice.wait_samples = static_cast<int>(gradient->waits_s.size());
  if (advice.wait_samples < kMinAdviceIterations) {
    advice.unavailable_reason = "the trace has " + std::to_string(advice.wait_samples) +
                                " iteration(s) with gradient all-reduces after DDP's first; at least " +
                                std::to_string(kMinAdviceIterations) + " are needed (a tail fit wants " +
                                std::to_string(kMinTailObservations) + " or more)";
    advice.warnings.push_back("timeout not advised: " + advice.unavailable_reason);
    return advice;
  }
  advice.available = true;
  advice.wait_p50_s = percentile_of(gradient->waits_s, 0.5);
  advice.wait_max_s = *std::max_element(gradient->waits_s.begin(), gradient->waits_s.end());

  // ε over the fitted kinds; each kind's per-occurrence share from its occurrences per day:
  // P(no false timeout in a day) = (1 − p)^N ≥ 1 − ε_kind.
  const auto fitted = std::count_if(advice.kinds.begin(), advice.kinds.end(), [](const CollectiveWaits& kind) {
    return static_cast<int>(kind.waits_s.size()) >= kMinTailObservations;
  });
  const double epsilon_per_kind = epsilon / static_cast<double>(std::max<std::ptrdiff_t>(fitted, 1));
  constexpr double kFloor_s = 1e-3;
  for (CollectiveWaits& kind : advice.kinds) {
    const std::vector<double>& waits = kind.waits_s;
    const auto n = static_cast<int>(waits.size());
    kind.p50_s = percentile_of(waits, 0.5);
    kind.max_s = *std::max_element(waits.begin(), waits.end());
    kind.floor_s = kFloorFactor * kind.max_s;
    const double per_day = kind.occurrences_per_iteration * advice.iterations_per_day;
    const double p = per_day > 0 ? -std::expm1(std::log1p(-epsilon_per_kind) / per_day) : 0;
    const bool is_gradient = kind.kind == "gradient_allreduce";
    if (is_gradient) advice.per_iteration_probability = p;
    if (n >= kMinTailObservations) {
      fit_tail(kind, p, advice.confidence);
      kind.needed_s = std::max(kind.floor_s, kind.tail_s);
      if (kind.extrapolated) {
        advice.extrapolated = true;
        advice.iterations_to_support = std::max(advice.iterations_to_support, kind.iterations_to_support);
        advice.warnings.push_back(kind.kind + ": the bound claims P(false timeout) <= " + general(p) + " per occurrence from " +
                                  std::to_string(n) + " observations (1/n = " + general(1.0 / n) +
                                  "): it extrapolates the fitted tail; observing it would take about " +
                                  general(kind.iterations_to_support) + " iterations without a false timeout (" +
                                  general(100 * advice.confidence) + " %)");
      }
    } else {
      // Too few waits to say how they vary: a rank may wait out a peer's whole phase.
      kind.floor_s = kFloorFactor * std::max(kind.max_s, kind.phase_max_s);
      kind.probability = p;
      kind.needed_s = kind.floor_s;
      std::string support;
      if (p > 0 && kind.once_per_run) {
        // Once per run: more iterations of one run never show it again; more runs would.
        support = "; observing P(false timeout) <= " + general(p) + " per run would take about " +
                  general(-std::log(1 - advice.confidence) / p) + " runs";
      } else if (p > 0 && kind.occurrences_per_iteration > 0) {
        kind.iterations_to_support = -std::log(1 - advice.confidence) / p / kind.occurrences_per_iteration;
        support = "; observing P(false timeout) <= " + general(p) + " per occurrence would take about " +
                  general(kind.iterations_to_support) + " iterations";
      }
      advice.warnings.push_back(kind.kind + ": " + std::to_string(n) + " observation" + (n == 1 ? "" : "s") +
                                ", too few to fit a tail (" + std::to_string(kMinTailObservations) +
                                " needed): its need is " + general(kFloorFactor) + "x the longer of its longest wait (" +
                                ms(kind.max_s) + ") and the longest phase around it (" + ms(kind.phase_max_s) +
                                "), a floor with no probability attached" + support);
    }
    if (is_gradient) {
      advice.tail_fitted = kind.fitted;
      advice.tail_threshold_s = kind.tail_threshold_s;
      advice.tail_scale_s = kind.tail_scale_s;
      if (!stall_model.empty()) {
        // The wait a timeout bounds is the transfer and the usual spread (the median measured)
        // plus the stall of the rank the others wait for.
        advice.stall_quantile_s = stall_for_probability(stall_model, setup.model.world_size, p);
        kind.needed_s = advice.wait_p50_s + advice.stall_quantile_s;
        advice.measured_exceeds = advice.wait_max_s > kind.needed_s;
      }
    }
    kind.needed_s = std::max(kind.needed_s, kFloor_s);
    if (kind.bound) {
      advice.warnings.push_back(kind.kind + ": the trace shows the phase, not the collective in it: its length bounds the "
                                "wait, so this need errs long");
    }
    advice.covers.push_back(kind.kind + ": " + std::to_string(n) + " observed, longest " + ms(kind.max_s) + ", needs " +
                            ms(kind.needed_s) + (kind.fitted ? " (tail)" : " (floor)"));
    if (kind.needed_s > advice.timeout_s) {
      advice.timeout_s = kind.needed_s;
      advice.limiting_kind = kind.kind;
    }
  }
  advice.longest_between_collectives_s = longest_between_collectives_s(trace);
  advice.detection_time_s = advice.timeout_s + advice.longest_between_collectives_s;
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
