// Fitting the α-β network parameters to a trace's all-reduce times.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/trace/model.hpp"

namespace ddpsim::sim {

// One complete iteration's all-reduces as the network saw them: their bytes, and how long at
// least one of them was in flight (the union over its buckets of [the last rank's begin, the
// last rank's end]). See calibrate's bandwidth-only fit.
struct BusySpan {
  std::int64_t iteration = 0;
  std::int64_t bytes = 0;
  double busy_s = 0;
  double two_in_flight_s = 0;  // of busy_s, the time two or more were in flight at once
};

// One point of the fit: the median duration of every all-reduce of one size.
struct SizePoint {
  std::int64_t bytes = 0;
  double median_s = 0;
  int samples = 0;
};

// t(S) = intercept_s + slope_s_per_byte · S, least squares over the size points.
struct LineFit {
  double intercept_s = 0;
  double slope_s_per_byte = 0;
  double r_squared = 0;         // NaN when every point has the same duration (or one point)
  double relative_rms = 0;      // sqrt(mean(((fit − measured)/measured)²))
  bool intercept_clamped = false;  // a negative intercept was refitted through the origin
};

// Ordinary least squares on (x, y); with a single distinct x the line goes through the
// origin and that point. Clamps a negative intercept to 0 (and refits the slope) because a
// negative latency is meaningless.
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// Calibration::fitted_to of a fit to a trace's all-reduces.
inline constexpr const char* kFittedToTrace = "the trace";

struct Calibration {
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::Ring;
  // What the points are of, for the report: kFittedToTrace, or "the machine profile FILE"
  // (machine_settings.hpp).
  std::string fitted_to = kFittedToTrace;
  int world_size = 0;
  std::vector<SizePoint> points;
  LineFit fit;
  double alpha_s = 0;
  double beta_bytes_per_s = 0;
  int samples = 0;
  // How the line was fitted: "least squares", or "bandwidth only (...)" when the sizes span
  // too little to tell latency from bandwidth (see calibrate). Printed with the fit.
  std::string method = "least squares";
  // The rate of all-reduces during backward compute as a fraction of the rate after it
  // (fit_overlap_rates): 1 when one rate describes both or the trace cannot tell. When below
  // 1, beta is the rate after backward and the replay slows transfers during it by this much.
  double overlap_bandwidth_fraction = 1;
  // Of the time any all-reduce was in flight, the fraction with two or more in flight at once
  // (Gloo's two worker threads), while autograd runs and after it (one value for both with one
  // rate); median over iterations. The rates above are bytes over that time, whatever ran at
  // once; a replay that runs two at once (ReplayOptions::allreduces_in_flight) turns them into one
  // all-reduce's rate with these (single_allreduce_rates). 0 from a least-squares fit, whose
  // per-size durations are each transfer's own.
  double two_in_flight_busy = 0;
  double two_in_flight_free = 0;
};

// Sizes must span at least this ratio (largest / smallest) for the intercept to mean
// anything: with DDP's equal-sized buckets (e.g. 4 buckets of ~1 MB) the slope of a free
// line is decided by noise and can come out negative.
inline constexpr double kMinSizeSpanForLatencyFit = 2.0;

class CalibrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The busy spans of the same iterations as trace::collective_transfers.
std::vector<BusySpan> allreduce_busy_spans(const trace::Trace& trace);

// The all-reduce rate while any rank's autograd still runs ("busy") and after the last
// rank's has finished ("free"), in collective seconds per byte (overlap_rates.cpp says why).
// Busy: per iteration, the bytes of the all-reduces that ended before autograd did, over the
// time any of them was in flight. Free: the bytes left when autograd finished, over the time
// any all-reduce was in flight after it. Medians over iterations; 0 where fewer than
// kMinOverlapIterations iterations had both.
inline constexpr std::size_t kMinOverlapIterations = 3;
inline constexpr double kOverlapFractionForTwoRates = 0.9;
struct OverlapRates {
  double busy_s_per_byte = 0;
  double free_s_per_byte = 0;
  int busy_iterations = 0;
  int free_iterations = 0;
  // Of the time counted in each rate, the fraction with two or more all-reduces in flight
  // (median over the same iterations).
  double busy_two_in_flight = 0;
  double free_two_in_flight = 0;
  bool measured() const { return busy_s_per_byte > 0 && free_s_per_byte > 0; }
};
OverlapRates fit_overlap_rates(const trace::Trace& trace);

// A fit's relative RMS above this means the alpha-beta line does not describe the trace's
// all-reduces (concurrent transfers, CPU contention): the prediction inherits the misfit.
inline constexpr double kMaxTrustedRelativeRms = 0.25;

// Fits t(S) over the per-size medians and converts the line into α and β for the
// algorithm's formula (allreduce_formula_shape). When the sizes span less than
// kMinSizeSpanForLatencyFit, the free fit is not physical (slope ≤ 0), or the line misses the
// medians by more than kMaxTrustedRelativeRms, it falls back to a bandwidth-only fit through
// the origin (α = 0: per iteration, the bytes over the time any all-reduce was in flight) and
// says so in `method`. Throws CalibrationError only when the trace has nothing to fit (world
// size 1, no all-reduce).
Calibration calibrate(const trace::Trace& trace, AllreduceAlgorithm algorithm);

// What a reader must know before trusting the fit, one sentence each (empty: nothing):
// fewer than 3 distinct message sizes (a line through 2 points fits exactly, so R^2 says
// nothing), or a relative RMS above kMaxTrustedRelativeRms, unless `timed_by_ladder` (a replay
// that times each all-reduce by a machine profile's ladder, network_ladder.hpp, does not inherit
// the line's misfit). Printed by calibrate and replay.
std::vector<std::string> calibration_warnings(const Calibration& calibration, bool timed_by_ladder = false);

std::string calibration_to_json(const Calibration& calibration);
std::string calibration_to_text(const Calibration& calibration);

}  // namespace ddpsim::sim
