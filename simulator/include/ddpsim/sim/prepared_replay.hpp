// A what-if request, made ready to replay: the trace read, its workload extracted (and
// re-bucketed if asked), the network calibrated unless given, the platform chosen. Every
// `ddp-sim` subcommand that replays (replay, timeout-curve, sweep, advise) starts here, so they agree
// on what a flag means; the CLI only turns flag text into this request.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/sim/network_ladder.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "ddpsim/trace/model.hpp"
#include "ddpsim/trace/skew.hpp"

namespace ddpsim::sim {

// A request that cannot be replayed as asked (a flag's value against this trace): what() is
// one line naming the flag and what was expected. The CLI exits 2 on it.
class RequestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How ranks sharing one machine's cores slow each other's compute (ReplayRequest::core_sharing).
enum class CoreSharing { Uniform, Paced };

// The platform a replay runs on: kind, and the two-level shape's links (unset: the star's α, β).
// `cluster` names the preset (--cluster) that filled them: a what-if's platform, not the one the
// trace ran on (unprofiled_compute_scale leaves it out, back to the default).
struct PlatformRequest {
  std::string cluster;
  PlatformKind kind = PlatformKind::Star;
  std::string file;
  int gpus_per_node = 1;
  std::optional<double> intra_bandwidth;
  std::optional<double> intra_latency;
  std::optional<double> inter_bandwidth;
  std::optional<double> inter_latency;
};

struct ReplayRequest {
  std::string trace_dir;
  // Other measured runs of trace_dir's configuration replayed with it as one run, their
  // iterations after its own (trace::concatenate_runs, --pool): a prediction at the machine's
  // typical speed rather than one run's. RequestError naming --pool when one is of another
  // configuration.
  std::vector<std::string> pooled_runs;
  // Per-iteration is the most accurate on what-ifs (ddpsim.bench.validate_whatif): the
  // median mode replays every rank at its median speed and loses the cost of noisy ranks
  // meeting at each all-reduce.
  ComputeMode compute = ComputeMode::PerIteration;
  std::int64_t iterations = 0;  // 0: every source iteration with per-iteration or stalls, else 3
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::RingAggregated;
  std::optional<double> bandwidth;  // unset: calibrated from the trace
  std::optional<double> latency;
  // A fit made earlier (`ddp-sim calibrate --json`, read by read_calibration): used instead of
  // fitting the trace again where the trace would be fitted. Its shape (ring or tree) must be
  // the one the algorithm is calibrated with (RequestError).
  std::optional<Calibration> calibration;
  std::string calibration_file;  // where it came from, for errors
  // A machine profile (--machine; traces/MACHINE.md): where the request leaves them unset, the
  // network (instead of fitting the trace), in_flight_gain (two lanes at one's rate on the
  // profile's network) and effective_cores come from it (machine_settings.hpp). RequestError
  // when it does not belong with the trace (another backend, another number of hosts);
  // PreparedReplay::warnings for what it approximates.
  std::optional<trace::MachineProfile> machine;
  std::string machine_file;  // where it came from, for errors
  // Where the network is the calibration's: each all-reduce timed by this ladder
  // (ReplayOptions::network_ladder). Set from the machine profile where its network is taken and
  // the line fitted to its ladder misses it beyond kMaxTrustedRelativeRms.
  std::optional<NetworkLadder> network_ladder;
  PlatformRequest platform;
  std::vector<std::string> simgrid_config;
  int world_size = 0;  // 0: the trace's
  double timeout_s = 0;
  // Slowdowns, stalls and their seed, parsed by the trace library's skew syntax.
  trace::SkewSpec skew;
  std::optional<double> bucket_cap_mb;
  std::optional<double> first_bucket_cap_mb;
  // A per-bucket list of caps, MiB (DDP's bucket_cap_mb_list): re-bucketed through the same
  // rebucket() as one cap. Not with the two caps above (RequestError).
  std::vector<double> bucket_caps_mb;
  // 0: compute as measured. N: the trace's ranks and the what-if's all share one machine's N
  // cores (loopback, or testbed hosts that are namespaces of one machine): compute is stretched
  // by shared_cores_stretch(N, the trace's ranks, the simulated ranks). N counts effective
  // cores, the machine's throughput with every core busy in units of one rank alone: ranks that
  // co-run slow each other down through shared memory bandwidth and clock, so a 2-core machine
  // whose 2 ranks each run 1.2x slower together has 1.67 (experiments/peer/corun_bench.sh).
  double cores = 0;
  // Or co-running measured at several rank counts (corun_stretch): k -> effective cores C(k),
  // k >= 2, 0 < C(k) <= k (experiments/peer/corun_bench.sh --copies k). Not with `cores`.
  std::map<int, double> effective_cores;
  // How `cores` or `effective_cores` apply: Uniform stretches all compute by the stretch at
  // the simulated world size (all ranks always computing); Paced paces each compute phase by
  // the ranks computing beside it at each instant (ReplayOptions::core_slowdown).
  CoreSharing core_sharing = CoreSharing::Uniform;
  std::optional<double> sleep_resume_cost_s;  // ReplayOptions::sleep_resume_cost_s; unset: the machine's, else 0
  bool independent_copies = false;  // ReplayOptions::independent_copies
  // The all-reduce rate while autograd runs as a fraction of the full rate
  // (ReplayOptions::overlap_bandwidth_fraction). Unset: the calibration's, or 1 with a told
  // --bandwidth; set: used as it is (a benchmark's, e.g. for a 1-rank baseline with no
  // all-reduce to fit).
  std::optional<double> overlap_bandwidth_fraction;
  // Autograd's rate while its rank's all-reduces transfer, as a fraction of its rate alone
  // (ReplayOptions::compute_fraction_during_allreduce; a benchmark's, allreduce_bench.py --busy).
  // Unset: 1, the measured backward replayed as it was.
  std::optional<double> compute_fraction_during_allreduce;
  // ReplayOptions::max_simulated_flows (unset: its default).
  std::optional<std::int64_t> max_simulated_flows;
  // Two of a rank's all-reduces at once, together at this times one's rate (--concurrent-
  // allreduces 2=G; ReplayOptions::allreduces_in_flight). Unset: one at a time. A rate fitted from
  // the trace, which is bytes over the time any was in flight, becomes one all-reduce's
  // (single_allreduce_rates); a told --bandwidth is one's already.
  std::optional<double> in_flight_gain;
  // The traced configuration's median iteration time without the profiler, seconds (a profiled
  // job's own log of its unprofiled steps). Set: every rank's compute is scaled so that the trace
  // replayed as it ran (no what-if) takes this long, and the what-if is replayed with that
  // compute (unprofiled_compute_scale). Note [profiler overhead] in docs/model.md.
  std::optional<double> unprofiled_iteration_s;
  // The factor unprofiled_compute_scale already found for unprofiled_iteration_s and this trace:
  // used as it is, so that requests that differ only in their what-ifs (a sweep's points) search
  // it once. Unset: searched.
  std::optional<double> unprofiled_scale;
};

struct PreparedReplay {
  trace::Trace measured;
  WorkloadModel model;
  ReplayOptions options;
  std::optional<Calibration> calibration;  // set when α, β were fitted (to the trace or a machine profile)
  double compute_stretch = 1;  // applied to every rank's compute (ReplayRequest::cores)
  double unprofiled_scale = 1;  // applied to every rank's compute (ReplayRequest::unprofiled_iteration_s)
  // What the replay approximates and a reader should know (a machine profile of another world
  // size, ...), one sentence each.
  std::vector<std::string> warnings;

  // The simulated world size: the request's, else the trace's.
  int world_size() const { return options.world_size > 0 ? options.world_size : model.world_size; }
};

// Throws trace::TraceError (unreadable trace), WorkloadError, CalibrationError or RequestError.
PreparedReplay prepare_replay(const ReplayRequest& request);
// The same with the trace already read (request.trace_dir and pooled_runs are not read):
// `ddp-sim advise` prepares its answers this way, so they rest on replay's model.
PreparedReplay prepare_replay(const ReplayRequest& request, trace::Trace measured);

// The factor on every rank's compute that makes `measured`, replayed as it ran under the
// request's machine settings, take request.unprofiled_iteration_s (which must be set). A
// RequestError naming --unprofiled-iteration-ms when no factor comes within 1 % (a time below
// what the trace's all-reduces alone take).
double unprofiled_compute_scale(const ReplayRequest& request, const trace::Trace& measured);

// One --effective-cores K=C text: {K, C}; RequestError naming the flag unless K is an integer
// >= 2 and C a number in (0, K].
std::pair<int, double> parse_effective_cores(const std::string& text);

// One --allreduces-in-flight K=G text: G, the gain of two at once; RequestError naming the
// flag unless K is 2 and G a number in (0, 2].
double parse_allreduces_in_flight(const std::string& text);

// A calibration's rates, which count bytes over the time any all-reduce was in flight, as one
// all-reduce's alone when two at once go at `gain` times that together: the time with two in
// flight (Calibration::two_in_flight_*) carried gain times one's bytes. Returns {beta, the
// fraction while autograd runs}.
std::pair<double, double> single_allreduce_rates(const Calibration& calibration, double gain);

// RequestError naming --effective-cores unless every entry has K >= 2 and C in (0, K] and
// `cores` is not also given, or naming --core-sharing when paced has no cores to share: what
// prepare_replay checks, for a CLI to check before any work.
void check_effective_cores(const ReplayRequest& request);

}  // namespace ddpsim::sim
