// The straggler emulation's resume cost a spec with [predict] resume_profile measures in its own
// sitting: what a rank slowed by ddp-train --slowdown computes more per injected sleep
// (ddpsim-sleep-resume-cost, python/ddpsim/bench/sleep_resume_cost.py: one lone-rank A/B pair per
// repetition), pooled, and the
// spec's fraction of it charged to the cross predictions as ddp-sim --sleep-resume-cost.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "spec.hpp"

namespace ddpsim::experiment {

// One pair of the profile: RESUME_SCRIPT --bin-dir BIN --out JSON --repetitions 1 --iterations N
// -- the workload's ddp-train flags (one rank alone: no all-reduce, so no bucket cap). N is the
// workload's iterations, at least the 8 the script needs.
Command resume_command(const ExperimentSpec& spec, const std::string& bin_dir,
                       const std::string& resume_script, const std::string& out_json);

// The lone-rank resume cost pooled over the pairs of every repetition measured, and what the
// predictions are charged: `fraction` of it, never below zero (a pooled median under zero is
// noise, not a rank that resumes faster than it slept).
struct ResumeProfile {
  double resume_cost_ms = 0;  // median over the pairs
  double pair_low_ms = 0, pair_high_ms = 0;
  int pairs = 0;
  double fraction = 0;
  double charged_s() const { return resume_cost_ms > 0 ? fraction * resume_cost_ms / 1e3 : 0.0; }
};

// Pools the pairs of the files (sleep_resume_cost.py --out JSON, with "pairs":
// [{"resume_cost_ms": x}, ...]) that exist; nullopt when none does. Throws std::runtime_error,
// one line naming the file, for one that cannot be read as such.
std::optional<ResumeProfile> pool_resume_pairs(const std::vector<std::string>& json_files, double fraction);

// Writes the pooled profile to `path` as JSON: what the predictions were charged.
void write_resume_json(const std::string& path, const ResumeProfile& profile);

// "resume cost 0.412 ms per sleep (5 pairs, 0.310..0.520), charged x0.5: 0.206 ms"
std::string describe_resume(const ResumeProfile& profile);

// --sleep-resume-cost S (seconds, to the 0.1 microsecond).
std::vector<std::string> sleep_resume_cost_args(const ResumeProfile& profile);

}  // namespace ddpsim::experiment
