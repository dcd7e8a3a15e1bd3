// `ddp-sim advise`: three decisions from one trace, each from replays of it.
//
//   bucket size  re-bucket at each candidate cap (rebucket.hpp) and replay with bootstrap
//                replicates; a cap's gain over the trace's own cap is the median over the
//                paired replicates of 1 - its median / the own cap's, with the 90 % interval
//                of the same ratios (paired_gain). Recommend the cap of the largest gain when
//                its interval lies above 0 and it is at least kMinBucketGain, else "keep what
//                you have" (bucket_gain_worth_it). Second answer: a
//                per-bucket list of caps (DDP's bucket_cap_mb_list) from a small family (first
//                k buckets small, then large), through the same re-bucketing, its paired gain
//                over the best single cap with the same "keep" rule;
//   timeout      every kind of collective the trace shows (gradient all-reduces, the first
//                iteration and the bucket rebuild, buffer broadcasts, evaluation, checkpoint
//                barriers, the start-up's check and broadcast, other collectives) gives its
//                observed waits and the timeout it needs: twice its longest wait, and, with enough observations, an exponential
//                tail fitted above the median at a 95 % upper confidence bound on its scale,
//                with P(false timeout) <= epsilon per day split over the fitted kinds; or, for
//                the gradient all-reduces with a user-given stall model (--stall-dist), the
//                median measured wait plus the stall that the model exceeds with that
//                probability. The advice is the largest need; kinds the trace cannot show are
//                named. A replay with a hung rank gives the time to detect a real hang; the
//                bound adds the longest stretch a rank spends between collectives.
//                See Note [timeout over every collective] in docs/model.md;
//   stragglers   replay with one rank's compute replaced by the typical rank's (per
//                iteration, the rank of lower-median compute), then with every rank's; a
//                rank's cost is the drop in iteration time, and it is a straggler only when
//                the cost's bootstrap interval excludes 0 and lies above the typical rank's,
//                and the cost exceeds the typical rank's by kMinStragglerShare of the iteration.
//
// Every answer carries `model`: the all-reduce model, platform and where α and β came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/monte_carlo.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/run_to_run.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "ddpsim/trace/model.hpp"
#include "ddpsim/trace/skew.hpp"

namespace ddpsim::sim {

// The replay every answer starts from: per-iteration compute, ring-agg on a star with α and β
// fitted to the trace (or, for a one-rank trace, no network).
struct AdviceSetup {
  WorkloadModel model;
  ReplayOptions options;
  std::optional<Calibration> calibration;
  double median_iteration_s = 0;  // measured (ddp-trace summary's)
  std::string model_description;  // one line: compute, all-reduce, platform, α/β and their source
};

// Throws CalibrationError / WorkloadError when the trace cannot be replayed. `machine`: a
// machine profile (--machine) the replays take their network, in-flight gain and co-location
// from (ReplayRequest::machine), RequestError when it does not belong with the trace; `warnings`
// (if given) hears what it approximates.
// unprofiled_iteration_s: a profiled trace's job without the profiler (ReplayRequest's, --unprofiled-iteration-ms).
AdviceSetup prepare_advice(const trace::Trace& trace, const std::optional<trace::MachineProfile>& machine = std::nullopt,
                           const std::string& machine_file = "", std::vector<std::string>* warnings = nullptr,
                           std::optional<double> unprofiled_iteration_s = std::nullopt);

// Paired bootstrap: run 0 replays the trace's iterations in order; runs 1..runs-1 resample
// them with the seeds `ddp-sim replay --bootstrap` uses, so two calls with the same `runs`
// and `seed` see the same resampled iterations (their differences are paired).
std::vector<RunOutcome> bootstrap_replays(const WorkloadModel& model, const ReplayOptions& options, int runs,
                                          std::uint64_t seed);

// The 90 % interval of a per-replicate statistic, from runs 1..N-1 (run 0 is the estimate).
struct Interval {
  double low = 0;
  double high = 0;
  bool excludes_zero() const { return low > 0 || high < 0; }
};
Interval interval_of(const std::vector<double>& replicates, double level = 0.9);

// ---- bucket size --------------------------------------------------------------------------

// A gain and its interval from paired replicates: replicate k of both replays resampled the same
// iterations, so each pair gives one ratio 1 - other_k / own_k. `gain` is their median and
// `interval` their 90 % interval: one statistic, so the point always lies inside its interval.
struct PairedGain {
  double gain = 0;
  Interval interval;
  int pairs = 0;  // pairs with own_k > 0 (0: gain 0, interval [0, 0])
};
PairedGain paired_gain(const std::vector<double>& own_replicates_s, const std::vector<double>& other_replicates_s);

struct BucketCandidate {
  double cap_mb = 0;
  int buckets = 0;
  double median_s = 0;  // run 0
  Interval median_interval_s;
  std::vector<double> replicate_medians_s{};  // runs 1..N-1, paired across candidates (same seeds)
  double gain = 0;        // paired_gain over the trace's own cap (0 for the own cap)
  Interval gain_interval;
  std::optional<Interval> drift_gain_interval;  // with --repeats: widened_gain(gain_interval)
};

// A per-bucket list of caps (the second answer), predicted like a single cap.
struct BucketListCandidate {
  std::vector<double> caps_mb;  // bucket i's cap, the last repeating
  int buckets = 0;
  double median_s = 0;          // run 0
  Interval median_interval_s;   // only for the best list (bootstrapped)
  std::vector<double> replicate_medians_s{};  // only for the best list: runs 1..N-1, paired with the single caps'
};

struct BucketListAdvice {
  bool searched = false;
  std::string family;           // what was searched, one line
  int lists = 0;                // lists in the family
  int distinct_layouts = 0;     // layouts they gave (each replayed once in order)
  std::vector<BucketListCandidate> candidates;  // one per distinct layout, fastest first
  BucketListCandidate best;     // the fastest in order, bootstrapped like the single caps
  double gain = 0;              // paired_gain of the best list over the best single cap
  Interval gain_interval;
  std::optional<Interval> drift_gain_interval;  // with --repeats: widened_gain(gain_interval)
  bool keep = false;            // !bucket_gain_worth_it: keep one cap
};

struct BucketAdvice {
  bool available = false;
  std::string unavailable_reason;  // e.g. a profiler import without per-parameter gradients
  double own_cap_mb = 0;           // the trace's bucket_cap_mb
  BucketCandidate own;             // the trace's cap, re-bucketed like the candidates
  std::vector<BucketCandidate> candidates;  // sorted by cap
  BucketCandidate best;     // the candidate of the largest gain (the own cap when none gains)
  double gain = 0;          // best.gain: the median of the paired replicates' 1 - best / own
  Interval gain_interval;   // best.gain_interval: 90 % of the same ratios
  bool keep = false;        // !bucket_gain_worth_it(gain, gain_interval): within the noise, or too small
  double recommended_cap_mb = 0;  // best.cap_mb, or own_cap_mb when keep
  std::vector<double> own_caps_mb;  // the trace's bucket_cap_bytes_list in MiB (empty: none)
  BucketListAdvice list;            // the second answer
  std::string model;
  // The drift between measured runs of the trace's configuration (advise --repeats): when
  // given, every gain also gets drift_gain_interval, where a measured run's gain should fall
  // (widen_by_drift). keep is decided on the paired interval: drift moves a run's speed, not
  // the gain a change brings on average.
  std::optional<RunToRunSpread> drift;
  std::optional<Interval> drift_gain_interval;  // best's
};

// A change of cap (or to a list) is advised only for a paired gain whose interval lies above 0
// and whose median is at least kMinBucketGain of the iteration: the paired replicates are so
// alike that an interval of a 0.01 % gain may exclude 0, and such a gain is not worth a change
// (nor within what the replay's model can promise).
inline constexpr double kMinBucketGain = 0.01;
inline bool bucket_gain_worth_it(double gain, const Interval& interval) {
  return interval.low > 0 && gain >= kMinBucketGain;
}

// A paired gain's interval widened to where a measured gain should fall: a run at one cap is
// compared with a run at the other, and each run's median drifts by the ratios of `spread`, so
// 1 - other / own moves to [1 - (1 - low) · ratio_high, 1 - (1 - high) · ratio_low]. See Note
// [bucket gain and drift] in docs/model.md.
Interval widened_gain(const Interval& gain_interval, const RunToRunSpread& spread);

// Sets advice.drift and every drift_gain_interval of `advice` (candidates, the best, the list):
// their gain intervals widened by `spread`. The advice itself (keep, the cap) does not change.
void widen_by_drift(BucketAdvice& advice, const RunToRunSpread& spread);

// Caps in MiB (empty: kDefaultBucketCapsMb); `runs` >= 11.
inline const std::vector<double> kDefaultBucketCapsMb = {0.25, 0.5, 1, 2, 5, 10, 25, 50, 100};
// The per-bucket lists searched (second answer): the first k buckets at a small cap S, the
// rest at a larger cap L: [S]*k + [L] for S in kListSmallCapsMb, k in 1..kListMaxSmallBuckets,
// L in the single caps searched above S. Each list is re-bucketed; lists giving the same layout
// are replayed once (in order), and only the fastest is bootstrapped.
inline const std::vector<double> kListSmallCapsMb = {0.25, 0.5, 1, 2};
inline constexpr int kListMaxSmallBuckets = 3;
BucketAdvice advise_bucket_cap(const AdviceSetup& setup, std::vector<double> caps_mb, int runs, std::uint64_t seed,
                               bool search_lists = true);

// "[S]*k + [L]" lists of the family above, for single caps `caps_mb` (sorted, distinct).
std::vector<std::vector<double>> bucket_list_family(const std::vector<double>& caps_mb);

// ---- timeout ------------------------------------------------------------------------------

// Per iteration of `iterations`, the longest any rank spent in one all-reduce: the arrival
// spread (latest allreduce_begin − the rank's) plus the transfer, i.e. max over buckets and
// ranks of allreduce_end − allreduce_begin. A timeout bounds this, less any time the bucket
// queued behind the previous one: Gloo's clock starts when a worker thread runs the
// collective, the replay's when its stream starts the bucket (allreduce_begin is the launch),
// so the advice errs long by that queueing, never short.
std::vector<double> allreduce_waits_s(const trace::Trace& trace, const std::vector<std::int64_t>& iterations);

// One kind of collective in the trace and the waits a rank spent in it (collective_waits).
struct CollectiveWaits {
  std::string kind;  // gradient_allreduce, first_iterations, before_forward, evaluation, checkpoint, start_up,
                     // other_collectives
  std::string what;  // one line: the collective and how its wait is read from the trace
  bool bound = false;             // waits are a phase's length (the trace does not show the collective's own)
  std::vector<double> waits_s;    // per occurrence, the longest of any rank
  double phase_max_s = 0;         // the longest phase around this kind's collective (0: none): an
                                  // evaluation, a checkpoint's gap, a first iteration
  double occurrences_per_iteration = 0;  // occurrences / the trace's complete iterations
  bool once_per_run = false;      // happens once per run (start_up): its support is counted in runs
  // The answer for this kind (advise_timeout).
  bool fitted = false;            // a tail was fitted (>= kMinTailObservations waits)
  double p50_s = 0;
  double max_s = 0;
  double floor_s = 0;             // kFloorFactor × max_s; with too few waits to fit, × max(max_s, phase_max_s)
  double tail_threshold_s = 0;    // u: the median wait
  double tail_scale_s = 0;        // σ̂: mean excess of the waits above u
  double tail_scale_upper_s = 0;  // σ_U: its upper confidence bound (chi-square, 2k degrees of freedom)
  int exceedances = 0;            // k: waits above u
  double probability = 0;         // P(false timeout) per occurrence allowed to this kind
  double tail_s = 0;              // u + σ_U ln((k/n) / probability)
  bool extrapolated = false;      // probability × observations < 1: beyond what was observed
  double iterations_to_support = 0;  // iterations that would show that probability at 95 % (3 / p per occurrence)
  double needed_s = 0;            // max(floor, tail): the timeout this kind needs
};

// A kind of collective the job runs that the trace cannot show, and why.
struct UnaccountedKind {
  std::string kind;
  std::string reason;
};

// The floor every kind's need respects: its longest wait times this, and for a kind with too few
// waits to fit, the longest phase around its collective times this (a rank may wait out a peer's
// whole phase). Tails are fitted to kinds with at least kMinTailObservations waits, at
// kTailConfidence on the scale.
inline constexpr double kFloorFactor = 2.0;
inline constexpr int kMinTailObservations = 8;
inline constexpr double kTailConfidence = 0.95;
// Fewer replayable iterations than kMinAdviceIterations: `ddp-sim advise` refuses the trace
// (advisable_problem); fewer than kFewIterations: every answer carries a warning (few_iterations_warning).
inline constexpr int kMinAdviceIterations = 2;
inline constexpr int kFewIterations = 10;

// Every kind of collective wait in `trace` (Note [timeout over every collective]):
//   gradient_allreduce  per steady iteration (of `steady`), the longest allreduce_end − begin;
//   first_iterations    DDP's iteration 0 and each iteration whose bucket layout is new (the
//                       rebuild): the longest of its all-reduces and its start until
//                       forward_begin (the rebuild's broadcast), less the rank's own delays;
//   before_forward      per steady iteration, iteration_begin → forward_begin less the rank's
//                       own delays: DDP's buffer broadcast (models with buffers);
//   evaluation          per eval phase: the longest `collective` event inside it, else the
//                       phase's length (a bound);
//   checkpoint          per checkpoint (settings.checkpoint_every): the longest `collective`
//                       event (its barrier) from the iteration's end (or its evaluation's) to
//                       the next iteration_begin, else that gap (a bound);
//   start_up            DDP's start-up collectives (`collective` events with message start_up,
//                       ddp-train's parameter check and broadcast from rank 0): each one's dur_ns;
//   other_collectives   every other `collective` event's dur_ns (profiler imports).
// Kinds with no observation are left out; `unaccounted` (if given) hears what the trace cannot
// show. Waits are per rank (one clock each), so ranks of different hosts need no common clock.
std::vector<CollectiveWaits> collective_waits(const trace::Trace& trace, const std::vector<std::int64_t>& steady,
                                              std::vector<UnaccountedKind>* unaccounted = nullptr);

// The longest a rank spends between leaving one collective and entering the next (seconds): a
// hung peer is noticed only at the next collective, so detection takes up to this + the timeout.
double longest_between_collectives_s(const trace::Trace& trace);

// Iterations of the trace's last layout, less DDP's first iteration and each rebuild.
std::vector<std::int64_t> steady_iterations(const trace::Trace& trace, const std::vector<std::int64_t>& source_iterations);

// Empty when the trace can be advised on; else one line saying what it lacks (one rank, fewer
// than kMinAdviceIterations replayable iterations).
std::string advisable_problem(const trace::Trace& trace, const AdviceSetup& setup);

// Empty, or one line when the answers rest on fewer than kFewIterations replayable iterations.
std::string few_iterations_warning(const AdviceSetup& setup);

// What a profiler import lacks that the answers would need, one line each (empty: measured).
std::vector<std::string> import_lacks(const trace::Trace& trace);

// The confident tail: u, σ̂, its upper bound σ_U = 2kσ̂ / χ²_{1−confidence}(2k), and the timeout
// u + σ_U ln((k/n) / p), never below the longest wait. Fills the tail fields of `waits`.
void fit_tail(CollectiveWaits& waits, double per_occurrence_probability, double confidence = kTailConfidence);

// The q-quantile of a chi-square distribution with 2k degrees of freedom (k >= 1): its CDF
// 1 − e^(−x/2) Σ_{j<k} (x/2)^j / j! solved by bisection.
double chi_square_quantile_even(int k, double q);

struct TimeoutAdvice {
  bool available = false;
  std::string unavailable_reason;  // e.g. a one-rank trace
  // The stall model used: empty, the trace's own waits (the fitted tail); otherwise the
  // user's --stall-dist distributions (replay's --delay-dist syntax), in their flag syntax.
  std::vector<std::string> stall_dist;
  double stall_quantile_s = 0;   // given model: the stall exceeded with the per-iteration probability
  bool measured_exceeds = false; // given model: a measured wait is longer than the timeout
  double epsilon = 0;             // P(false timeout) per day allowed
  double iterations_per_day = 0;  // given, or 86400 / measured median iteration
  bool iterations_per_day_assumed = false;
  int wait_samples = 0;          // iterations with a measured wait
  double wait_p50_s = 0;
  double wait_max_s = 0;
  bool tail_fitted = false;      // the gradient all-reduces had kMinTailObservations waits or more
  double tail_threshold_s = 0;   // u: the tail is fitted above the median wait
  double tail_scale_s = 0;       // σ: mean excess above u (exponential tail)
  double per_iteration_probability = 0;  // 1 − (1 − ε)^(1 / iterations per day)
  double timeout_s = 0;          // timeout_for_probability
  int hang_rank = 0;
  double time_to_detect_s = 0;   // replay: hang start → the first rank's timeout
  bool replay_survives = false;  // the trace replayed with this timeout completes
  std::string model;
  // Every collective (Note [timeout over every collective]): timeout_s above is the largest need.
  std::vector<CollectiveWaits> kinds;
  std::vector<UnaccountedKind> unaccounted;
  std::string limiting_kind;          // the kind whose need is timeout_s
  double confidence = kTailConfidence;
  double longest_between_collectives_s = 0;
  double detection_time_s = 0;        // bound: timeout_s + longest_between_collectives_s
  bool extrapolated = false;          // some fitted kind claims a probability below 1 / its observations
  double iterations_to_support = 0;   // the most iterations any fitted kind's claim needs observed
  std::vector<std::string> covers;    // one line per kind observed
  std::vector<std::string> assumes;   // what the bound takes for granted
  std::vector<std::string> warnings;  // too little data, extrapolation, bounds instead of waits
};

// The smallest timeout (seconds) whose P(false timeout per iteration) is at most
// `per_iteration_probability` under the exponential tail fitted to `waits_s` above their
// median u (σ the mean excess): u + σ ln(P(wait > u) / p), never below the longest wait
// measured nor 1 ms. Closed form; monotone in p.
double timeout_for_probability(const std::vector<double>& waits_s, double per_iteration_probability,
                               double* threshold_s = nullptr, double* scale_s = nullptr);

// With a user-given stall model: the stall x (seconds) with P(the longest stall of any rank
// > x) = p per iteration, every rank's stall independent ('all' = each rank), i.e.
// 1 - prod_r (1 - S_r(x)) = p with S_r the survival function of rank r's distribution
// (exp: e^(-x/mean); lognormal: erfc((ln x - mu) / (sigma sqrt 2)) / 2; uniform: linear).
// Solved by bisection to 1e-12 relative. Throws std::invalid_argument (one line naming
// --stall-dist) when a rank has two distributions or is not below world_size.
double stall_for_probability(const std::vector<trace::DelayDistribution>& stalls, int world_size,
                             double per_iteration_probability);

// iterations_per_day <= 0: 86400 / the measured median iteration. `stall_model` empty: the
// trace's own waits (the fitted tail); otherwise the timeout is the median measured wait (the
// transfer and the usual arrival spread) plus stall_for_probability, and the replay that checks
// it survives runs with those stalls.
TimeoutAdvice advise_timeout(const AdviceSetup& setup, const trace::Trace& trace, double epsilon,
                             double iterations_per_day,
                             const std::vector<trace::DelayDistribution>& stall_model = {});

// `timeout=timedelta(seconds=...)`, rounded up to the millisecond.
std::string timeout_line(double timeout_s);

// ---- stragglers ---------------------------------------------------------------------------

struct RankCost {
  int rank = -1;                // -1: every rank at once
  double per_iteration_s = 0;   // run 0: mean iteration time minus the replaced run's
  double total_s = 0;           // per_iteration_s × the trace's iterations
  double fraction = 0;          // per_iteration_s / the replayed mean iteration
  Interval per_iteration_interval_s;
  // Over the replicates, this rank's cost minus the median rank's (paired), seconds; and run 0's
  // fraction minus the typical (lower-median) rank's. Ranks only, not `all`.
  Interval excess_interval_s;
  double excess_fraction = 0;
  // The same three for the rank alone: every other rank given the typical compute, this one
  // kept, against every rank typical (what the rank costs where no other rank is slow too).
  // Ranks only. See Note [stragglers that mask each other].
  double alone_fraction = 0;
  Interval alone_excess_interval_s;
  double alone_excess_fraction = 0;
  bool straggler = false;
};

struct StragglerAdvice {
  int iterations = 0;
  double replayed_mean_s = 0;
  std::vector<RankCost> ranks;  // one per rank
  RankCost all;                 // every rank replaced at once
  std::string model;
};

// A straggler's cost must also exceed the typical rank's by this share of the iteration: the
// bootstrap sees which iterations were recorded, not the drift between runs, and per-iteration
// noise alone gives every rank a cost (the typical rank's is that noise's size).
// See Note [straggler share] in docs/model.md.
inline constexpr double kMinStragglerShare = 0.02;

// The model with `rank`'s compute (-1: every rank's) replaced, per iteration, by the
// typical rank's: the rank whose compute total is the lower median across ranks (for two
// ranks the faster one; the median of two would be their mean and half-count a straggler).
WorkloadModel with_typical_compute(const WorkloadModel& model, int rank);
// Every rank's compute but `rank`'s replaced by the typical rank's.
WorkloadModel with_typical_compute_except(const WorkloadModel& model, int rank);

StragglerAdvice attribute_stragglers(const AdviceSetup& setup, int runs, std::uint64_t seed);

// ---- the same answers from other runs (`ddp-sim advise --repeats`) -------------------------

// A trace is one run, and the machine's speed drifts between runs; the bootstraps above see
// only which iterations one run recorded. An answer that changes from run to run of one
// configuration is that drift, not a property of the job: these are the answers of the advised
// run and of the others side by side. See Note [run-to-run drift] in docs/model.md.
struct AdviceAcrossRuns {
  std::vector<std::string> trace_dirs;       // the advised run first
  std::vector<double> recommended_caps_mb;   // per run; NaN where the answer was unavailable
  int runs_with_advised_cap = 0;             // runs recommending the advised run's cap
  std::vector<double> timeouts_s;            // per run; NaN where unavailable
  double safe_timeout_s = 0;                 // the largest of them: safe on every run seen (NaN: none)
  std::vector<std::vector<int>> stragglers;  // per run, the ranks it named
  std::vector<int> straggler_runs;           // per rank: how many runs named it
};

struct Advice;
// `runs[0]` is the advised run; at least one run.
AdviceAcrossRuns advice_across_runs(const std::vector<Advice>& runs);

// ---- the three together -------------------------------------------------------------------

struct Advice {
  std::string trace_dir;
  BucketAdvice bucket;
  TimeoutAdvice timeout;
  StragglerAdvice stragglers;
  std::optional<AdviceAcrossRuns> across_runs;  // with --repeats: printed after the three answers
  // few_sizes_headline_note of the network the answers rest on: ends the bucket answer's line.
  std::string network_note{};
  std::vector<std::string> import_lacks{};  // a profiler import: what it lacks (import_lacks)
  std::string few_iterations{};           // few_iterations_warning, printed before the answers
  int pooled_runs = 0;        // > 0: the answers are of trace_dir and its repeats as one run (--pool)
  int pooled_iterations = 0;  // that run's complete iterations
};

std::string advice_to_text(const Advice& advice);
std::string advice_to_json(const Advice& advice);

}  // namespace ddpsim::sim
