// The co-run machine profile a spec with [predict] corun_profile measures in its own sitting:
// how many cores' worth of compute K co-located ranks get (experiments/peer/corun_bench.sh, one
// round per repetition), pooled into the --effective-cores K=C of its world-size predictions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "spec.hpp"

namespace ddpsim::experiment {

// One round of the profile for K ranks: CORUN_SCRIPT --bin-dir BIN --out JSON --copies K
// --rounds 1 -- the workload's ddp-train flags (1-rank jobs: no all-reduce, so no bucket cap).
Command corun_command(const ExperimentSpec& spec, const std::string& bin_dir,
                      const std::string& corun_script, const std::string& out_json, int copies);

// K ranks' effective cores pooled over rounds, as corun_bench.sh defines it for several rounds:
// K x median(alone) / median(each round's median of its copies).
struct CorunProfile {
  int copies = 0;
  double effective_cores = 0;  // clamped to (0, K], what ddp-sim --effective-cores accepts
  int rounds = 0;
  double round_low = 0, round_high = 0;  // the rounds' own effective cores, lowest and highest
};

// Pools the rounds of the files (corun_bench.sh --out JSON, each with "rounds": [{"alone_s",
// "together_s": [...]}]) that exist; nullopt when none does. Throws std::runtime_error, one
// line naming the file, for one that cannot be read as such.
std::optional<CorunProfile> pool_corun_rounds(const std::vector<std::string>& json_files, int copies);

// Writes the pooled profiles to `path` as JSON: what the predictions were given.
void write_profile_json(const std::string& path, const std::vector<CorunProfile>& profiles);

// "2 ranks: 1.274 effective cores (5 rounds, 1.268..1.385); 4 ranks: ..."
std::string describe_profiles(const std::vector<CorunProfile>& profiles);

// --effective-cores K=C for each profile (C to 4 decimals).
std::vector<std::string> effective_cores_args(const std::vector<CorunProfile>& profiles);

}  // namespace ddpsim::experiment
