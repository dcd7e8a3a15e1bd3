// An experiment specification: what to run, parsed from a TOML file (experiments/*.toml).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpsim::experiment {

// A spec that cannot be used. what() is one line, "FILE:LINE: message" when the problem sits
// on a line of the file (toml++ gives every node its source position), "FILE: message" else.
// Control characters in the message (a line break in a quoted value, or in the text toml++
// quotes in its parse errors) become '?', so it stays one line whatever the spec holds.
class SpecError : public std::runtime_error {
 public:
  explicit SpecError(const std::string& message);
};

// The training job every point runs; the grid below varies the rest.
struct Workload {
  std::string model = "mlp";
  int iterations = 10;
  int batch_size = 32;
  int threads = 1;
  int seed = 1;
  std::string optimizer = "sgd";
  double lr = 0.01;
  std::vector<std::string> args;  // further ddp-train flags, verbatim (model sizes, …)
};

// One value of a skew axis: zero or more runtime flags of one kind, each a string in the
// runtime's syntax ("1=2.0" for --slowdown, "1=500@5" for --delay). Empty = no skew.
using SkewSetting = std::vector<std::string>;

// The axes of the grid. Every combination is one point.
struct Grid {
  std::vector<int> world_sizes = {2};
  std::vector<double> bucket_cap_mb = {25.0};
  std::vector<double> first_bucket_cap_mb;  // empty = ddp-train's default
  // first_bucket_cap_mb = "bucket_cap_mb": every point's first bucket capped like the others
  // (both flags, as validate_whatif.py's testbed families), not an axis of its own.
  bool first_bucket_cap_follows = false;
  std::vector<SkewSetting> slowdown = {{}};
  std::vector<SkewSetting> delay = {{}};
  std::vector<SkewSetting> delay_dist = {{}};  // --delay-dist RANK=exp:MEAN etc.
  std::vector<double> timeout_s;  // empty = ddp-train's default
  // Testbed hosts (scripts/testbed.sh); empty = one machine, no testbed. Each point runs
  // world_size / hosts ranks per host.
  std::vector<int> hosts;
};

// The configuration that cross-configuration predictions replay: one value per grid axis
// named in `[predict] baseline`; an axis it does not name must have a single value.
struct Baseline {
  bool enabled = false;
  std::optional<int> world_size;
  std::optional<double> bucket_cap_mb;
  std::optional<double> first_bucket_cap_mb;
  std::optional<double> timeout_s;
  std::optional<int> hosts;
  // The skew axes may only name "" (no skew): a replay cannot remove skew.
};

// A prediction made from every measured trace besides the one of the measured configuration:
// ddp-sim replay with extra what-if flags.
struct WhatIf {
  std::string name;               // a short label, unique in the spec; "" is the base replay
  std::vector<std::string> args;  // extra ddp-sim replay flags
  std::optional<int> world_size;  // the world size it predicts, when it changes it
  std::optional<double> timeout_s;  // the timeout it predicts, when it changes it
};

struct Prediction {
  bool enabled = true;
  std::vector<std::string> replay_args;    // flags for every ddp-sim replay
  std::vector<std::string> calibrate_args;  // flags for every ddp-sim calibrate
  std::vector<WhatIf> what_ifs;            // world_sizes/timeouts_s expanded, then [[predict.whatif]]
  // ddp-sim replay's timeout flag. Every replay of a point measured with a timeout gets it, so
  // the simulator applies the timeout the real job had (unless a what-if sets its own).
  std::string timeout_flag = "--timeout";
  // Points with fewer ranks get no prediction: ddp-sim calibrates the network from the
  // all-reduces of the trace, and a 1-rank run has none.
  int min_world_size = 2;
  // Cross-configuration predictions: every other point is predicted from the baseline's trace
  // of the same repetition (summary.csv kind = prediction).
  Baseline baseline;
  // Extra replay flags for a prediction whose world size (or hosts) differs from the
  // baseline's, after --world-size W (a platform for the new layout, ...).
  std::vector<std::string> world_size_args;
  // Cross predictions replay the repetition's baseline and the baseline's other repetitions
  // (their --repeats) as one run (ddp-sim replay --pool): a prediction at the machine's typical
  // speed rather than at one run's.
  bool pool_baselines = false;
  // A machine profile measured in the sitting, for predictions that change the world size: before
  // each repetition's runs, experiments/peer/corun_bench.sh runs the workload as 1-rank jobs, one
  // alone and then K at once, for every K listed; the world-size predictions get
  // --effective-cores K=C pooled over the rounds measured. How much co-located ranks slow each
  // other moves with the machine's load (another tenant's work costs 2 ranks on 2 cores more
  // than 4), so a profile measured on another day mispredicts the stretch. Empty: none.
  // See Note [co-run profile in the sitting] in docs/model.md.
  std::vector<int> corun_profile;
  // The straggler emulation's resume cost measured in the sitting: before each repetition's
  // runs, ddpsim-sleep-resume-cost (python/ddpsim/bench/sleep_resume_cost.py) runs the workload
  // as one rank alone, as it is and slowed x3, and takes what the slowed rank computes more per
  // injected sleep; the cross predictions get --sleep-resume-cost this fraction of the median
  // over the pairs measured.
  // The cost moves with the machine, which a constant cannot follow; but one lone-rank pair per
  // repetition is too noisy to follow it either, so no shipped spec sets it. 0: none.
  // See Note [sleep resume cost] in docs/model.md.
  double resume_profile = 0;
  // The machine profile measured in the sitting: before the first repetition's runs,
  // ddp-machine-profile runs launched exactly as the grid's largest job on the baseline's hosts
  // (the baseline's own where the world size does not change; same hosts and links), and every replay gets --machine with its file (traces/MACHINE.md): the all-reduces
  // in flight and the co-located cores come from the machine, not typed into the spec; the
  // network stays the baseline trace's fit (Note [machine profile in a sitting]).
  bool machine_profile = false;
  // With machine_profile, where every replay's network comes from: "trace" (the baseline trace's
  // fit, handed as --calibration) or "machine" (the profile's ladder: no --calibration), as a
  // user predicts a job whose trace shows too few bucket sizes to fit a network.
  std::string network = "trace";
};

// How the real jobs are launched: on this machine (ddp-launch --nproc-per-node W), or, when
// testbed_rate is set, as hosts of scripts/testbed.sh joined by links shaped to that rate.
struct Launch {
  std::string testbed_rate;  // tc units ("200mbit"); empty = no testbed
  bool testbed() const { return !testbed_rate.empty(); }
  // While the experiment runs, one idle-priority spinner per CPU keeps the CPUs from halting
  // (core_hold.hpp): for a VM that halts an idle vCPU at once. Off: a machine that does not
  // halt its CPUs gains nothing, and the spinners would show in every profile taken meanwhile.
  // See Note [held cores] in docs/model.md.
  bool hold_cores = false;
};

struct Limits {
  double job_timeout_s = 600;  // wall-clock guard per real job; a hung job is killed
  double tool_timeout_s = 600;  // per ddp-sim / ddp-trace call
};

// [advice]: the experiment acts on `ddp-sim advise`'s answer instead of predicting
// (advice_run.hpp): a baseline run is advised, and the runs that follow use the advised value.
struct AdviceCheck {
  std::string kind;  // "timeout" | "bucket" | "stragglers"; "" = no [advice] table
  std::vector<std::string> advise_args;  // extra ddp-sim advise flags
  // The machine measured once before the first job (ddp-machine-profile, launched as the
  // grid's first point) and every advise given --machine with it.
  bool machine_profile = false;
  // bucket: the own cap recorded this many times before its pairs; the first run is advised and
  // the others are its --repeats, so the gain's interval carries the drift between runs.
  int baseline_runs = 1;
  // timeout: each repetition's baseline (the [workload] as given) is advised; then
  // `follow_runs` jobs of follow_factor x its iterations run with the advised --timeout, and
  // `hang_runs` jobs of its iterations with rank `hang_rank` stalled at `hang_iteration` for
  // hang_stall_factor x the advised timeout (a hung rank, which must be detected).
  int follow_factor = 10;
  int follow_runs = 1;
  int hang_runs = 1;
  int hang_rank = 1;
  int hang_iteration = -1;  // -1: half the baseline's iterations
  double hang_stall_factor = 5;
  bool enabled() const { return !kind.empty(); }
};

struct ExperimentSpec {
  std::string path;  // where it was read from
  std::string text;  // the file as read (for provenance)
  std::string name;
  std::string description;
  int repetitions = 1;
  Workload workload;
  Grid grid;
  Prediction predict;
  Launch launch;
  Limits limits;
  AdviceCheck advice;
};

// Parses a spec file. Throws SpecError (one line) for a syntax error, an unknown key, a value
// of the wrong type or out of range, or a missing required key.
ExperimentSpec parse_spec_file(const std::string& path);
// Same, from text; `path` only names the source in error messages.
ExperimentSpec parse_spec(const std::string& text, const std::string& path);

}  // namespace ddpsim::experiment
