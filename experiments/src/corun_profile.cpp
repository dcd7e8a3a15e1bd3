#include "corun_profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/stats.hpp"
#include "profile_file.hpp"

namespace ddpsim::experiment {
namespace {

double positive_seconds(const nlohmann::json& value, const std::string& file) {
  if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>()))
    throw std::runtime_error(file + ": expected iteration times in seconds > 0 in \"rounds\", got " + value.dump());
  return value.get<double>();
}

}  // namespace

Command corun_command(const ExperimentSpec& spec, const std::string& bin_dir,
                      const std::string& corun_script, const std::string& out_json, int copies) {
  Command command = {corun_script.empty() ? "experiments/peer/corun_bench.sh" : corun_script,
                     "--bin-dir", bin_dir, "--out", out_json, "--copies", std::to_string(copies),
                     "--rounds", "1", "--"};
  const Command flags = lone_rank_flags(spec.workload);
  command.insert(command.end(), flags.begin(), flags.end());
  command.insert(command.end(), {"--iterations", std::to_string(spec.workload.iterations)});
  return command;
}

std::optional<CorunProfile> pool_corun_rounds(const std::vector<std::string>& json_files, int copies) {
  std::vector<double> alone, together, per_round;
  for (const auto& file : json_files) {
    const auto json = read_profile_file(file, "corun_bench.sh", "rounds");
    if (!json) continue;
    if (!json->contains("copies") || (*json)["copies"] != copies)
      throw std::runtime_error(file + ": expected a profile of " + std::to_string(copies) +
                               " co-located ranks (\"copies\"), got " + json->value("copies", nlohmann::json()).dump());
    for (const auto& round : (*json)["rounds"]) {
      if (!round.is_object() || !round.contains("alone_s") || !round.contains("together_s") ||
          !round["together_s"].is_array() || round["together_s"].size() != static_cast<size_t>(copies))
        throw std::runtime_error(file + ": expected each round to hold \"alone_s\" and " +
                                 std::to_string(copies) + " \"together_s\"");
      std::vector<double> copies_s;
      for (const auto& t : round["together_s"]) copies_s.push_back(positive_seconds(t, file));
      alone.push_back(positive_seconds(round["alone_s"], file));
      together.push_back(trace::median_of(copies_s));
      per_round.push_back(copies * alone.back() / together.back());
    }
  }
  if (alone.empty()) return std::nullopt;
  CorunProfile profile;
  profile.copies = copies;
  profile.rounds = static_cast<int>(alone.size());
  profile.effective_cores = std::min<double>(copies, copies * trace::median_of(alone) / trace::median_of(together));
  profile.round_low = *std::min_element(per_round.begin(), per_round.end());
  profile.round_high = *std::max_element(per_round.begin(), per_round.end());
  return profile;
}

void write_profile_json(const std::string& path, const std::vector<CorunProfile>& profiles) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : profiles)
    list.push_back({{"copies", p.copies}, {"effective_cores", p.effective_cores}, {"rounds", p.rounds},
                    {"round_range", {p.round_low, p.round_high}}});
  std::ofstream(path) << nlohmann::json{{"effective_cores", list}}.dump(1) << '\n';
}

std::string describe_profiles(const std::vector<CorunProfile>& profiles) {
  std::string text;
  for (const auto& p : profiles) {
    char line[160];
    std::snprintf(line, sizeof line, "%s%d ranks: %.3f effective cores (%d round%s, %.3f..%.3f)",
                  text.empty() ? "" : "; ", p.copies, p.effective_cores, p.rounds, p.rounds == 1 ? "" : "s",
                  p.round_low, p.round_high);
    text += line;
  }
  return text;
}

std::vector<std::string> effective_cores_args(const std::vector<CorunProfile>& profiles) {
  std::vector<std::string> args;
  for (const auto& profile : profiles) {
    char value[64];
    std::snprintf(value, sizeof value, "%d=%.4f", profile.copies, profile.effective_cores);
    args.insert(args.end(), {"--effective-cores", value});
  }
  return args;
}

}  // namespace ddpsim::experiment
