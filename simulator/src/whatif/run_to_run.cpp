// The run-to-run spread of a configuration's measured medians, and intervals widened by it
// (run_to_run.hpp).
#include "ddpsim/sim/run_to_run.hpp"

#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace ddpsim::sim {

RunToRunSpread run_to_run_spread(const std::vector<double>& median_iteration_s, double level) {
  if (median_iteration_s.size() < 2) {
    throw std::invalid_argument("a run-to-run spread needs 2 runs or more, got " +
                                std::to_string(median_iteration_s.size()));
  }
  for (const double median : median_iteration_s) {
    if (!(median > 0)) throw std::invalid_argument("a run's median iteration time must be > 0");
  }
  std::vector<double> ratios;
  for (std::size_t i = 0; i < median_iteration_s.size(); ++i) {
    for (std::size_t j = 0; j < median_iteration_s.size(); ++j) {
      if (i != j) ratios.push_back(median_iteration_s[i] / median_iteration_s[j]);
    }
  }
  RunToRunSpread spread;
  spread.runs = static_cast<int>(median_iteration_s.size());
  spread.level = level;
  spread.ratio_low = percentile_of(ratios, (1 - level) / 2);
  spread.ratio_high = percentile_of(ratios, 1 - (1 - level) / 2);
  return spread;
}

MedianInterval widened(const MedianInterval& interval, const RunToRunSpread& spread) {
  MedianInterval result = interval;
  result.level = spread.level;
  result.low_s = interval.low_s * spread.ratio_low;
  result.high_s = interval.high_s * spread.ratio_high;
  return result;
}

MedianInterval widened(double predicted_median_s, const RunToRunSpread& spread) {
  MedianInterval point;
  point.low_s = point.high_s = predicted_median_s;
  return widened(point, spread);
}

std::string pooled_runs_to_text(std::size_t runs, std::size_t complete_iterations) {
  return "pooled: " + std::to_string(runs) + " runs (the trace and its --repeats), " +
         std::to_string(complete_iterations) + " complete iterations";
}

std::string run_to_run_interval_to_text(const MedianInterval& interval, const RunToRunSpread& spread) {
  std::ostringstream text;
  text << std::setprecision(6) << "median iteration, " << spread.level * 100
       << " % interval with the run-to-run spread of " << spread.runs << " runs of the baseline (ratios "
       << std::setprecision(4) << spread.ratio_low << "-" << spread.ratio_high << std::setprecision(6)
       << "): [" << interval.low_s * 1e3 << ", " << interval.high_s * 1e3 << "] ms\n";
  return text.str();
}

}  // namespace ddpsim::sim
