#include "resume_profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/stats.hpp"
#include "profile_file.hpp"

namespace ddpsim::experiment {

Command resume_command(const ExperimentSpec& spec, const std::string& bin_dir,
                       const std::string& resume_script, const std::string& out_json) {
  Command command = {resume_script.empty() ? ".venv/bin/ddpsim-sleep-resume-cost" : resume_script,
                     "--bin-dir", bin_dir, "--out", out_json, "--repetitions", "1",
                     "--iterations", std::to_string(std::max(spec.workload.iterations, 8)), "--"};
  const Command flags = lone_rank_flags(spec.workload);
  command.insert(command.end(), flags.begin(), flags.end());
  return command;
}

std::optional<ResumeProfile> pool_resume_pairs(const std::vector<std::string>& json_files, double fraction) {
  std::vector<double> costs;
  for (const auto& file : json_files) {
    const auto json = read_profile_file(file, "sleep_resume_cost.py", "pairs");
    if (!json) continue;
    for (const auto& pair : (*json)["pairs"]) {
      const auto cost = pair.is_object() ? pair.value("resume_cost_ms", nlohmann::json()) : nlohmann::json();
      if (!cost.is_number() || !std::isfinite(cost.get<double>()))
        throw std::runtime_error(file + ": expected each pair to hold a finite \"resume_cost_ms\", got " + pair.dump());
      costs.push_back(cost.get<double>());
    }
  }
  if (costs.empty()) return std::nullopt;
  ResumeProfile profile;
  profile.resume_cost_ms = trace::median_of(costs);
  profile.pair_low_ms = *std::min_element(costs.begin(), costs.end());
  profile.pair_high_ms = *std::max_element(costs.begin(), costs.end());
  profile.pairs = static_cast<int>(costs.size());
  profile.fraction = fraction;
  return profile;
}

void write_resume_json(const std::string& path, const ResumeProfile& p) {
  const nlohmann::json json = {{"resume_cost_ms", p.resume_cost_ms}, {"pairs", p.pairs},
                               {"pair_range_ms", {p.pair_low_ms, p.pair_high_ms}}, {"fraction", p.fraction},
                               {"sleep_resume_cost_s", p.charged_s()}};
  std::ofstream(path) << json.dump(1) << '\n';
}

std::string describe_resume(const ResumeProfile& p) {
  char line[200];
  std::snprintf(line, sizeof line, "resume cost %.3f ms per sleep (%d pair%s, %.3f..%.3f), charged x%g: %.3f ms",
                p.resume_cost_ms, p.pairs, p.pairs == 1 ? "" : "s", p.pair_low_ms, p.pair_high_ms, p.fraction,
                p.charged_s() * 1e3);
  return line;
}

std::vector<std::string> sleep_resume_cost_args(const ResumeProfile& profile) {
  char value[32];
  std::snprintf(value, sizeof value, "%.7f", profile.charged_s());
  return {"--sleep-resume-cost", value};
}

}  // namespace ddpsim::experiment
