// Many replays of one what-if with different random stalls: the distribution of the job's
// iteration time, its throughput, and how often (and when) a timeout failed the job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"

namespace ddpsim::sim {

// The job's time of every iteration the replay completed, in iteration order: per
// iteration, the slowest rank's iteration_end − iteration_begin (as `ddp-trace summary`).
std::vector<double> job_iteration_times_s(const ReplayResult& result);

// Linear-interpolated percentile (q in [0, 1]) of unsorted values; 0 for none.
double percentile_of(std::vector<double> values, double q);

struct RunOutcome {
  std::vector<double> iteration_times_s;
  bool failed = false;
  double failure_time_s = 0;  // simulated clock at the failure
  std::string failure;
};

RunOutcome outcome_of(const ReplayResult& result);

struct IterationDistribution {
  int runs = 0;
  int failed_runs = 0;
  std::size_t iterations = 0;  // completed iterations pooled over every run
  double mean_s = 0;
  double p50_s = 0;
  double p90_s = 0;
  double p99_s = 0;
  double min_s = 0;
  double max_s = 0;
  double iterations_per_s = 0;  // 1 / mean
  double samples_per_s = 0;     // world × batch size / mean; 0 when the batch size is unknown
  double failure_probability = 0;
  double mean_time_to_failure_s = 0;  // over the failed runs; 0 when none failed
  // Every run's iteration times, pooled and sorted: the predicted distribution of one
  // iteration's time, draws of random stalls and (with a bootstrap) resampled compute included.
  std::vector<double> pooled_s;
};

// distribution_to_json writes pooled_s when it holds at most this many times.
constexpr std::size_t kPooledTimesInJson = 100000;

// samples_per_iteration: world size × per-rank batch size (0: unknown).
IterationDistribution summarize_runs(const std::vector<RunOutcome>& runs, double samples_per_iteration);

// world size × the trace's `batch_size` workload setting, 0 when it has none.
double samples_per_iteration(const WorkloadModel& model, int world_size);

// The spread of a prediction: the central `level` interval of the median iteration time over
// bootstrap replicates (runs that replay resampled source iterations, see
// ReplayOptions::resample_seed). It says how much the prediction depends on which measured
// iterations happened to be in the trace; machine drift between runs is not in it.
struct MedianInterval {
  int replicates = 0;
  double level = 0.9;
  double low_s = 0;
  double high_s = 0;
};

// Each replicate's median over the iterations it completed; quantiles interpolated linearly.
MedianInterval median_interval(const std::vector<RunOutcome>& replicates, double level = 0.9);
std::string interval_to_text(const MedianInterval& interval);

std::string distribution_to_text(const IterationDistribution& distribution);
std::string distribution_to_json(const IterationDistribution& distribution);

}  // namespace ddpsim::sim
