// A machine profile made into replay settings (machine_settings.hpp).
#include "ddpsim/sim/machine_settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <utility>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/text_of.hpp"
#include "stats.hpp"
#include "workload/collective_windows.hpp"

namespace ddpsim::sim {
namespace {

// Least squares on (a + b·x − y) / y: a ladder spans four orders of magnitude, and an ordinary
// fit would follow the large sizes alone and miss the small ones' latency by several times. A
// negative intercept is refitted through the origin, as fit_line does.
LineFit fit_relative(const std::vector<double>& x, const std::vector<double>& y) {
  double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = 1 / y[i], v = x[i] / y[i];  // the weighted design row; the target is 1
    s00 += u * u;
    s01 += u * v;
    s11 += v * v;
    r0 += u;
    r1 += v;
  }
  LineFit fit;
  const double determinant = s00 * s11 - s01 * s01;
  if (x.size() >= 2 && determinant > 0) {
    fit.intercept_s = (r0 * s11 - r1 * s01) / determinant;
    fit.slope_s_per_byte = (s00 * r1 - s01 * r0) / determinant;
  }
  // A free fit whose slope is not positive (a noisy small rung outweighing a short ladder's
  // large ones, as on a shaped link) is refitted through the origin too.
  if (x.size() < 2 || !(determinant > 0) || fit.intercept_s < 0 || !(fit.slope_s_per_byte > 0)) {
    fit.intercept_clamped = x.size() >= 2 && determinant > 0;
    fit.intercept_s = 0;
    fit.slope_s_per_byte = s11 > 0 ? r1 / s11 : 0;
  }
  double mean_y = 0;
  for (double value : y) mean_y += value / static_cast<double>(y.size());
  double ss_res = 0, ss_tot = 0, relative_sq = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double predicted = fit.intercept_s + fit.slope_s_per_byte * x[i];
    ss_res += (y[i] - predicted) * (y[i] - predicted);
    ss_tot += (y[i] - mean_y) * (y[i] - mean_y);
    relative_sq += ((predicted - y[i]) / y[i]) * ((predicted - y[i]) / y[i]);
  }
  fit.r_squared = ss_tot > 0 ? 1 - ss_res / ss_tot : std::numeric_limits<double>::quiet_NaN();
  fit.relative_rms = x.empty() ? 0 : std::sqrt(relative_sq / static_cast<double>(x.size()));
  return fit;
}

// The ladder of `profile` over the line `fit` (network_ladder.hpp).
NetworkLadder ladder_of(const trace::MachineProfile& profile, const LineFit& fit) {
  std::vector<LadderRung> rungs;
  for (const trace::LadderStep& step : profile.allreduce.steps) rungs.push_back({step.bytes, step.one.median_s});
  return NetworkLadder(profile.world_size, rungs, fit.intercept_s, fit.slope_s_per_byte);
}

std::string plural(std::size_t count, const std::string& word) {
  return std::to_string(count) + " " + word + (count == 1 ? "" : "s");
}

}  // namespace

MachineSettings machine_settings(const trace::MachineProfile& profile, AllreduceAlgorithm shape,
                                 const std::string& file) {
  MachineSettings settings;
  Calibration& calibration = settings.calibration;
  calibration.algorithm = shape == AllreduceAlgorithm::Tree ? AllreduceAlgorithm::Tree : AllreduceAlgorithm::Ring;
  calibration.world_size = profile.world_size;
  calibration.fitted_to = "the machine profile " + file;
  std::vector<double> x, y;
  for (const trace::LadderStep& step : profile.allreduce.steps) {
    calibration.points.push_back({step.bytes, step.one.median_s, step.one.samples});
    calibration.samples += step.one.samples;
    x.push_back(static_cast<double>(step.bytes));
    y.push_back(step.one.median_s);
  }
  if (y.empty() || !(y.back() > y.front())) {
    throw RequestError(file + ": expected all-reduce times that grow with the message size, got " +
                       (y.empty() ? std::string("no ladder") :
                                    text_of(y.front()) + " s at " + std::to_string(profile.allreduce.steps.front().bytes) +
                                        " bytes and " + text_of(y.back()) + " s at " +
                                        std::to_string(profile.allreduce.steps.back().bytes)));
  }
  calibration.fit = fit_relative(x, y);
  settings.ladder = ladder_of(profile, calibration.fit);
  calibration.method = "least squares on the relative misfit over the ladder of " +
                       plural(profile.allreduce.steps.size(), "size") + ", one all-reduce at a time";
  const FormulaShape formula = allreduce_formula_shape(calibration.algorithm, profile.world_size);
  calibration.alpha_s = calibration.fit.intercept_s / formula.latency_coefficient;
  calibration.beta_bytes_per_s = formula.bandwidth_coefficient / calibration.fit.slope_s_per_byte;
  if (profile.allreduce.in_flight == 2) settings.in_flight_gain = std::min(2.0, profile.allreduce.in_flight_gain);
  // --effective-cores models ranks that share one machine: taken where the profile's did.
  if (profile.hosts.size() == 1 && profile.ranks_per_host >= 2) {
    settings.effective_cores[profile.ranks_per_host] = profile.compute.effective_cores;
    for (const trace::ColocationStep& step : profile.compute.by_ranks) settings.effective_cores[step.ranks] = step.effective_cores;
  }
  if (profile.overlap) {
    // The replay slows only the bandwidth term while autograd runs (ReplayOptions::
    // overlap_bandwidth_fraction): the latency is paid alike either way.
    const double latency_s = calibration.fit.intercept_s;
    const double alone_s = profile.overlap->allreduce_alone.median_s - latency_s;
    const double busy_s = profile.overlap->allreduce_busy.median_s - latency_s;
    const double fraction = alone_s > 0 && busy_s > 0 ? alone_s / busy_s : profile.overlap->allreduce_fraction;
    settings.overlap_bandwidth_fraction = std::clamp(fraction, 1e-3, 1.0);
    settings.compute_fraction_during_allreduce = profile.overlap->compute_fraction;
  }
  if (profile.sleep) settings.sleep_resume_cost_s = profile.sleep->resume_cost_s;
  return settings;
}

std::vector<std::string> check_machine_matches(const trace::MachineProfile& profile, const trace::Trace& trace,
                                               const std::string& file) {
  std::vector<std::string> warnings;
  if (trace.ranks.empty()) return warnings;
  const trace::RunMeta& meta = trace.meta();
  // A simulated trace's backend is "simgrid": whatever network it was given, any profile may replay it.
  if ((meta.backend == "gloo" || meta.backend == "nccl") && meta.backend != profile.backend) {
    throw RequestError("--machine " + file + ": expected a profile measured with the trace's backend " + meta.backend +
                       ", got one measured with " + profile.backend);
  }
  std::set<std::string> hosts;
  for (const trace::RankTrace& rank : trace.ranks) {
    if (!rank.meta.host.empty()) hosts.insert(rank.meta.host);
  }
  if (!hosts.empty() && hosts.size() != profile.hosts.size()) {
    throw RequestError("--machine " + file + ": expected a profile measured on the trace's " +
                       plural(hosts.size(), "host") + ", got one measured on " +
                       plural(profile.hosts.size(), "host"));
  }
  if (trace.world_size() != profile.world_size) {
    std::string warning = "--machine " + file + ": measured on " + std::to_string(profile.world_size) +
                          " ranks, the trace has " + std::to_string(trace.world_size()) +
                          ": alpha and beta carry over through the all-reduce formula's factors for each";
    // One rank on a host shows nothing of how ranks and the process group's threads share its
    // cores; the profile's kernel stands in for the job (docs/validation.md, Known limits).
    if (trace.world_size() == 1 && profile.hosts.size() == 1 && profile.ranks_per_host >= 2) {
      warning += "; how ranks and their all-reduces share this host's cores comes from the profile's kernel, not "
                 "this job (a trace of 2 ranks holds it)";
    }
    warnings.push_back(warning);
  }
  const auto device = meta.settings.find("device");
  if (device != meta.settings.end() && (device->second == "cpu" || device->second == "cuda") &&
      device->second != profile.device) {
    warnings.push_back("--machine " + file + ": measured with " + profile.device + " tensors, the trace's were " +
                       device->second + " tensors");
  }
  return warnings;
}

std::string few_sizes_headline_note(const std::optional<Calibration>& calibration, bool machine_given) {
  if (!calibration || calibration->points.size() >= 3 || calibration->fitted_to != kFittedToTrace) return "";
  const bool one = calibration->points.size() == 1;
  return "network fitted to " + plural(calibration->points.size(), "message size") + " of the trace (" +
         (one ? "one size cannot tell latency from bandwidth" : "a line through 2 always fits") + "): " +
         (machine_given ? std::string("--calibration keeps it over the --machine profile's network; drop it to take the profile's")
                        : "measure it with `ddp-launch ... ddp-machine-profile --out machine.json`, then --machine machine.json");
}

std::optional<std::string> slow_profile_warning(const trace::MachineProfile& profile, const trace::Trace& trace,
                                                const std::string& file) {
  if (profile.allreduce.steps.empty() || trace.ranks.empty() || trace.world_size() != profile.world_size) {
    return std::nullopt;
  }
  const std::vector<std::int64_t> iterations = trace::without_warmup(trace.complete_iterations());
  std::vector<trace::Timelines> timelines;  // [rank]
  for (const trace::RankTrace& rank : trace.ranks) timelines.push_back(trace::build_timelines(rank));
  const std::map<std::int64_t, std::int64_t> compute_done = autograd_done_ns(timelines, iterations);
  const NetworkLadder ladder = ladder_of(profile, LineFit{});
  std::vector<double> ratios;
  for (const auto& [iteration, windows] : collective_windows(timelines, iterations)) {
    const auto done = compute_done.find(iteration);
    const std::int64_t compute_done_ns = done == compute_done.end() ? std::numeric_limits<std::int64_t>::min() : done->second;
    std::int64_t earlier_end_ns = std::numeric_limits<std::int64_t>::min();
    for (const CollectiveWindow& window : windows) {
      if (window.begin_ns >= compute_done_ns && window.begin_ns >= earlier_end_ns && window.bytes > 0 &&
          window.end_ns > window.begin_ns) {
        ratios.push_back(static_cast<double>(window.end_ns - window.begin_ns) * 1e-9 /
                         ladder.time_s(window.bytes));
      }
      earlier_end_ns = std::max(earlier_end_ns, window.end_ns);
    }
  }
  if (static_cast<int>(ratios.size()) < kMinAloneAllreduces) return std::nullopt;
  const std::size_t alone = ratios.size();
  const double ratio = median_of(std::move(ratios));
  if (!(ratio < kSlowProfileRatio)) return std::nullopt;
  char text[64];
  std::snprintf(text, sizeof text, "x%.2f", ratio);
  return "--machine " + file + ": the trace's " + std::to_string(alone) + " all-reduces alone after backward took " +
         text + " of the profile's times at their sizes: the profile was measured while the machine was slower, so " +
         "the what-if's network is slower than this job's (measure the profile again beside the job)";
}

}  // namespace ddpsim::sim
