#include "commands.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>

#include "names.hpp"

namespace ddpsim::experiment {
namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

}  // namespace

Command launch_prefix(const ExperimentSpec& spec, const Point& point, const std::string& bin_dir,
                      const std::string& testbed_script) {
  Command command;
  if (spec.launch.testbed()) {
    // As ddpsim.bench.validate_whatif's measure(): testbed.sh replaces {hosts}, {host},
    // {ranks} and {master} in every host's command line.
    command = {testbed_script.empty() ? "scripts/testbed.sh" : testbed_script, "--quiet",
               "--hosts", std::to_string(point.hosts),
               "--ranks-per-host", std::to_string(point.world_size / point.hosts),
               "--rate", spec.launch.testbed_rate,
               "--timeout", format_number(std::ceil(spec.limits.job_timeout_s)), "--",
               bin_dir + "/ddp-launch", "--nnodes", "{hosts}", "--node-rank", "{host}",
               "--nproc-per-node", "{ranks}", "--master-addr", "{master}", "--master-port", "29500",
               "--"};
  } else {
    command = {bin_dir + "/ddp-launch", "--nproc-per-node", std::to_string(point.world_size),
               "--master-port", "0", "--"};
  }
  return command;
}

Command machine_profile_command(const ExperimentSpec& spec, const Point& point, const std::string& bin_dir,
                                const std::string& out_json, const std::string& testbed_script) {
  Command command = launch_prefix(spec, point, bin_dir, testbed_script);
  command.insert(command.end(), {bin_dir + "/ddp-machine-profile", "--out", out_json, "--threads",
                                 std::to_string(spec.workload.threads), "--quiet"});
  return command;
}

Command train_command(const ExperimentSpec& spec, const Point& point, const std::string& bin_dir,
                      const std::string& trace_dir, const std::string& testbed_script, int rep) {
  const Workload& w = spec.workload;
  Command command = launch_prefix(spec, point, bin_dir, testbed_script);
  command.insert(command.end(), {bin_dir + "/ddp-train",
                     "--model", w.model,
                     "--iterations", std::to_string(w.iterations),
                     "--batch-size", std::to_string(w.batch_size),
                     "--bucket-cap-mb", format_number(point.bucket_cap_mb)});
  if (point.first_bucket_cap_mb) {
    command.insert(command.end(), {"--first-bucket-cap-mb", format_number(*point.first_bucket_cap_mb)});
  }
  command.insert(command.end(), {"--threads", std::to_string(w.threads),
                                 "--seed", std::to_string(w.seed),
                                 "--optimizer", w.optimizer,
                                 "--lr", format_number(w.lr)});
  if (point.timeout_s) command.insert(command.end(), {"--timeout", format_number(*point.timeout_s)});
  for (const auto& flag : point.slowdown) command.insert(command.end(), {"--slowdown", flag});
  for (const auto& flag : point.delay) command.insert(command.end(), {"--delay", flag});
  for (const auto& flag : point.delay_dist) command.insert(command.end(), {"--delay-dist", flag});
  if (!point.delay_dist.empty()) {
    command.insert(command.end(), {"--skew-seed", std::to_string(static_cast<std::int64_t>(w.seed) + rep)});
  }
  command.insert(command.end(), w.args.begin(), w.args.end());
  command.insert(command.end(), {"--trace-dir", trace_dir, "--quiet"});
  return command;
}

Command calibrate_command(const ExperimentSpec& spec, const std::string& bin_dir,
                          const std::string& trace_dir, const std::string& calibration_json) {
  Command command = {bin_dir + "/ddp-sim", "calibrate", trace_dir, "--json", calibration_json};
  for (const auto& arg : spec.predict.calibrate_args)
    command.push_back(substitute_placeholders(arg, trace_dir, calibration_json));
  return command;
}

Command replay_command(const ExperimentSpec& spec, const Point& point, const WhatIf* what_if,
                       const std::string& bin_dir, const std::string& trace_dir,
                       const std::string& calibration_json, const std::string& out_dir,
                       const std::string& report_json, const std::string& reused_calibration,
                       const std::vector<std::string>& repeats, const std::string& machine_json) {
  Command command = {bin_dir + "/ddp-sim", "replay", trace_dir, "--out", out_dir};
  if (!report_json.empty()) command.insert(command.end(), {"--json", report_json});
  if (!repeats.empty()) {
    command.push_back("--repeats");
    command.insert(command.end(), repeats.begin(), repeats.end());
    if (spec.predict.pool_baselines) command.push_back("--pool");
  }
  const auto names = [](const std::vector<std::string>& args, const std::string& flag) {
    return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
      return arg == flag || arg.rfind(flag + "=", 0) == 0;
    });
  };
  // A spec that hands the replay a fit itself ("--calibration={calibration}") keeps its own. A
  // prediction on the sitting's machine profile keeps the baseline trace's fit too: the profile
  // gives the in-flight gain and the co-located cores (Note [machine profile in a sitting]),
  // unless the spec takes its network from the profile (network = "machine").
  const bool calibration_given = names(spec.predict.replay_args, "--calibration") ||
                                 (what_if && names(what_if->args, "--calibration"));
  const bool network_from_machine = spec.predict.machine_profile && spec.predict.network == "machine";
  if (!reused_calibration.empty() && !calibration_given && !network_from_machine)
    command.insert(command.end(), {"--calibration", reused_calibration});
  for (const auto& arg : spec.predict.replay_args)
    command.push_back(substitute_placeholders(arg, trace_dir, calibration_json));
  // The simulator applies no timeout unless told: give it the one the real job ran with,
  // unless the what-if (or the spec's replay flags) choose one.
  const auto names_timeout = [&](const std::vector<std::string>& args) {
    return std::find(args.begin(), args.end(), spec.predict.timeout_flag) != args.end();
  };
  const bool timeout_given = names_timeout(spec.predict.replay_args) ||
                             (what_if && (what_if->timeout_s || names_timeout(what_if->args)));
  if (point.timeout_s && !timeout_given)
    command.insert(command.end(), {spec.predict.timeout_flag, format_number(*point.timeout_s)});
  if (what_if) {
    for (const auto& arg : what_if->args)
      command.push_back(substitute_placeholders(arg, trace_dir, calibration_json));
  }
  // The sitting's machine profile serves every replay of the spec: each takes its in-flight gain
  // and co-located cores, the network staying a trace's fit (--calibration); a cross prediction
  // names it already.
  if (!machine_json.empty() && spec.predict.machine_profile && !(what_if && names(what_if->args, "--machine")))
    command.insert(command.end(), {"--machine", machine_json});
  return command;
}

bool changes_layout(const Point& baseline, const Point& point) {
  return point.world_size != baseline.world_size || point.hosts != baseline.hosts;
}

WhatIf cross_prediction(const ExperimentSpec& spec, const Point& baseline, const Point& point,
                        const ProfileArgs& profile) {
  WhatIf what_if;
  what_if.name = "from-" + baseline.id;
  auto& args = what_if.args;
  if (point.bucket_cap_mb != baseline.bucket_cap_mb)
    args.insert(args.end(), {"--bucket-cap-mb", format_number(point.bucket_cap_mb)});
  if (point.first_bucket_cap_mb && point.first_bucket_cap_mb != baseline.first_bucket_cap_mb)
    args.insert(args.end(), {"--first-bucket-cap-mb", format_number(*point.first_bucket_cap_mb)});
  for (const auto& flag : point.slowdown) args.insert(args.end(), {"--slowdown", flag});
  for (const auto& flag : point.delay) args.insert(args.end(), {"--delay", flag});
  for (const auto& flag : point.delay_dist) args.insert(args.end(), {"--delay-dist", flag});
  if (point.world_size != baseline.world_size) {
    args.insert(args.end(), {"--world-size", std::to_string(point.world_size)});
    what_if.world_size = point.world_size;
  }
  if (changes_layout(baseline, point)) {
    args.insert(args.end(), spec.predict.world_size_args.begin(), spec.predict.world_size_args.end());
    args.insert(args.end(), profile.effective_cores.begin(), profile.effective_cores.end());
  }
  args.insert(args.end(), profile.sleep_resume_cost.begin(), profile.sleep_resume_cost.end());
  args.insert(args.end(), profile.machine.begin(), profile.machine.end());
  if (point.timeout_s && point.timeout_s != baseline.timeout_s) {
    args.insert(args.end(), {spec.predict.timeout_flag, format_number(*point.timeout_s)});
    what_if.timeout_s = point.timeout_s;
  }
  return what_if;
}

Command lone_rank_flags(const Workload& w) {
  Command flags = {"--model", w.model,
                   "--batch-size", std::to_string(w.batch_size),
                   "--threads", std::to_string(w.threads),
                   "--seed", std::to_string(w.seed),
                   "--optimizer", w.optimizer,
                   "--lr", format_number(w.lr)};
  flags.insert(flags.end(), w.args.begin(), w.args.end());
  return flags;
}

Command summary_command(const std::string& bin_dir, const std::string& trace_dir) {
  return {bin_dir + "/ddp-trace", "summary", trace_dir, "--json"};
}

std::string substitute_placeholders(const std::string& arg, const std::string& trace_dir,
                                    const std::string& calibration_json) {
  std::string out = arg;
  replace_all(out, "{trace}", trace_dir);
  replace_all(out, "{calibration}", calibration_json);
  return out;
}

std::string shell_quote(const Command& command) {
  std::string line;
  for (const auto& arg : command) {
    if (!line.empty()) line += ' ';
    bool plain = !arg.empty();
    for (char c : arg) {
      plain = plain && (std::isalnum(static_cast<unsigned char>(c)) ||
                        std::string("-_./=:@+,%").find(c) != std::string::npos);
    }
    if (plain) {
      line += arg;
    } else {
      line += '\'';
      for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
      line += '\'';
    }
  }
  return line;
}

}  // namespace ddpsim::experiment
