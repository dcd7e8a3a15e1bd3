// The command lines the runner executes, and where their outputs go. Kept apart from the
// execution so --dry-run prints exactly what a real run would do.
#pragma once

#include <string>
#include <vector>

#include "grid.hpp"
#include "spec.hpp"

namespace ddpsim::experiment {

using Command = std::vector<std::string>;

// The replay flags of the sitting's machine profile, for the cross predictions.
struct ProfileArgs {
  std::vector<std::string> effective_cores;    // [predict] corun_profile: predictions of another layout
  std::vector<std::string> sleep_resume_cost;  // [predict] resume_profile: every cross prediction
  std::vector<std::string> machine;            // [predict] machine_profile: every cross prediction
};

// Where one experiment's results live: results/NAME/...
struct Layout {
  std::string root;  // results/NAME

  std::string summary_csv() const { return root + "/summary.csv"; }
  std::string provenance_json() const { return root + "/provenance.json"; }
  std::string trace_dir(const std::string& run) const { return root + "/traces/" + run; }
  std::string calibration_json(const std::string& run) const {
    return root + "/calibration/" + run + ".json";
  }
  // The predicted trace of a run; `what_if` is "" for the replay of the measured configuration.
  std::string prediction_dir(const std::string& run, const std::string& what_if) const {
    return root + "/predictions/" + run + (what_if.empty() ? "" : "-" + what_if);
  }
  std::string log_file(const std::string& run, const std::string& step) const {
    return root + "/logs/" + run + "." + step + ".log";
  }
  // One round of the co-run profile of `copies` ranks ([predict] corun_profile), measured
  // before repetition `rep`'s runs, and the profile pooled from the rounds.
  std::string corun_json(int copies, int rep) const {
    return root + "/profile/corun-" + std::to_string(copies) + "-rep" + std::to_string(rep) + ".json";
  }
  std::string profile_json() const { return root + "/profile/effective-cores.json"; }
  // One pair of the resume profile ([predict] resume_profile), measured before repetition
  // `rep`'s runs, and the cost pooled from the pairs.
  std::string resume_json(int rep) const { return root + "/profile/resume-rep" + std::to_string(rep) + ".json"; }
  std::string resume_profile_json() const { return root + "/profile/sleep-resume-cost.json"; }
  std::string machine_json() const { return root + "/profile/machine.json"; }
  // ddp-sim replay's JSON report (--json) of a replay step: its interval, when bootstrapped.
  std::string report_json(const std::string& run, const std::string& step) const {
    return root + "/logs/" + run + "." + step + ".json";
  }
};

// ddp-launch --nproc-per-node W --master-port 0 -- ddp-train ... --trace-dir DIR --quiet, or on
// the testbed ([launch] testbed_rate): TESTBED_SCRIPT --quiet --hosts H --ranks-per-host W/H
// --rate RATE --timeout T -- ddp-launch --nnodes {hosts} --node-rank {host} --nproc-per-node
// {ranks} --master-addr {master} --master-port 29500 -- ddp-train ...
// With random stalls (delay_dist), repetition `rep` draws them with --skew-seed seed + rep:
// every repetition its own draws, so the measured medians sample the stall distribution
// instead of repeating one set of draws (which is then compared with the whole distribution).
Command train_command(const ExperimentSpec& spec, const Point& point, const std::string& bin_dir,
                      const std::string& trace_dir, const std::string& testbed_script = "", int rep = 0);
// What starts one job of `point` before its program: ddp-launch, or testbed.sh with ddp-launch
// in every host (train_command's launch, the same for every program a job runs).
Command launch_prefix(const ExperimentSpec& spec, const Point& point, const std::string& bin_dir,
                      const std::string& testbed_script = "");
// ddp-machine-profile launched as `point`'s job, writing `out_json` (the workload's threads).
Command machine_profile_command(const ExperimentSpec& spec, const Point& point, const std::string& bin_dir,
                                const std::string& out_json, const std::string& testbed_script = "");
// ddp-sim calibrate TRACE --json FILE [calibrate_args]
Command calibrate_command(const ExperimentSpec& spec, const std::string& bin_dir,
                          const std::string& trace_dir, const std::string& calibration_json);
// ddp-sim replay TRACE --out DIR [--json REPORT] [--repeats DIR...] [--calibration REUSED] [replay_args]
// [--timeout POINT_TIMEOUT] [what-if args]. `reused_calibration`: the fit calibrate_command
// wrote for this trace, so every replay of it uses that one fit instead of fitting again; empty
// when there is none (calibrate failed) or the spec's flags name --calibration themselves.
// `repeats`: other measured runs of the replayed trace's configuration, passed as --repeats
// (the report's interval widened by their run-to-run spread); none: no --repeats.
Command replay_command(const ExperimentSpec& spec, const Point& point, const WhatIf* what_if,
                       const std::string& bin_dir, const std::string& trace_dir,
                       const std::string& calibration_json, const std::string& out_dir,
                       const std::string& report_json = "", const std::string& reused_calibration = "",
                       const std::vector<std::string>& repeats = {}, const std::string& machine_json = "");

// The what-if that predicts `point` from the trace of `baseline` (a point without skew): the
// replay flags of every difference, named "from-BASELINE_ID". bucket_cap_mb -> --bucket-cap-mb,
// first_bucket_cap_mb -> --first-bucket-cap-mb, slowdown/delay/delay_dist -> --slowdown/--delay/
// --delay-dist (each flag), world size -> --world-size W + [predict] world_size_args +
// `profile.effective_cores` (hosts alone -> the last two), `profile.sleep_resume_cost`,
// timeout_s -> [predict] timeout_flag T.
WhatIf cross_prediction(const ExperimentSpec& spec, const Point& baseline, const Point& point,
                        const ProfileArgs& profile = {});
// Whether `point` runs another number of ranks or hosts than `baseline`: the predictions that
// take world_size_args and the co-run profile.
bool changes_layout(const Point& baseline, const Point& point);
// The workload's ddp-train flags for a job of one rank, as the machine profiles run it (no
// all-reduce, so no bucket cap; the profile sets the iterations): --model, --batch-size,
// --threads, --seed, --optimizer, --lr, then [workload] args.
Command lone_rank_flags(const Workload& workload);
// ddp-trace summary DIR --json (stdout is the JSON)
Command summary_command(const std::string& bin_dir, const std::string& trace_dir);

// Replaces {trace} and {calibration} in spec-given flags, so a spec can hand the simulator
// the files of the run at hand (e.g. "--calibration={calibration}").
std::string substitute_placeholders(const std::string& arg, const std::string& trace_dir,
                                    const std::string& calibration_json);

// One line a POSIX shell reads back as the same argv.
std::string shell_quote(const Command& command);

}  // namespace ddpsim::experiment
