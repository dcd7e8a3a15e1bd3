// The timeout what-if (timeout_curve.hpp).
#include "ddpsim/sim/timeout_curve.hpp"
#include "ddpsim/sim/json_values.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace ddpsim::sim {

void check_timeout_curve(const std::vector<double>& timeouts_s, double epsilon) {
  if (timeouts_s.empty()) throw RequestError("--timeouts: expected at least one timeout in seconds");
  for (double timeout : timeouts_s) {
    // A replay's timeout must be finite (0 means none), so inf is refused here by name.
    if (!std::isfinite(timeout) || timeout <= 0) {
      std::ostringstream value;
      value << timeout;
      throw RequestError("--timeouts: expected finite positive seconds, got " + value.str());
    }
  }
  if (!(epsilon >= 0 && epsilon <= 1)) throw RequestError("--epsilon: expected a probability in [0, 1]");
}

TimeoutCurve timeout_curve(PreparedReplay prepared, std::vector<double> timeouts_s, const MonteCarloPlan& plan,
                           double epsilon, const std::function<void()>& on_run_done) {
  check_timeout_curve(timeouts_s, epsilon);
  std::sort(timeouts_s.begin(), timeouts_s.end());
  TimeoutCurve curve;
  curve.trace_dir = prepared.measured.dir;
  curve.runs = plan.runs;
  curve.epsilon = epsilon;
  const double samples = samples_per_iteration(prepared.model, prepared.world_size());
  for (double timeout : timeouts_s) {
    prepared.options.timeout_s = timeout;
    const IterationDistribution distribution =
        summarize_runs(run_monte_carlo(prepared, plan, nullptr, on_run_done), samples);
    curve.points.push_back({timeout, distribution});
    if (!curve.smallest_safe_s && distribution.failure_probability <= epsilon) curve.smallest_safe_s = timeout;
  }
  return curve;
}

std::string timeout_curve_to_text(const TimeoutCurve& curve) {
  std::ostringstream text;
  text << "timeout curve (" << curve.runs << (curve.runs == 1 ? " run" : " runs") << " per timeout)\n"
       << "  timeout_s  P(fail)  mean time to failure s  mean iteration s\n";
  for (const TimeoutPoint& point : curve.points) {
    const IterationDistribution& d = point.distribution;
    text << "  " << std::setw(9) << point.timeout_s << "  " << std::setw(7) << d.failure_probability << "  "
         << std::setw(22) << d.mean_time_to_failure_s << "  " << d.mean_s << "\n";
  }
  if (curve.smallest_safe_s) {
    text << "smallest timeout with P(fail) <= " << curve.epsilon << ": " << *curve.smallest_safe_s << " s\n";
  } else {
    text << "no timeout tried has P(fail) <= " << curve.epsilon << "\n";
  }
  return text.str();
}

std::string timeout_curve_to_csv(const TimeoutCurve& curve) {
  std::ostringstream csv;
  csv << "timeout_s,runs,failed_runs,failure_probability,mean_time_to_failure_s,mean_iteration_s,p99_iteration_s\n";
  for (const TimeoutPoint& point : curve.points) {
    const IterationDistribution& d = point.distribution;
    csv << std::setprecision(9) << point.timeout_s << "," << d.runs << "," << d.failed_runs << ","
        << d.failure_probability << "," << d.mean_time_to_failure_s << "," << d.mean_s << "," << d.p99_s << "\n";
  }
  return csv.str();
}

std::string timeout_curve_to_json(const TimeoutCurve& curve) {
  nlohmann::json json = {{"trace_dir", curve.trace_dir}, {"runs", curve.runs}, {"epsilon", curve.epsilon}};
  json["points"] = nlohmann::json::array();
  for (const TimeoutPoint& point : curve.points) {
    nlohmann::json entry = distribution_json(point.distribution);
    entry["timeout_s"] = point.timeout_s;
    json["points"].push_back(entry);
  }
  json["smallest_safe_timeout_s"] = curve.smallest_safe_s ? nlohmann::json(*curve.smallest_safe_s) : nlohmann::json();
  return json.dump(2);
}

}  // namespace ddpsim::sim
