#include "machine_profile.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>

#include "corun_profile.hpp"
#include "process.hpp"
#include "resume_profile.hpp"

namespace fs = std::filesystem;

namespace ddpsim::experiment {

namespace {

// Where the machine profile is launched: as the grid's largest job on the baseline's hosts, so
// that a world-size what-if replays on a profile of the ranks it predicts (a 1-rank baseline has
// no all-reduce to time, and a profile of K ranks a host also times every count below K).
const Point& profiled_point(const std::vector<Point>& points, size_t baseline) {
  const Point* largest = &points[baseline];
  for (const Point& point : points) {
    if (point.hosts == largest->hosts && point.world_size > largest->world_size) largest = &point;
  }
  return *largest;
}

}  // namespace

std::vector<MachineProfile::Job> MachineProfile::due_jobs(int rep) const {
  std::vector<Job> jobs;
  if (spec_.predict.machine_profile && rep == 0) {
    const std::vector<Point> points = expand_grid(spec_.grid);
    if (const auto baseline = baseline_point(points, spec_.predict.baseline)) {
      const std::string json = layout_.machine_json();
      jobs.push_back({machine_profile_command(spec_, profiled_point(points, *baseline), bin_dir_, json, testbed_script_),
                      json, "machine", "machine profile", spec_.limits.job_timeout_s});
    }
  }
  if (spec_.predict.resume_profile > 0) {
    const std::string json = layout_.resume_json(rep);
    // Two jobs one after the other.
    jobs.push_back({resume_command(spec_, bin_dir_, resume_script_, json), json, "resume", "resume profile",
                    2 * spec_.limits.job_timeout_s});
  }
  for (const int copies : spec_.predict.corun_profile) {
    const std::string json = layout_.corun_json(copies, rep);
    // As long as copies + 1 jobs one after another at most.
    jobs.push_back({corun_command(spec_, bin_dir_, corun_script_, json, copies), json,
                    "corun-" + std::to_string(copies), "co-run profile of " + std::to_string(copies) + " ranks",
                    (copies + 1) * spec_.limits.job_timeout_s});
  }
  jobs.erase(std::remove_if(jobs.begin(), jobs.end(), [](const Job& job) { return fs::exists(job.json); }),
             jobs.end());
  return jobs;
}

std::optional<std::string> MachineProfile::measure(int rep) {
  std::string failures;
  for (const Job& job : due_jobs(rep)) {
    const std::string log = layout_.log_file("profile-rep" + std::to_string(rep), job.step);
    fs::remove(log);
    const ProcessResult result = run_process(job.command, log, log, job.timeout_s);
    if (!result.ok()) fs::remove(job.json);
    if (result.interrupted) return std::nullopt;
    if (!result.ok()) failures += (failures.empty() ? "" : "; ") + job.what + ": " + describe_failure(result, log);
  }
  return failures;
}

void MachineProfile::print_round(int rep, std::ostream& out) const {
  for (const Job& job : due_jobs(rep))
    out << "# " << job.what << ", repetition " << rep << '\n' << shell_quote(job.command) << '\n';
}

ProfileArgs MachineProfile::placeholders() const {
  ProfileArgs args;
  for (const int copies : spec_.predict.corun_profile)
    args.effective_cores.insert(args.effective_cores.end(), {"--effective-cores", std::to_string(copies) + "=PROFILE"});
  if (spec_.predict.resume_profile > 0) args.sleep_resume_cost = {"--sleep-resume-cost", "PROFILE"};
  if (spec_.predict.machine_profile) args.machine = {"--machine", layout_.machine_json()};
  return args;
}

ProfileArgs MachineProfile::args_for(const Point& baseline, const Point& point, std::string& why) {
  ProfileArgs args;
  args.sleep_resume_cost = resume_args(why);
  if (why.empty()) args.effective_cores = corun_args(baseline, point, why);
  if (why.empty()) args.machine = machine_args(why);
  return why.empty() ? args : ProfileArgs{};
}

std::vector<std::string> MachineProfile::machine_args(std::string& why) const {
  if (!spec_.predict.machine_profile) return {};
  if (!fs::exists(layout_.machine_json())) {
    why = "no machine profile: expected " + layout_.machine_json() + " (a rerun without --repredict measures it)";
    return {};
  }
  return {"--machine", layout_.machine_json()};
}

std::vector<std::string> MachineProfile::resume_args(std::string& why) {
  if (!(spec_.predict.resume_profile > 0)) return {};
  std::vector<std::string> pairs;
  for (int rep = 0; rep < spec_.repetitions; ++rep) pairs.push_back(layout_.resume_json(rep));
  try {
    const auto profile = pool_resume_pairs(pairs, spec_.predict.resume_profile);
    if (!profile) {
      why = "no resume profile: expected " + layout_.resume_json(0) +
            " or another repetition's (a rerun without --repredict measures it)";
      return {};
    }
    write_resume_json(layout_.resume_profile_json(), *profile);
    summaries_["resume profile"] = describe_resume(*profile);
    return sleep_resume_cost_args(*profile);
  } catch (const std::exception& e) {
    why = e.what();
    return {};
  }
}

std::vector<std::string> MachineProfile::corun_args(const Point& baseline, const Point& point,
                                                    std::string& why) {
  if (spec_.predict.corun_profile.empty() || !changes_layout(baseline, point)) return {};
  std::vector<CorunProfile> profiles;
  try {
    for (const int copies : spec_.predict.corun_profile) {
      std::vector<std::string> rounds;
      for (int rep = 0; rep < spec_.repetitions; ++rep) rounds.push_back(layout_.corun_json(copies, rep));
      const auto profile = pool_corun_rounds(rounds, copies);
      if (!profile) {
        why = "no co-run profile of " + std::to_string(copies) + " ranks: expected " +
              layout_.corun_json(copies, 0) + " or another repetition's (a rerun without --repredict measures it)";
        return {};
      }
      profiles.push_back(*profile);
    }
  } catch (const std::exception& e) {
    why = e.what();
    return {};
  }
  write_profile_json(layout_.profile_json(), profiles);
  summaries_["co-run profile"] = describe_profiles(profiles);
  return effective_cores_args(profiles);
}

}  // namespace ddpsim::experiment
