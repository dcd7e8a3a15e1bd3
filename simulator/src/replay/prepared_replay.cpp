// A request made ready to replay (prepared_replay.hpp).
#include "ddpsim/sim/prepared_replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <tuple>

#include "ddpsim/sim/machine_settings.hpp"
#include "ddpsim/sim/rebucket.hpp"
#include "ddpsim/sim/rebucket_approximate.hpp"
#include "ddpsim/sim/text_of.hpp"
#include "ddpsim/trace/concatenate.hpp"
#include "ddpsim/trace/configuration.hpp"
#include "ddpsim/trace/io.hpp"

namespace ddpsim::sim {
namespace {

// One --effective-cores K=C: K ranks at once (2 or more) get C cores' worth, 0 < C <= K.
bool valid_effective_cores(int ranks, double cores) { return ranks >= 2 && cores > 0 && cores <= ranks; }

RequestError effective_cores_error(const std::string& given) {
  return RequestError("--effective-cores: expected K=C with K >= 2 ranks and C effective cores in (0, K], got '" +
                      given + "'");
}

// DDP's bucket_cap_mb is in MiB.
constexpr double kMiB = 1024.0 * 1024.0;

// MiB to bytes; a cap whose bytes would not fit the trace's int64 is refused here, not
// wrapped into a negative size by the cast.
std::int64_t cap_bytes(double cap_mb, const char* flag) {
  if (!std::isfinite(cap_mb) || cap_mb <= 0 || cap_mb * kMiB >= 9.2e18) {
    throw RequestError(std::string(flag) + ": expected a finite number of MiB in (0, 8.7e12], got " + text_of(cap_mb));
  }
  return static_cast<std::int64_t>(cap_mb * kMiB);
}

// Re-buckets the model for the request's caps; a sentence for the report when the caps asked
// give back the recorded buckets (the replay then changes no bucket).
std::optional<std::string> rebucket_if_asked(const ReplayRequest& request, WorkloadModel& model) {
  if (!request.bucket_cap_mb && !request.first_bucket_cap_mb && request.bucket_caps_mb.empty()) return std::nullopt;
  if (!request.bucket_caps_mb.empty() && (request.bucket_cap_mb || request.first_bucket_cap_mb)) {
    throw RequestError("--bucket-caps-mb: expected either the list or --bucket-cap-mb/--first-bucket-cap-mb, got both");
  }
  // A profiler import has no per-parameter sizes or gradient times: DDP's rule cannot run, and
  // the recorded buckets are merged and split instead (rebucket_approximate.hpp, said in the report).
  const bool exact = !has_only_bucket_records(model.source_meta);
  // A cap alone means what it means to the job: the first bucket follows it where the trace's
  // first bucket had the others' cap (BucketCaps::for_cap), as advise's candidates do.
  BucketCaps caps;
  std::string asked;  // the caps in words, for the report
  if (!request.bucket_caps_mb.empty()) {
    std::vector<std::int64_t> list;
    for (double cap_mb : request.bucket_caps_mb) list.push_back(cap_bytes(cap_mb, "--bucket-caps-mb"));
    caps = BucketCaps::list(std::move(list));
    asked = "--bucket-caps-mb gives";
  } else {
    caps = request.bucket_cap_mb
               ? BucketCaps::for_cap(model.source_meta, cap_bytes(*request.bucket_cap_mb, "--bucket-cap-mb"))
               : BucketCaps(model.source_meta.bucket_cap_bytes, model.source_meta.first_bucket_cap_bytes);
    if (request.first_bucket_cap_mb) {
      caps.first_bucket_cap_bytes = cap_bytes(*request.first_bucket_cap_mb, "--first-bucket-cap-mb");
    }
    asked = "bucket cap " + text_of(static_cast<double>(caps.bucket_cap_bytes) / kMiB) + " MiB, first bucket " +
            text_of(static_cast<double>(caps.first_bucket_cap_bytes) / kMiB) + " MiB give";
  }
  const std::vector<std::vector<int>> recorded = model.buckets;
  model = exact ? rebucket(model, caps) : rebucket_from_buckets(model, caps);
  if (model.buckets != recorded) return std::nullopt;
  return asked + " the recorded buckets again (" + std::to_string(recorded.size()) + "): the replay changes no bucket";
}

// The network parameters: given in the request, else fitted to the trace.
void choose_network(const ReplayRequest& request, PreparedReplay& prepared) {
  ReplayOptions& options = prepared.options;
  // A two-level platform given in full (a --cluster preset) takes nothing from the trace: no
  // calibration to report as if it were used, and none to fail on a trace that cannot give one.
  const PlatformRequest& platform = request.platform;
  const bool two_level_given = platform.kind == PlatformKind::TwoLevel && platform.intra_bandwidth &&
                               platform.intra_latency && platform.inter_bandwidth && platform.inter_latency;
  if (two_level_given) {
    options.alpha_s = *platform.inter_latency;
    options.beta_bytes_per_s = *platform.inter_bandwidth;
  } else if (!request.bandwidth || !request.latency) {
    const auto shape = options.algorithm == AllreduceAlgorithm::Tree ? AllreduceAlgorithm::Tree
                                                                    : AllreduceAlgorithm::Ring;
    if (request.calibration) {
      // A given fit is the network, whatever the trace's ranks; only its shape must match, as
      // alpha and beta mean different things in the ring's and the tree's formulas.
      if ((request.calibration->algorithm == AllreduceAlgorithm::Tree) != (shape == AllreduceAlgorithm::Tree)) {
        throw RequestError(request.calibration_file + ": expected a calibration with the " + to_string(shape) +
                           "'s shape for --allreduce " + to_string(options.algorithm) + ", got one fitted with " +
                           to_string(request.calibration->algorithm) + "'s");
      }
      prepared.calibration = request.calibration;
    } else if (prepared.measured.world_size() < 2) {
      // A one-rank trace has no all-reduce to learn the network from. Replayed as is it
      // communicates nothing and any finite parameters will do; replayed on more ranks the
      // network would be made up, so it must be given.
      if (request.world_size > 1) {
        throw RequestError(request.trace_dir +
                           ": expected a trace of at least 2 ranks to calibrate the network for --world-size " +
                           std::to_string(request.world_size) + ", got 1 (give --bandwidth and --latency)");
      }
      options.alpha_s = 0;
      options.beta_bytes_per_s = 1e9;
    } else {
      prepared.calibration = calibrate(prepared.measured, shape);
    }
    if (prepared.calibration) {
      options.alpha_s = prepared.calibration->alpha_s;
      options.beta_bytes_per_s = prepared.calibration->beta_bytes_per_s;
      if (request.network_ladder) options.network_ladder = *request.network_ladder;
      // Contention between all-reduces and autograd belongs to the measured rate: a told
      // --bandwidth is the network's own and is used as it is.
      if (!request.bandwidth) {
        options.overlap_bandwidth_fraction = prepared.calibration->overlap_bandwidth_fraction;
        // Two at once: the fitted rates are the pair's over the time any was in flight; a told
        // --bandwidth is one all-reduce's already.
        if (request.in_flight_gain) {
          std::tie(options.beta_bytes_per_s, options.overlap_bandwidth_fraction) =
              single_allreduce_rates(*prepared.calibration, *request.in_flight_gain);
        }
      }
    }
  }
  if (request.bandwidth) options.beta_bytes_per_s = *request.bandwidth;
  if (request.latency) options.alpha_s = *request.latency;
  if (request.overlap_bandwidth_fraction) options.overlap_bandwidth_fraction = *request.overlap_bandwidth_fraction;
  if (request.in_flight_gain) {
    options.allreduces_in_flight = 2;
    options.in_flight_gain = *request.in_flight_gain;
  }
}

void choose_platform(const ReplayRequest& request, ReplayOptions& options) {
  PlatformSpec& platform = options.platform;
  platform.kind = request.platform.kind;
  platform.alpha_s = options.alpha_s;
  platform.beta_bytes_per_s = options.beta_bytes_per_s;
  if (request.platform.kind == PlatformKind::TwoLevel) {
    platform.gpus_per_node = request.platform.gpus_per_node;
    platform.intra_bandwidth = request.platform.intra_bandwidth.value_or(options.beta_bytes_per_s);
    platform.intra_latency_s = request.platform.intra_latency.value_or(options.alpha_s);
    platform.inter_bandwidth = request.platform.inter_bandwidth.value_or(options.beta_bytes_per_s);
    platform.inter_latency_s = request.platform.inter_latency.value_or(options.alpha_s);
  }
  if (request.platform.kind == PlatformKind::File) platform.xml_file = request.platform.file;
}

// Unless asked: per-iteration compute replays every source iteration once. Median and mean
// compute are the same every iteration, so 3 show the steady state, unless stalls are asked:
// random stalls are a distribution, and 3 draws of it made the median a lottery (exp(100 ms) on
// a 2-rank MLP: -15 %, +137 %, +127 %, +11 % for seeds 0-3 against the measured run's median; over
// the trace's 29 iterations +0.3 %); then as many iterations as the trace holds. In every mode
// a stall at iteration ITER must be reached: at least through the last stalled iteration.
std::int64_t default_iterations(const ReplayRequest& request, const WorkloadModel& model) {
  const auto source = static_cast<std::int64_t>(model.source_iterations.size());
  const trace::SkewSpec& skew = request.skew;
  const bool stalls = !skew.delays.empty() || !skew.distributions.empty();
  std::int64_t iterations = request.compute == ComputeMode::PerIteration ? source
                            : stalls                                     ? std::max<std::int64_t>(3, source)
                                                                         : 3;
  for (const trace::FixedDelay& delay : skew.delays) {
    if (delay.iteration >= 0) iterations = std::max(iterations, delay.iteration - model.first_source_iteration() + 1);
  }
  return iterations;
}

// The trace, or with pooled_runs the trace and those runs as one (concatenate.hpp).
trace::Trace read_pooled(const ReplayRequest& request) {
  trace::Trace source = trace::read_trace(request.trace_dir);
  if (request.pooled_runs.empty()) return source;
  std::vector<trace::Trace> runs = {std::move(source)};
  for (const std::string& dir : request.pooled_runs) {
    runs.push_back(trace::read_trace(dir));
    const std::string difference = trace::configuration_difference(runs.back().meta(), runs.front().meta(),
                                                                   "the replayed trace's");
    if (!difference.empty()) {
      throw RequestError("--pool " + dir + ": expected a run of the replayed trace's configuration, got " + difference);
    }
  }
  return trace::concatenate_runs(runs);
}

// The request with what its machine profile gives filled in where no flag gave it: the flags
// are overrides. The profile is checked against the trace first.
ReplayRequest with_machine(const ReplayRequest& given, const trace::Trace& measured, std::vector<std::string>& warnings) {
  if (!given.machine) return given;
  ReplayRequest request = given;
  warnings = check_machine_matches(*given.machine, measured, given.machine_file);
  const auto shape = given.algorithm == AllreduceAlgorithm::Tree ? AllreduceAlgorithm::Tree : AllreduceAlgorithm::Ring;
  MachineSettings settings = machine_settings(*given.machine, shape, given.machine_file);
  // The overlap's all-reduce fraction belongs to the network it was measured against: a fit
  // to the trace (--calibration) measured its all-reduces under the job's own contention and
  // keeps its own, and a told --bandwidth is the network's alone.
  const bool network_from_machine = !request.calibration && !request.bandwidth;
  if (network_from_machine) {
    if (auto slow = slow_profile_warning(*given.machine, measured, given.machine_file)) warnings.push_back(*slow);
  }
  if (!request.calibration) {
    request.calibration = std::move(settings.calibration);
    request.calibration_file = given.machine_file;
    // The line is the network where it describes the ladder; where it misses a full ladder
    // beyond what a fit is trusted with, the ladder times each all-reduce (Note [the ladder as
    // the network]).
    if (!request.bandwidth && request.calibration->fit.relative_rms > kMaxTrustedRelativeRms &&
        settings.ladder.rungs() >= kMinLadderRungs) {
      request.network_ladder = std::move(settings.ladder);
    }
  }
  if (network_from_machine && !request.overlap_bandwidth_fraction) {
    request.overlap_bandwidth_fraction = settings.overlap_bandwidth_fraction;
  }
  // Two in flight: Gloo's two lanes always; the profile's gain, timed on idle cores, only
  // where it turns a fit to the trace's pairs into one all-reduce's rate. On the profile's own
  // network the lanes share one's rate. See Note [two at once] in docs/model.md.
  if (!request.in_flight_gain && settings.in_flight_gain) {
    request.in_flight_gain = network_from_machine ? 1.0 : *settings.in_flight_gain;
  }
  if (request.effective_cores.empty() && request.cores == 0) {
    request.effective_cores = settings.effective_cores;
    // Co-location past the most ranks the profile ran on its host is C(k) held flat: say so, as
    // a what-if at that world size is better answered by a profile launched at it.
    const int profiled = settings.effective_cores.empty() ? 0 : settings.effective_cores.rbegin()->first;
    if (profiled > 0 && request.world_size > profiled) {
      char line[400];
      std::snprintf(line, sizeof line,
                    "--machine %s: co-location measured for up to %d ranks on its host; %d ranks take %d's %.3g "
                    "effective cores: measure it launched as the what-if (ddp-launch --nproc-per-node %d -- "
                    "ddp-machine-profile)",
                    given.machine_file.c_str(), profiled, request.world_size, profiled,
                    settings.effective_cores.rbegin()->second, request.world_size);
      warnings.emplace_back(line);
    }
  }
  if (!request.compute_fraction_during_allreduce) {
    request.compute_fraction_during_allreduce = settings.compute_fraction_during_allreduce;
  }
  if (!request.sleep_resume_cost_s) request.sleep_resume_cost_s = settings.sleep_resume_cost_s;
  return request;
}

}  // namespace

PreparedReplay prepare_replay(const ReplayRequest& request) { return prepare_replay(request, read_pooled(request)); }

PreparedReplay prepare_replay(const ReplayRequest& given, trace::Trace measured) {
  PreparedReplay prepared;
  prepared.measured = std::move(measured);
  const ReplayRequest request = with_machine(given, prepared.measured, prepared.warnings);
  const double compute_fraction = request.compute_fraction_during_allreduce.value_or(1.0);
  if (!(compute_fraction > 0 && compute_fraction <= 1)) {
    throw RequestError("--compute-fraction-during-allreduce: expected a fraction in (0, 1], got " + text_of(compute_fraction));
  }
  if (!(request.cores == 0 || (request.cores >= 1 && std::isfinite(request.cores)))) {
    throw RequestError("--cores: expected a number of cores >= 1, got " + text_of(request.cores));
  }
  check_effective_cores(request);
  // Paced core sharing reads the trace's compute at the pace its ranks had (extract_workload)
  // and paces the replay's by the same s(k); a compute fraction below 1 slows autograd beside
  // its rank's transfers on top of that, in both.
  std::function<double(double)> core_slowdown;
  if (request.core_sharing == CoreSharing::Paced) {
    if (request.cores > 0) {
      core_slowdown = [cores = request.cores](double ranks) { return shared_cores_slowdown(cores, ranks); };
    } else {
      core_slowdown = [measured = request.effective_cores](double ranks) { return corun_slowdown(measured, ranks); };
    }
  }
  prepared.model = extract_workload(prepared.measured, request.compute, compute_fraction, core_slowdown);
  prepared.options.compute_fraction_during_allreduce = compute_fraction;
  if (request.unprofiled_iteration_s) {
    prepared.unprofiled_scale = request.unprofiled_scale ? *request.unprofiled_scale
                                                         : unprofiled_compute_scale(given, prepared.measured);
    stretch_compute(prepared.model, prepared.unprofiled_scale);
    char scaled[160];
    std::snprintf(scaled, sizeof(scaled),
                  "compute x%.3f: the trace replayed as it ran then takes the %.4g ms given by "
                  "--unprofiled-iteration-ms (Note [profiler overhead])",
                  prepared.unprofiled_scale, *request.unprofiled_iteration_s * 1e3);
    prepared.warnings.emplace_back(scaled);
  }
  if (auto unchanged = rebucket_if_asked(request, prepared.model)) prepared.warnings.push_back(*unchanged);

  ReplayOptions& options = prepared.options;
  options.algorithm = request.algorithm;
  choose_network(request, prepared);
  options.iterations = request.iterations > 0 ? request.iterations : default_iterations(request, prepared.model);
  options.simgrid_config = request.simgrid_config;
  options.sleep_resume_cost_s = request.sleep_resume_cost_s.value_or(0.0);
  options.independent_copies = request.independent_copies;
  options.world_size = request.world_size;
  options.timeout_s = request.timeout_s;
  // The replay takes slowdowns as a rank → factor map and the stalls as the skew spec; the
  // last --slowdown of a rank wins, as in SkewSpec::slowdown_factor.
  for (const trace::Slowdown& slowdown : request.skew.slowdowns) options.slowdown[slowdown.rank] = slowdown.factor;
  options.skew = request.skew;
  options.skew.slowdowns.clear();
  choose_platform(request, options);
  if (request.max_simulated_flows) {
    if (*request.max_simulated_flows < 0) {
      throw RequestError("--max-simulated-flows: expected a number of flows >= 0, got " +
                         std::to_string(*request.max_simulated_flows));
    }
    options.max_simulated_flows = *request.max_simulated_flows;
  }
  if (!(options.sleep_resume_cost_s >= 0 && options.sleep_resume_cost_s <= 1)) {
    throw RequestError("--sleep-resume-cost: expected seconds in [0, 1], got " + text_of(options.sleep_resume_cost_s));
  }
  if (request.cores > 0) {
    prepared.compute_stretch = shared_cores_stretch(request.cores, prepared.model.world_size, prepared.world_size());
  } else if (!request.effective_cores.empty()) {
    prepared.compute_stretch = corun_stretch(request.effective_cores, prepared.model.world_size, prepared.world_size());
  }
  if (request.core_sharing == CoreSharing::Paced) {
    options.core_trace_ranks = prepared.model.world_size;
    options.core_slowdown = core_slowdown;
    // Forward, autograd and the optimizer are paced as they run; the steps between them are
    // too short to pace and take the stretch of all ranks computing, as uniform sharing does.
    if (prepared.compute_stretch != 1) stretch_steps(prepared.model, prepared.compute_stretch);
    prepared.compute_stretch = 1;
  }
  if (prepared.compute_stretch != 1) stretch_compute(prepared.model, prepared.compute_stretch);
  return prepared;
}

void check_effective_cores(const ReplayRequest& request) {
  for (const auto& [ranks, cores] : request.effective_cores) {
    if (!valid_effective_cores(ranks, cores)) throw effective_cores_error(std::to_string(ranks) + "=" + text_of(cores));
  }
  if (request.cores > 0 && !request.effective_cores.empty()) {
    throw RequestError("--effective-cores: expected either it or --cores, got both");
  }
  // A machine profile of one host gives the effective cores (with_machine); one of several
  // hosts does not, and prepare_replay checks again once the profile is applied.
  if (request.core_sharing == CoreSharing::Paced && request.cores == 0 && request.effective_cores.empty() &&
      !request.machine) {
    throw RequestError("--core-sharing paced: expected --cores or --effective-cores with it, or a --machine "
                       "profile of one host");
  }
}

namespace {

// `text` as a number if all of it is one (NaN included: the callers' ranges refuse it).
std::optional<double> whole_number(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::pair<double, double> single_allreduce_rates(const Calibration& calibration, double gain) {
  // bytes = one's rate x (time one in flight + gain x time two in flight), so one's seconds
  // per byte are the measured ones x (1 + (gain - 1) x the fraction with two in flight).
  const double free_stretch = 1 + (gain - 1) * calibration.two_in_flight_free;
  const double busy_stretch = 1 + (gain - 1) * calibration.two_in_flight_busy;
  const double fraction = std::min(1.0, calibration.overlap_bandwidth_fraction * free_stretch / busy_stretch);
  return {calibration.beta_bytes_per_s / free_stretch, fraction};
}

double parse_allreduces_in_flight(const std::string& text) {
  const auto fail = [&text]() {
    return RequestError("--allreduces-in-flight: expected 2=G, two all-reduces at once together at G in (0, 2] "
                        "times one's rate, got '" + text + "'");
  };
  if (text.rfind("2=", 0) != 0 || text.size() == 2) throw fail();
  const std::optional<double> gain = whole_number(text.substr(2));
  if (!gain || !(*gain > 0 && *gain <= 2)) throw fail();
  return *gain;
}

std::pair<int, double> parse_effective_cores(const std::string& text) {
  const auto fail = [&text]() { return effective_cores_error(text); };
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) throw fail();
  const std::string ranks_text = text.substr(0, equals), cores_text = text.substr(equals + 1);
  if (ranks_text.find_first_not_of("0123456789") != std::string::npos || ranks_text.size() > 9) throw fail();
  const int ranks = std::stoi(ranks_text);
  const std::optional<double> cores = whole_number(cores_text);
  if (!cores || !valid_effective_cores(ranks, *cores)) throw fail();
  return {ranks, *cores};
}

}  // namespace ddpsim::sim
