// What the runner needs from `ddp-trace summary DIR --json` and `ddp-sim replay --json`
// (traces/include/ddpsim/trace/summary.hpp: the JSON mirrors struct Summary's field names).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddpsim::experiment {

struct TraceSummary {
  int world_size = 0;
  int complete_iterations = 0;
  double median_iteration_s = 0;  // 0 when no iteration completed
  std::vector<std::string> failures;  // "rank R iteration I bucket B: kind: message"
  std::vector<double> iteration_times_s;  // time_s of every complete iteration >= 1
};

// What the runner reads from `ddp-sim replay --json REPORT` (simulator/src/replay/report.cpp): the
// replay summarised the trace it predicted itself, so the runner does not run ddp-trace summary
// on it again.
struct ReplayReport {
  TraceSummary predicted;  // "predicted": the predicted trace's summary (trace::summary_to_json)
  // "interval": {"median_iteration_s": [lo, hi]}, the 90 % interval of the predicted median
  // with --runs N --bootstrap; nullopt without.
  std::optional<std::pair<double, double>> interval;
  // "run_to_run_interval": {"median_iteration_s": [lo, hi]}, that interval (or the prediction)
  // widened by the run-to-run spread of the baseline's runs given with --repeats; nullopt without.
  std::optional<std::pair<double, double>> run_to_run_interval;
  // "distribution": every Monte Carlo run's iteration times pooled (iteration_times_s) and
  // how many runs; empty / 0 when the report has none (one run, or too many times to list).
  std::vector<double> pooled_iteration_times_s;
  int runs = 0;
};
// Throws std::runtime_error naming `source` on JSON that is not such a report.
ReplayReport parse_replay_report(const std::string& json_text, const std::string& source);

// How far apart two samples' distributions are.
struct DistributionErrors {
  double ks = 0;           // two-sample Kolmogorov-Smirnov statistic
  double p50_error_pct = 0, p90_error_pct = 0, p99_error_pct = 0;  // (predicted - measured) / measured
};
// Quantiles interpolate linearly between order statistics (numpy's default). Both samples
// must be non-empty.
DistributionErrors compare_distributions(const std::vector<double>& measured,
                                         const std::vector<double>& predicted);
double quantile(std::vector<double> values, double q);

// Parses the JSON text; throws std::runtime_error naming `source` and the missing or
// mistyped field.
TraceSummary parse_trace_summary(const std::string& json_text, const std::string& source);

}  // namespace ddpsim::experiment
