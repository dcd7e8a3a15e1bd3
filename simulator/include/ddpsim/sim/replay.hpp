// Replaying a workload on a simulated platform with SimGrid.
//
// Per class of identical ranks (all of them alike but for the rank number: same compute,
// slowdown and stalls), two actors on its first rank's host (S4U style: plain functions):
//   compute-R  sleeps through the measured compute phases and tells comm-R when backward
//              starts; at the end of backward it waits for the last all-reduce;
//   comm-R     the communication stream: all-reduces the buckets in bucket order, each
//              once it is ready (backward_begin + measured offset) and the previous one is
//              done; or, with two lanes (allreduces_in_flight), launches each ready bucket on an
//              actor of its own once fewer than two are in flight.
// The predicted run is recorded as trace events (t_ns = simulated seconds × 1e9).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/network_ladder.hpp"
#include "ddpsim/sim/platform.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/model.hpp"
#include "ddpsim/trace/skew.hpp"

namespace ddpsim::sim {

// The network configuration every replay starts from: CM02 (no TCP slow-start latency
// factor, unlike the default LV08, whose factors put a ring far off its α-β formula), no
// cross-traffic (acknowledgements would share the links a ring uses in both directions),
// and no TCP window cap (it throttles high-latency flows). `--cfg` entries override these.
extern const std::vector<std::string> kDefaultSimgridConfig;

struct ReplayOptions {
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::RingAggregated;
  PlatformSpec platform;
  // The α-β parameters: used by Analytic directly and recorded in the predicted trace.
  double alpha_s = 0;
  double beta_bytes_per_s = 0;
  // Not empty: each all-reduce carries NetworkLadder::carried_bytes of its bytes, so that on
  // this α and β (the line fitted to the ladder) it takes the ladder's time at its size.
  // See Note [the ladder as the network] in docs/model.md.
  NetworkLadder network_ladder;
  std::int64_t iterations = 3;
  // SimGrid configuration "key:value", applied after kDefaultSimgridConfig.
  std::vector<std::string> simgrid_config;
  // What-ifs.
  int world_size = 0;             // 0: the trace's; ranks beyond it replay a measured rank drawn from rank_copy_seed
  double timeout_s = 0;           // 0: none; else an all-reduce waiting longer fails the run
  std::map<int, double> slowdown;  // rank → factor on its compute phases
  // Stalls at the start of an iteration (--delay, --delay-dist, seed), drawn with the shared
  // pure sampler so a replay stalls exactly where `ddp-train` with the same flags would.
  // Its slowdowns are ignored here: they belong in `slowdown`. The iteration a stall
  // applies to is the predicted iteration's number (the replayed source iteration's).
  trace::SkewSpec skew;
  // 0: simulated iteration k replays source iteration k (cycling). Otherwise it replays a
  // source iteration drawn from (resample_seed, k), the same one on every rank: a bootstrap
  // of the measured iterations that keeps what ranks had in common in each iteration.
  std::uint64_t resample_seed = 0;
  // Which measured rank a rank beyond the trace replays, per (rank, iteration): its own
  // stream, so new stall draws (skew.seed) do not also change the copied ranks
  // (seeds_of_run in monte_carlo_runs.hpp derives both from one --seed).
  std::uint64_t rank_copy_seed = 0;
  // Which iteration a rank beyond the trace replays. false: the measured ranks' own (source
  // iteration k, or the bootstrap's draw, the same on every rank): a copy's compute moves with
  // theirs, as if the ranks' noise were fully correlated. true: one drawn per (rank_copy_seed,
  // resample_seed, rank, iteration): uncorrelated, so each all-reduce waits for the slowest of
  // independent draws. Every copy then is its own class (replay_classes.hpp): for small
  // what-ifs. See Note [independent copies] in docs/model.md.
  bool independent_copies = false;
  // An aggregated collective (ring-agg, tree) whose flows share links is timed with
  // SimGrid's flow model when it has at most this many flows, else with the max-min
  // bottleneck bound (network_phase.hpp). Either way once per message size.
  std::int64_t max_simulated_flows = 4096;
  // The network's all-reduce rate while any rank's autograd still runs, as a fraction of its
  // rate (Calibration::overlap_bandwidth_fraction): where communication shares processors
  // with compute, a transfer that starts during backward goes at this fraction of the rate
  // until the last rank's autograd is done, then at the full rate. 1: no contention.
  // See Note [two rates] in docs/model.md.
  double overlap_bandwidth_fraction = 1;
  // The other side: autograd's rate while its rank's all-reduce transfers, as a fraction of its
  // rate alone (Gloo's threads take CPU from it where they share the cores). Below 1 the
  // backward is paced as it goes, and the model's ready offsets must be autograd's time alone
  // (extract_workload with the same fraction). 1: no contention, offsets replayed as measured.
  double compute_fraction_during_allreduce = 1;
  // Ranks that share one machine's cores, paced as they share them (ReplayRequest::
  // core_sharing): s(k), how many times slower each of k ranks computing at once goes than one
  // alone (corun_slowdown). The model's compute is work at the pace of `core_trace_ranks`
  // ranks computing at once (extract_workload with the same s), so a rank computes at
  // s(core_trace_ranks) / s(k) of that pace, k the ranks computing now, re-evaluated whenever
  // one starts or stops: a rank whose peers stall or wait on the network computes faster.
  // Forward, autograd and the optimizer step count as computing; a rank slowed xF by sleeps
  // counts 1/F. Empty: compute as measured (a uniform stretch, if any, was applied to the
  // model beforehand). See Note [paced cores] in docs/model.md.
  std::function<double(double)> core_slowdown;
  int core_trace_ranks = 1;
  // A rank slowed by ddp-train --slowdown sleeps after each gradient and each forward and
  // optimizer phase; resuming after a sleep costs it this much more compute, charged after
  // each sleep of a rank whose slowdown factor is above 1. An artefact of injecting a
  // straggler by sleeping, kept apart from the slowdown factor. 0: none.
  // See Note [sleep resume cost] in docs/model.md.
  double sleep_resume_cost_s = 0;
  // How many of a rank's all-reduces transfer at once. 1: one stream, bucket b once it is ready
  // and bucket b-1 is done. 2: Gloo's two worker threads (ProcessGroupGloo's default), a
  // bucket transfers once it is ready and fewer than two of its rank's are in flight; two in
  // flight go at in_flight_gain times one's rate together, shared equally, each paced as
  // the other and autograd start and stop (paced_transfers.hpp). The network is timed by its
  // closed form (network_phase.hpp), at overlap_bandwidth_fraction of it while any rank's
  // autograd runs. 2 needs a network that has one: no explicit ring, no --cfg network model.
  // in_flight_gain, in (0, 2], is used only with 2. See Note [two at once] in docs/model.md.
  int allreduces_in_flight = 1;
  double in_flight_gain = 1;
};

struct ReplayResult {
  // Per rank, sorted by t_ns; or, when class_of is not empty, per class of identical ranks:
  // events[c] are those of class c's first rank, which every rank r with class_of[r] == c
  // replays under its own number (a failure stays with the first).
  // See Note [ranks as classes] in docs/model.md.
  std::vector<std::vector<trace::Event>> events;
  std::vector<int> class_of;
  double simulated_end_s = 0;  // simulated clock when the run ended
  double wall_s = 0;           // host time the simulation took
  std::int64_t messages = 0;   // simulated point-to-point messages
  std::string failure;         // empty, or what failed (e.g. a timeout)
  // --allreduce auto: the choice for each message size all-reduced, by size.
  std::vector<AllreduceChoice> allreduce_choices;

  int world_size() const { return static_cast<int>(class_of.empty() ? events.size() : class_of.size()); }
};

// Bad options or platform, or a SimGrid error: what() is one line.
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Checks options without starting SimGrid (world size, algorithm vs platform, numbers).
void check_replay_options(const WorkloadModel& model, const ReplayOptions& options);

// Runs the simulation in this process. SimGrid allows one engine per process and freezes
// its configuration once started, so this can be called once per process; use
// replay_isolated to run several.
ReplayResult replay(const WorkloadModel& model, const ReplayOptions& options);

// Runs replay() in a forked child and returns its result; a SimGrid abort in the child
// (e.g. a malformed platform file) becomes a SimulationError with SimGrid's one-line reason.
ReplayResult replay_isolated(const WorkloadModel& model, const ReplayOptions& options);
// replay_isolated with its result kept per class (ReplayResult::class_of): for W ranks of a few
// classes, memory and time that grow with the classes. per_rank() writes every rank out.
ReplayResult replay_isolated_by_class(const WorkloadModel& model, const ReplayOptions& options);
// Every rank's events under its own number; a result per rank is returned as it is.
ReplayResult per_rank(ReplayResult result);

}  // namespace ddpsim::sim
