// Least-squares α-β calibration from a trace's all-reduce times (calibrate.hpp).
#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/json_values.hpp"
#include "ddpsim/sim/network_ladder.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>

#include "workload/collective_windows.hpp"
#include "ddpsim/trace/collective.hpp"
#include "ddpsim/trace/timeline.hpp"
#include "stats.hpp"

namespace ddpsim::sim {

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit fit;
  const std::size_t n = std::min(x.size(), y.size());
  if (n == 0) return fit;
  const std::vector<double> xs(x.begin(), x.begin() + static_cast<long>(n));
  const std::vector<double> ys(y.begin(), y.begin() + static_cast<long>(n));
  const double mean_x = mean_of(xs);
  const double mean_y = mean_of(ys);
  double sxx = 0;
  double sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += (xs[i] - mean_x) * (xs[i] - mean_x);
    sxy += (xs[i] - mean_x) * (ys[i] - mean_y);
  }
  const auto through_origin = [&] {
    double xx = 0;
    double xy = 0;
    for (std::size_t i = 0; i < n; ++i) {
      xx += xs[i] * xs[i];
      xy += xs[i] * ys[i];
    }
    fit.intercept_s = 0;
    fit.slope_s_per_byte = xx > 0 ? xy / xx : 0;
  };
  if (sxx <= 0) {
    // One size only: latency and bandwidth cannot be told apart; attribute it all to bandwidth.
    through_origin();
  } else {
    fit.slope_s_per_byte = sxy / sxx;
    fit.intercept_s = mean_y - fit.slope_s_per_byte * mean_x;
    if (fit.intercept_s < 0) {
      through_origin();
      fit.intercept_clamped = true;
    }
  }
  double ss_res = 0;
  double ss_tot = 0;
  double relative_sq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double predicted = fit.intercept_s + fit.slope_s_per_byte * xs[i];
    ss_res += (ys[i] - predicted) * (ys[i] - predicted);
    ss_tot += (ys[i] - mean_y) * (ys[i] - mean_y);
    if (ys[i] > 0) relative_sq += ((predicted - ys[i]) / ys[i]) * ((predicted - ys[i]) / ys[i]);
  }
  fit.r_squared = ss_tot > 0 ? 1 - ss_res / ss_tot : std::numeric_limits<double>::quiet_NaN();
  fit.relative_rms = std::sqrt(relative_sq / static_cast<double>(n));
  return fit;
}

std::vector<BusySpan> allreduce_busy_spans(const trace::Trace& trace) {
  std::vector<BusySpan> spans;
  for (const auto& [iteration, windows] : collective_windows(trace)) {
    std::vector<std::pair<std::int64_t, std::int64_t>> intervals;
    BusySpan span;
    span.iteration = iteration;
    for (const CollectiveWindow& window : windows) {
      span.bytes += window.bytes;
      intervals.emplace_back(window.begin_ns, window.end_ns);
    }
    span.two_in_flight_s = static_cast<double>(overlapped_length_ns(intervals)) * 1e-9;
    const std::int64_t busy_ns = union_length_ns(std::move(intervals));
    span.busy_s = static_cast<double>(busy_ns) * 1e-9;
    if (span.bytes > 0 && span.busy_s > 0) spans.push_back(span);
  }
  return spans;
}

Calibration calibrate(const trace::Trace& trace, AllreduceAlgorithm algorithm) {
  Calibration calibration;
  calibration.algorithm = algorithm;
  calibration.world_size = trace.world_size();
  if (trace.world_size() < 2) {
    throw CalibrationError(trace.dir + ": expected a trace of at least 2 ranks to calibrate the network, got " +
                           std::to_string(trace.world_size()));
  }
  // The network's view of each all-reduce, not each rank's wait in it (trace/collective.hpp).
  const std::vector<trace::CollectiveTransfer> samples = trace::collective_transfers(trace);
  if (samples.empty()) {
    throw CalibrationError(trace.dir + ": expected all-reduces completed on every rank to calibrate the network, got none");
  }
  calibration.samples = static_cast<int>(samples.size());

  // Medians per size resist stragglers (a preempted rank, a CPU frequency switch).
  std::map<std::int64_t, std::vector<double>> by_size;
  for (const auto& sample : samples) by_size[sample.bytes].push_back(sample.transfer_s);
  std::vector<double> x;
  std::vector<double> y;
  for (const auto& [bytes, durations] : by_size) {
    calibration.points.push_back({bytes, median_of(durations), static_cast<int>(durations.size())});
    x.push_back(static_cast<double>(bytes));
    y.push_back(median_of(durations));
  }
  const double span = x.front() > 0 ? x.back() / x.front() : 0;
  if (span >= kMinSizeSpanForLatencyFit) calibration.fit = fit_line(x, y);
  const bool line_misses = calibration.fit.relative_rms > kMaxTrustedRelativeRms;
  if (span < kMinSizeSpanForLatencyFit || !(calibration.fit.slope_s_per_byte > 0) || line_misses) {
    // Latency and bandwidth cannot be told apart: charge everything to bandwidth through a
    // zero latency (fit_line with one x value goes through the origin), so the replay
    // reproduces the measured time at the sizes that were measured.
    std::ostringstream why;
    why << std::setprecision(3);
    if (span < kMinSizeSpanForLatencyFit) {
      why << "bandwidth only, latency 0: sizes span " << span << "x < " << kMinSizeSpanForLatencyFit << "x";
    } else if (!(calibration.fit.slope_s_per_byte > 0)) {
      why << "bandwidth only, latency 0: the free fit's slope was " << calibration.fit.slope_s_per_byte
          << " s/byte";
    } else {
      // Sizes alike in bytes but far apart in time: the per-size medians measure how the
      // buckets overlapped, not a line. Seen on Gloo over loopback (the same 16 MiB took 5 or
      // 13 ms, bucket by bucket) and with CUDA tensors on a GPU, where the least-squares line
      // of one repetition and the busy-time rate of the next predicted the same cap 34 % apart.
      why << "bandwidth only, latency 0: the line through the per-size medians missed them by "
          << calibration.fit.relative_rms * 100 << " % RMS (> " << kMaxTrustedRelativeRms * 100
          << " %)";
    }
    // The per-bucket samples assume one all-reduce at a time per rank (a bucket's transfer
    // starts when the previous one ends), but Gloo runs two at once: a bucket launched while
    // another is in flight shares the link, so its "own" time comes out too short, and the
    // per-size median then depends on how the buckets happened to overlap (on a 200 Mbit/s
    // testbed link with 4 equal buckets, beta came out 97 % or 122 % of the link rate from
    // two runs of the same job). Bytes over the time any all-reduce was in flight does not
    // depend on the overlap: all the iteration's bytes went through in that time. The median
    // over iterations, like the per-size medians, ignores a straggling iteration.
    why << "; per iteration, all-reduce bytes over the time any was in flight";
    calibration.method = why.str();
    const std::vector<BusySpan> spans = allreduce_busy_spans(trace);
    std::vector<double> seconds_per_byte;
    std::vector<double> two_in_flight;
    for (const BusySpan& span : spans) {
      seconds_per_byte.push_back(span.busy_s / static_cast<double>(span.bytes));
      two_in_flight.push_back(span.two_in_flight_s / span.busy_s);
    }
    calibration.two_in_flight_busy = two_in_flight.empty() ? 0 : median_of(two_in_flight);
    calibration.two_in_flight_free = calibration.two_in_flight_busy;
    calibration.fit = LineFit{};
    calibration.fit.slope_s_per_byte = seconds_per_byte.empty() ? 0 : median_of(seconds_per_byte);
    calibration.fit.r_squared = std::numeric_limits<double>::quiet_NaN();
    // How well one rate describes every iteration's busy time.
    double relative_sq = 0;
    for (const BusySpan& span : spans) {
      const double error = (calibration.fit.slope_s_per_byte * static_cast<double>(span.bytes) - span.busy_s) / span.busy_s;
      relative_sq += error * error;
    }
    calibration.fit.relative_rms = spans.empty() ? 0 : std::sqrt(relative_sq / static_cast<double>(spans.size()));
    // Where all-reduces during backward went clearly slower than after it (processors shared
    // with compute: overlap_rates.cpp), beta becomes the rate after backward and the replay
    // slows transfers during backward by the measured fraction. Within 10 % of each other,
    // one rate: about the spread of either rate between repetitions of one job.
    const OverlapRates overlap = fit_overlap_rates(trace);
    if (overlap.measured() && overlap.free_s_per_byte < kOverlapFractionForTwoRates * overlap.busy_s_per_byte) {
      calibration.fit.slope_s_per_byte = overlap.free_s_per_byte;
      calibration.overlap_bandwidth_fraction = overlap.free_s_per_byte / overlap.busy_s_per_byte;
      calibration.two_in_flight_busy = overlap.busy_two_in_flight;
      calibration.two_in_flight_free = overlap.free_two_in_flight;
      std::ostringstream two;
      two << std::setprecision(3) << "; two rates: after backward (beta), and x"
          << calibration.overlap_bandwidth_fraction << " of it while autograd runs ("
          << overlap.busy_iterations << "/" << overlap.free_iterations << " iterations)";
      calibration.method += two.str();
    }
  }
  if (!(calibration.fit.slope_s_per_byte > 0)) {
    throw CalibrationError(trace.dir + ": expected all-reduces that take time, got durations of 0 s");
  }
  const FormulaShape shape = allreduce_formula_shape(algorithm, trace.world_size());
  calibration.alpha_s = calibration.fit.intercept_s / shape.latency_coefficient;
  calibration.beta_bytes_per_s = shape.bandwidth_coefficient / calibration.fit.slope_s_per_byte;
  return calibration;
}

std::vector<std::string> calibration_warnings(const Calibration& calibration, bool timed_by_ladder) {
  std::vector<std::string> warnings;
  const std::size_t sizes = calibration.points.size();
  if (sizes < 3) {
    warnings.push_back("fitted to " + std::to_string(sizes) + " message size" +
                       (sizes == 1 ? "" : "s") +
                       ": too few to test the line (2 points always fit); measure the machine with "
                       "`ddp-launch ... ddp-machine-profile --out machine.json` and replay with "
                       "--machine machine.json, or record more bucket sizes");
  }
  if (!timed_by_ladder && calibration.fit.relative_rms > kMaxTrustedRelativeRms) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(0);
    if (calibration.fitted_to == kFittedToTrace) {
      text << "the line misses the measured all-reduces by " << calibration.fit.relative_rms * 100
           << " % RMS: this network model does not describe the trace (concurrent transfers? CPU "
              "contention?), and predictions inherit the misfit";
    } else {
      // A shaped link (tc tbf) passes messages within its burst at the wire's speed: small rungs
      // far faster than the rate, which a line through every rung cannot follow.
      text << "the line through " << calibration.fitted_to << "'s all-reduce ladder misses its sizes by "
           << calibration.fit.relative_rms * 100
           << " % RMS: the ladder is not a line on this network (a shaped link passing small messages in "
              "bursts?), and predictions inherit the misfit";
      if (sizes < kMinLadderRungs) {
        text << "; its " << sizes << " sizes are too few for the ladder to time each all-reduce in the line's "
             << "place: measure at least " << kMinLadderRungs << " (ddp-machine-profile's default --sizes)";
      }
    }
    warnings.push_back(text.str());
  }
  return warnings;
}

nlohmann::json calibration_json(const Calibration& calibration, bool timed_by_ladder) {
  nlohmann::json json;
  json["algorithm"] = to_string(calibration.algorithm);
  json["world_size"] = calibration.world_size;
  json["alpha_s"] = calibration.alpha_s;
  json["beta_bytes_per_s"] = calibration.beta_bytes_per_s;
  json["intercept_s"] = calibration.fit.intercept_s;
  json["slope_s_per_byte"] = calibration.fit.slope_s_per_byte;
  json["r_squared"] = std::isnan(calibration.fit.r_squared) ? nlohmann::json(nullptr)
                                                             : nlohmann::json(calibration.fit.r_squared);
  json["relative_rms"] = calibration.fit.relative_rms;
  json["intercept_clamped"] = calibration.fit.intercept_clamped;
  json["samples"] = calibration.samples;
  json["method"] = calibration.method;
  json["overlap_bandwidth_fraction"] = calibration.overlap_bandwidth_fraction;
  json["two_in_flight_busy"] = calibration.two_in_flight_busy;
  json["two_in_flight_free"] = calibration.two_in_flight_free;
  json["warnings"] = calibration_warnings(calibration, timed_by_ladder);
  json["points"] = nlohmann::json::array();
  for (const auto& point : calibration.points) {
    json["points"].push_back({{"bytes", point.bytes}, {"median_s", point.median_s}, {"samples", point.samples}});
  }
  return json;
}

std::string calibration_to_json(const Calibration& calibration) { return calibration_json(calibration).dump(2); }

std::string calibration_to_text(const Calibration& calibration) {
  std::ostringstream text;
  text << "calibration (" << to_string(calibration.algorithm) << ", W=" << calibration.world_size << ", "
       << calibration.samples << " all-reduces, " << calibration.points.size() << " sizes)\n";
  text << "  fit        t(S) = " << std::setprecision(6) << calibration.fit.intercept_s << " s + S * "
       << calibration.fit.slope_s_per_byte << " s/byte"
       << (calibration.fit.intercept_clamped ? "  (negative intercept clamped to 0)" : "") << "\n";
  text << "  method     " << calibration.method << "\n";
  text << "  alpha      " << calibration.alpha_s * 1e6 << " us\n";
  text << "  beta       " << calibration.beta_bytes_per_s / 1e9 << " GB/s";
  if (calibration.overlap_bandwidth_fraction != 1) {
    text << " after backward, x" << calibration.overlap_bandwidth_fraction << " while autograd runs";
  }
  text << "\n";
  if (calibration.two_in_flight_busy > 0 || calibration.two_in_flight_free > 0) {
    text << "  two at once " << calibration.two_in_flight_busy * 100 << " % of the in-flight time while autograd runs, "
         << calibration.two_in_flight_free * 100 << " % after it\n";
  }
  text << "  R^2        ";
  if (std::isnan(calibration.fit.r_squared)) {
    text << (calibration.points.size() > 1 ? "n/a (bandwidth only: no line fitted)\n" : "n/a (one size)\n");
  } else {
    text << calibration.fit.r_squared << "\n";
  }
  text << "  rel. RMS   " << calibration.fit.relative_rms * 100 << " %\n";
  for (const std::string& warning : calibration_warnings(calibration)) {
    text << "  warning    " << warning << "\n";
  }
  text << "  points     bytes  median_s  samples\n";
  for (const auto& point : calibration.points) {
    text << "    " << std::setw(12) << point.bytes << "  " << std::setw(10) << point.median_s << "  "
         << point.samples << "\n";
  }
  return text.str();
}

}  // namespace ddpsim::sim
