// A profiled trace's compute scaled to the job's unprofiled speed (prepared_replay.hpp,
// ReplayRequest::unprofiled_iteration_s). See Note [profiler overhead] in docs/model.md.
#include <cmath>
#include <cstdio>
#include <string>

#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/prepared_replay.hpp"

namespace ddpsim::sim {
namespace {

std::string ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g ms", seconds * 1e3);
  return text;
}

// The trace replayed as it ran (its world size, caps and ranks' speeds) with every rank's
// compute × `scale`: its median iteration, seconds.
double reconstructed_iteration_s(const PreparedReplay& as_recorded, double scale) {
  WorkloadModel model = as_recorded.model;
  stretch_compute(model, scale);
  const ReplayResult result = replay_isolated_by_class(model, as_recorded.options);
  if (!result.failure.empty()) {
    throw RequestError("--unprofiled-iteration-ms: the trace's own replay failed (" + result.failure + ")");
  }
  return summarize_prediction(model, as_recorded.options, result).median_iteration_s;
}

}  // namespace

double unprofiled_compute_scale(const ReplayRequest& request, const trace::Trace& measured) {
  const double target_s = *request.unprofiled_iteration_s;
  if (!(target_s > 0 && std::isfinite(target_s))) {
    throw RequestError("--unprofiled-iteration-ms: expected a positive time, got " + std::to_string(target_s * 1e3));
  }
  // The trace as it was recorded: none of the request's what-ifs, its own machine settings.
  ReplayRequest as_recorded = request;
  as_recorded.unprofiled_iteration_s.reset();
  as_recorded.unprofiled_scale.reset();
  as_recorded.world_size = 0;
  as_recorded.skew = {};
  as_recorded.bucket_cap_mb.reset();
  as_recorded.first_bucket_cap_mb.reset();
  as_recorded.bucket_caps_mb.clear();
  as_recorded.timeout_s = 0;
  as_recorded.independent_copies = false;
  // A cluster preset is where the what-if runs, not where the trace ran: the trace's own network
  // (its fit, or --machine's) times the job whose speed was given.
  if (!as_recorded.platform.cluster.empty()) as_recorded.platform = {};
  const PreparedReplay prepared = prepare_replay(as_recorded, measured);

  // T(scale) grows with the scale, about linearly (compute plus what does not overlap it):
  // secant steps from scale 1, kept inside a bracket once one is known.
  double low = 0, high = 0;  // 0: not known yet
  double scale = 1, time = reconstructed_iteration_s(prepared, scale);
  double previous_scale = 0, previous_time = 0;
  for (int step = 0; step < 12 && std::abs(time / target_s - 1) > 1e-3; ++step) {
    (time > target_s ? high : low) = scale;
    double next = previous_scale > 0 && time != previous_time
                      ? scale + (target_s - time) * (scale - previous_scale) / (time - previous_time)
                      : scale * target_s / time;
    if (low > 0 && high > 0 && !(next > low && next < high)) next = (low + high) / 2;
    if (!(next > 0)) next = (high > 0 ? high : scale) / 2;
    previous_scale = scale;
    previous_time = time;
    scale = next;
    time = reconstructed_iteration_s(prepared, scale);
    if (scale < 1e-3) {
      throw RequestError("--unprofiled-iteration-ms: expected a time the trace's own replay can reach, got " +
                         ms(target_s) + " (its all-reduces and waits alone take about " + ms(time) + ")");
    }
  }
  if (std::abs(time / target_s - 1) > 1e-2) {
    throw RequestError("--unprofiled-iteration-ms: the trace's own replay came no closer than " + ms(time) +
                       " to the " + ms(target_s) + " given");
  }
  return scale;
}

}  // namespace ddpsim::sim
