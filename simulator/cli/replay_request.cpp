// The shared replay flags mapped onto the library's ReplayRequest and MonteCarloPlan
// (replay_flags.hpp): names to enums, the platform and cluster preset, the skew texts.
#include <sys/stat.h>

#include "command.hpp"
#include "ddpsim/sim/calibration_json.hpp"
#include "ddpsim/sim/cluster_presets.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "replay_flags.hpp"

namespace ddpsim::cli {
namespace {

bool is_regular_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

}  // namespace

sim::ReplayRequest to_request(const ReplayFlags& flags) {
  sim::ReplayRequest request = flags.request;
  if (flags.compute) {
    const auto mode = sim::compute_mode_from_string(*flags.compute);
    if (!mode) throw UsageError("--compute: expected median, mean or per-iteration, got '" + *flags.compute + "'");
    request.compute = *mode;
  }
  if (flags.allreduce) {
    const auto algorithm = sim::allreduce_algorithm_from_string(*flags.allreduce);
    if (!algorithm) {
      throw UsageError("--allreduce: expected ring, ring-agg, analytic, tree or auto, got '" + *flags.allreduce + "'");
    }
    request.algorithm = *algorithm;
  }
  if (flags.core_sharing) {
    if (*flags.core_sharing == "uniform") {
      request.core_sharing = sim::CoreSharing::Uniform;
    } else if (*flags.core_sharing == "paced") {
      request.core_sharing = sim::CoreSharing::Paced;
    } else {
      throw UsageError("--core-sharing: expected uniform or paced, got '" + *flags.core_sharing + "'");
    }
  }
  if (!flags.calibration.empty()) {
    request.calibration = sim::read_calibration(flags.calibration);
    request.calibration_file = flags.calibration;
  }
  if (flags.unprofiled_iteration_ms) request.unprofiled_iteration_s = *flags.unprofiled_iteration_ms * 1e-3;
  if (!flags.machine.empty()) {
    try {
      request.machine = trace::read_machine_profile(flags.machine);
    } catch (const trace::TraceError& error) {
      throw UsageError(std::string("--machine ") + error.what());
    }
    request.machine_file = flags.machine;
  }
  const std::string platform = flags.platform.value_or(flags.cluster.empty() ? "star" : "two-level");
  if (platform == "star") {
    request.platform.kind = sim::PlatformKind::Star;
  } else if (platform == "two-level") {
    request.platform.kind = sim::PlatformKind::TwoLevel;
  } else if (is_regular_file(platform)) {
    request.platform.kind = sim::PlatformKind::File;
    request.platform.file = platform;
  } else {
    throw UsageError("--platform: expected star, two-level or a readable SimGrid XML file, got '" + platform + "'");
  }
  if (flags.gpus_per_node) request.platform.gpus_per_node = *flags.gpus_per_node;
  if (!flags.cluster.empty()) {
    const sim::ClusterPreset* preset = sim::find_cluster_preset(flags.cluster);
    if (preset == nullptr) {
      throw UsageError("--cluster: expected " + sim::cluster_preset_names() + ", got '" + flags.cluster + "'");
    }
    if (platform != "two-level") {
      throw UsageError("--cluster: expected no --platform other than two-level (a preset is a two-level platform), got '" +
                       platform + "'");
    }
    // The preset fills what the flags left unset.
    request.platform.cluster = flags.cluster;
    request.platform.gpus_per_node = flags.gpus_per_node.value_or(preset->gpus_per_node);
    request.platform.intra_bandwidth = request.platform.intra_bandwidth.value_or(preset->intra_bandwidth);
    request.platform.intra_latency = request.platform.intra_latency.value_or(preset->intra_latency_s);
    request.platform.inter_bandwidth = request.platform.inter_bandwidth.value_or(preset->inter_bandwidth);
    request.platform.inter_latency = request.platform.inter_latency.value_or(preset->inter_latency_s);
  }
  for (const auto& text : flags.slowdown) request.skew.slowdowns.push_back(trace::parse_slowdown(text));
  for (const auto& text : flags.delay) request.skew.delays.push_back(trace::parse_delay(text));
  for (const auto& text : flags.delay_dist) request.skew.distributions.push_back(trace::parse_delay_distribution(text));
  for (const auto& text : flags.effective_cores) {
    const auto [ranks, cores] = sim::parse_effective_cores(text);
    if (!request.effective_cores.emplace(ranks, cores).second) {
      throw UsageError("--effective-cores: expected each K once, got K = " + std::to_string(ranks) + " twice");
    }
  }
  sim::check_effective_cores(request);  // before a sweep's points, which would each refuse it
  if (flags.allreduces_in_flight) request.in_flight_gain = sim::parse_allreduces_in_flight(*flags.allreduces_in_flight);
  return request;
}

sim::MonteCarloPlan to_plan(const ReplayFlags& flags) {
  sim::MonteCarloPlan plan = flags.plan;
  plan.seed = flags.request.skew.seed;  // one --seed: the stalls' and the runs'
  sim::check_plan(plan);
  return plan;
}

}  // namespace ddpsim::cli
