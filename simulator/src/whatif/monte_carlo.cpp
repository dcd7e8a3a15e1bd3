// Iteration-time distributions over replays (monte_carlo.hpp).
#include "ddpsim/sim/monte_carlo.hpp"
#include "ddpsim/sim/json_values.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "stats.hpp"

namespace ddpsim::sim {

std::vector<double> job_iteration_times_s(const ReplayResult& result) {
  // The replay's events read as a trace, so that an iteration's time here is the summary's. A
  // result per class gives the same: the slowest class's rank is the slowest rank.
  trace::Trace replayed;
  replayed.ranks.resize(result.events.size());
  for (std::size_t r = 0; r < result.events.size(); ++r) replayed.ranks[r].events = result.events[r];
  std::vector<double> times;
  for (const trace::IterationTime& time : replayed.iteration_times()) {
    times.push_back(static_cast<double>(time.slowest_ns()) * 1e-9);
  }
  return times;
}

double percentile_of(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

RunOutcome outcome_of(const ReplayResult& result) {
  RunOutcome outcome;
  outcome.iteration_times_s = job_iteration_times_s(result);
  outcome.failed = !result.failure.empty();
  outcome.failure = result.failure;
  if (outcome.failed) outcome.failure_time_s = result.simulated_end_s;
  return outcome;
}

IterationDistribution summarize_runs(const std::vector<RunOutcome>& runs, double samples_per_iteration) {
  IterationDistribution distribution;
  distribution.runs = static_cast<int>(runs.size());
  std::vector<double> pooled;
  std::vector<double> failure_times;
  for (const RunOutcome& run : runs) {
    pooled.insert(pooled.end(), run.iteration_times_s.begin(), run.iteration_times_s.end());
    if (run.failed) failure_times.push_back(run.failure_time_s);
  }
  distribution.failed_runs = static_cast<int>(failure_times.size());
  distribution.iterations = pooled.size();
  if (!runs.empty()) {
    distribution.failure_probability = static_cast<double>(failure_times.size()) / static_cast<double>(runs.size());
  }
  distribution.mean_time_to_failure_s = mean_of(failure_times);
  if (pooled.empty()) return distribution;
  distribution.mean_s = mean_of(pooled);
  distribution.p50_s = percentile_of(pooled, 0.50);
  distribution.p90_s = percentile_of(pooled, 0.90);
  distribution.p99_s = percentile_of(pooled, 0.99);
  distribution.min_s = *std::min_element(pooled.begin(), pooled.end());
  distribution.max_s = *std::max_element(pooled.begin(), pooled.end());
  std::sort(pooled.begin(), pooled.end());
  distribution.pooled_s = std::move(pooled);
  if (distribution.mean_s > 0) {
    distribution.iterations_per_s = 1.0 / distribution.mean_s;
    distribution.samples_per_s = samples_per_iteration / distribution.mean_s;
  }
  return distribution;
}

double samples_per_iteration(const WorkloadModel& model, int world_size) {
  auto found = model.source_meta.workload.find("batch_size");
  if (found == model.source_meta.workload.end()) return 0;
  try {
    return std::stod(found->second) * world_size;
  } catch (const std::exception&) {
    return 0;
  }
}

MedianInterval median_interval(const std::vector<RunOutcome>& replicates, double level) {
  MedianInterval interval;
  interval.level = level;
  std::vector<double> medians;
  for (const RunOutcome& run : replicates) {
    if (!run.iteration_times_s.empty()) medians.push_back(median_of(run.iteration_times_s));
  }
  interval.replicates = static_cast<int>(medians.size());
  interval.low_s = percentile_of(medians, (1 - level) / 2);
  interval.high_s = percentile_of(medians, 1 - (1 - level) / 2);
  return interval;
}

std::string interval_to_text(const MedianInterval& interval) {
  std::ostringstream text;
  text << std::setprecision(6) << "median iteration, " << interval.level * 100
       << " % bootstrap interval: [" << interval.low_s * 1e3 << ", " << interval.high_s * 1e3
       << "] ms over " << interval.replicates << " resampled runs\n";
  return text.str();
}

std::string distribution_to_text(const IterationDistribution& d) {
  std::ostringstream text;
  text << std::setprecision(6);
  text << "iteration time over " << d.runs << " run" << (d.runs == 1 ? "" : "s") << " (" << d.iterations
       << " iterations)\n";
  text << "  mean " << d.mean_s * 1e3 << " ms  p50 " << d.p50_s * 1e3 << " ms  p99 " << d.p99_s * 1e3
       << " ms  min " << d.min_s * 1e3 << " ms  max " << d.max_s * 1e3 << " ms\n";
  text << "  throughput " << d.iterations_per_s << " iterations/s";
  if (d.samples_per_s > 0) text << ", " << d.samples_per_s << " samples/s";
  text << "\n";
  if (d.failed_runs > 0) {
    text << "  failed runs " << d.failed_runs << "/" << d.runs << " (P(fail) " << d.failure_probability
         << "), mean time to failure " << d.mean_time_to_failure_s << " s\n";
  }
  return text.str();
}

nlohmann::json distribution_json(const IterationDistribution& d) {
  nlohmann::json json = {
      {"runs", d.runs},
      {"failed_runs", d.failed_runs},
      {"iterations", d.iterations},
      {"mean_s", d.mean_s},
      {"p50_s", d.p50_s},
      {"p90_s", d.p90_s},
      {"p99_s", d.p99_s},
      {"min_s", d.min_s},
      {"max_s", d.max_s},
      {"iterations_per_s", d.iterations_per_s},
      {"samples_per_s", d.samples_per_s},
      {"failure_probability", d.failure_probability},
      {"mean_time_to_failure_s", d.mean_time_to_failure_s},
  };
  if (d.pooled_s.size() <= kPooledTimesInJson) json["iteration_times_s"] = d.pooled_s;
  return json;
}

std::string distribution_to_json(const IterationDistribution& d) { return distribution_json(d).dump(2); }

}  // namespace ddpsim::sim
