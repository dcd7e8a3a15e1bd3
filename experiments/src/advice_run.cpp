#include "advice_run.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include "advice_check.hpp"
#include "advice_read.hpp"
#include "commands.hpp"
#include "grid.hpp"
#include "names.hpp"
#include "process.hpp"
#include "progress.hpp"
#include "provenance.hpp"
#include "trace_summary.hpp"

namespace fs = std::filesystem;

namespace ddpsim::experiment {
namespace {

std::string number(double value) { return format_number(value); }

// What one job came to: status "ok" (it finished), "failed" (it ended with a failure its trace
// records, such as a process-group timeout, or was killed after job_timeout_s), or "error" (it
// could not run or left no readable trace; `failure` says why).
struct JobOutcome {
  std::string status;
  std::string failure;
  std::optional<int> exit;
  std::optional<TraceSummary> summary;
  double wall_s = 0;
  bool interrupted = false;
};

class AdviceRunner {
 public:
  AdviceRunner(const ExperimentSpec& spec, const RunOptions& options, std::ostream& out, std::ostream& err)
      : spec_(spec), options_(options), out_(out), root_(options.out_root + "/" + spec.name),
        progress_(err, planned_jobs(spec), options.progress_bar) {
    // {results} in [workload] args: this experiment's results folder (a --checkpoint-dir there).
    for (auto& arg : spec_.workload.args)
      for (size_t at = arg.find("{results}"); at != std::string::npos; at = arg.find("{results}"))
        arg.replace(at, 9, root_);
  }

  int run() {
    if (options_.dry_run) return dry_run();
    for (const char* dir : {"traces", "logs", "advice"}) fs::remove_all(root_ + "/" + dir);
    for (const char* dir : {"traces", "logs", "advice"}) fs::create_directories(root_ + "/" + dir);
    {
      std::ofstream csv(csv_path(), std::ios::trunc);
      csv << advice_header_line();
    }
    write_provenance(root_ + "/provenance.json", spec_, options_.command_line, options_.bin_dir);
    install_interrupt_handlers();
    if (spec_.advice.machine_profile && !measure_machine()) return 1;
    const auto& kind = spec_.advice.kind;
    const bool whole = kind == "timeout" ? check_timeout() : kind == "bucket" ? check_bucket() : check_stragglers();
    progress_.done();
    if (!whole) return 130;
    out_ << spec_.name << ": " << rows_ << " jobs, " << errors_ << " broken; " << csv_path() << '\n';
    return errors_ ? 1 : 0;
  }

 private:
  std::string csv_path() const { return root_ + "/advice.csv"; }
  std::string trace_dir(const std::string& run) const { return root_ + "/traces/" + run; }
  std::string log(const std::string& run, const std::string& step) const {
    return root_ + "/logs/" + run + "." + step + ".log";
  }
  std::string advice_json(const std::string& run) const { return root_ + "/advice/" + run + ".json"; }
  std::string machine_json() const { return root_ + "/machine.json"; }

  Command machine_command() const {
    return machine_profile_command(spec_, expand_grid(spec_.grid).front(), options_.bin_dir, machine_json(),
                                   options_.testbed_script);
  }

  // ddp-machine-profile once, launched as the grid's first point; false (said in one line) when
  // it fails: no advice is worth following without the machine it was asked to be given.
  bool measure_machine() {
    fs::remove(machine_json());
    const std::string machine_log = root_ + "/logs/machine.log";
    const ProcessResult result = run_process(machine_command(), machine_log, machine_log, spec_.limits.job_timeout_s);
    if (result.ok() && fs::exists(machine_json())) return true;
    out_ << spec_.name << ": the machine profile failed: " << describe_failure(result, machine_log) << '\n';
    return false;
  }

  // ddp-sim advise TRACE --json FILE [advise_args], and --machine with the measured profile
  // when the spec asks for one.
  // `repeats`: other runs of the same configuration (advise --repeats).
  Command advise_command(const std::string& run, const std::vector<std::string>& repeats = {}) const {
    Command command = {options_.bin_dir + "/ddp-sim", "advise", trace_dir(run), "--json", advice_json(run)};
    if (!repeats.empty()) command.push_back("--repeats");
    for (const std::string& repeat : repeats) command.push_back(trace_dir(repeat));
    command.insert(command.end(), spec_.advice.advise_args.begin(), spec_.advice.advise_args.end());
    if (spec_.advice.machine_profile) command.insert(command.end(), {"--machine", machine_json()});
    return command;
  }

  // bucket: the runs of the own cap recorded before its advised baseline `base` (base1, base2, ...).
  std::vector<std::string> baseline_repeats(const std::string& base) const {
    std::vector<std::string> runs;
    for (int k = 1; k < spec_.advice.baseline_runs; ++k) runs.push_back(base + std::to_string(k));
    return runs;
  }

  static size_t planned_jobs(const ExperimentSpec& spec) {
    const auto& a = spec.advice;
    if (a.kind == "timeout") return static_cast<size_t>(spec.repetitions * (1 + a.follow_runs + a.hang_runs));
    if (a.kind == "bucket")
      return spec.grid.bucket_cap_mb.size() * static_cast<size_t>(a.baseline_runs + 2 * spec.repetitions);
    return expand_grid(spec.grid).size() * static_cast<size_t>(spec.repetitions);
  }

  Point base_point() const { return expand_grid(spec_.grid).front(); }

  // The workload with `iterations` (0: as given).
  ExperimentSpec with_iterations(int iterations) const {
    ExperimentSpec copy = spec_;
    if (iterations > 0) copy.workload.iterations = iterations;
    return copy;
  }

  JobOutcome job(const ExperimentSpec& spec, const Point& point, const std::string& run, int rep) {
    JobOutcome outcome;
    const std::string trace = trace_dir(run), train_log = log(run, "train");
    fs::remove_all(trace);
    const auto started = std::chrono::steady_clock::now();
    const double guard_s = spec.limits.job_timeout_s + (spec.launch.testbed() ? 60 : 0);
    ProcessResult result = run_process(train_command(spec, point, options_.bin_dir, trace, options_.testbed_script, rep),
                                       train_log, train_log, guard_s);
    outcome.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (result.interrupted) {
      outcome.interrupted = true;
      return outcome;
    }
    if (spec.launch.testbed() && result.exit_code == 124) result.timed_out = true;
    if (result.launch_error.empty()) outcome.exit = result.exit_code;
    const std::string json_file = log(run, "summary") + ".json";
    const ProcessResult summary = run_process(summary_command(options_.bin_dir, trace), json_file,
                                              log(run, "summary"), spec.limits.tool_timeout_s);
    if (summary.ok()) {
      try {
        outcome.summary = parse_trace_summary(read_file(json_file), json_file);
      } catch (const std::exception& e) {
        outcome.failure = e.what();
      }
    } else {
      outcome.failure = "ddp-trace summary " + describe_failure(summary, log(run, "summary"));
    }
    if (!outcome.summary) {
      outcome.status = "error";
      if (!result.ok()) outcome.failure = "job " + describe_failure(result, train_log);
    } else if (result.timed_out) {
      outcome.status = "failed";
      outcome.failure = "hung: killed after job_timeout_s = " + number(spec.limits.job_timeout_s) + " s";
    } else if (!outcome.summary->failures.empty()) {
      // The timeout that ended the job, rather than a peer's "connection closed" after it.
      const auto& failures = outcome.summary->failures;
      const auto timeout = std::find_if(failures.begin(), failures.end(),
                                        [](const std::string& f) { return f.find(": timeout:") != std::string::npos; });
      outcome.status = "failed";
      outcome.failure = timeout != failures.end() ? *timeout : failures.front();
    } else if (!result.ok()) {
      outcome.status = "error";  // a failure the trace does not explain: a broken run
      outcome.failure = "job " + describe_failure(result, train_log);
    } else {
      outcome.status = "ok";
    }
    return outcome;
  }

  // advise_command(run); nullopt (with `why`) when it fails.
  std::optional<AdvisedValues> advise(const std::string& run, std::string& why, const std::vector<std::string>& repeats = {}) {
    const ProcessResult result = run_process(advise_command(run, repeats), log(run, "advise"), log(run, "advise"), spec_.limits.tool_timeout_s);
    if (!result.ok()) {
      why = "ddp-sim advise " + describe_failure(result, log(run, "advise"));
      return std::nullopt;
    }
    try {
      return read_advice(read_file(advice_json(run)), advice_json(run));
    } catch (const std::exception& e) {
      why = e.what();
      return std::nullopt;
    }
  }

  AdviceRow row_of(const ExperimentSpec& spec, const Point& point, const std::string& run, const std::string& role,
                   const std::string& case_id, int rep, const JobOutcome& outcome) const {
    AdviceRow row = {{"experiment", spec_.name}, {"kind", spec_.advice.kind}, {"case", case_id},
                     {"rep", std::to_string(rep)}, {"role", role}, {"run", run},
                     {"world_size", std::to_string(point.world_size)}, {"bucket_cap_mb", number(point.bucket_cap_mb)},
                     {"slowdown", join(point.slowdown, " ")}, {"delay", join(point.delay, " ")},
                     {"iterations", std::to_string(spec.workload.iterations)}, {"status", outcome.status},
                     {"failure", outcome.failure}, {"job_wall_s", number(outcome.wall_s)}};
    if (point.timeout_s) row["timeout_s"] = number(*point.timeout_s);
    if (outcome.exit) row["job_exit"] = std::to_string(*outcome.exit);
    if (outcome.summary) {
      row["complete_iterations"] = std::to_string(outcome.summary->complete_iterations);
      if (outcome.summary->median_iteration_s > 0)
        row["median_iteration_s"] = number(outcome.summary->median_iteration_s);
    }
    return row;
  }

  static void add_advice(AdviceRow& row, const AdvisedValues& a, const std::string& json) {
    row["advice_json"] = json;
    if (a.timeout_s) row["advised_timeout_s"] = number(*a.timeout_s);
    if (a.detect_s) row["advised_detect_s"] = number(*a.detect_s);
    if (a.replayed_detect_s) row["replayed_detect_s"] = number(*a.replayed_detect_s);
    if (a.own_cap_mb) row["own_cap_mb"] = number(*a.own_cap_mb);
    if (a.advised_cap_mb) row["advised_cap_mb"] = number(*a.advised_cap_mb);
    if (a.keep) row["keep"] = *a.keep ? "true" : "false";
    if (a.compared_cap_mb) row["compared_cap_mb"] = number(*a.compared_cap_mb);
    if (a.predicted_gain) row["predicted_gain"] = number(*a.predicted_gain);
    if (a.predicted_gain_interval) {
      row["predicted_gain_lo"] = number(a.predicted_gain_interval->first);
      row["predicted_gain_hi"] = number(a.predicted_gain_interval->second);
    }
    if (a.named_stragglers) row["named_ranks"] = rank_list(*a.named_stragglers);
  }

  void write(const AdviceRow& row) {
    std::ofstream csv(csv_path(), std::ios::app);
    csv << advice_row_line(row);
    if (!csv) throw std::runtime_error(csv_path() + ": cannot append a row");
    ++rows_;
    if (row.at("status") == "error") ++errors_;
  }

  // One job and its row (with `decorate` adding the advice columns); false when interrupted.
  bool measure(const ExperimentSpec& spec, const Point& point, const std::string& run, const std::string& role,
               const std::string& case_id, int rep, const std::function<void(AdviceRow&, const JobOutcome&)>& decorate,
               JobOutcome* kept = nullptr) {
    progress_.starting(run);
    const JobOutcome outcome = job(spec, point, run, rep);
    if (outcome.interrupted) return false;
    AdviceRow row = row_of(spec, point, run, role, case_id, rep, outcome);
    decorate(row, outcome);
    write(row);
    std::string shown = row.at("status");
    if (row.count("median_iteration_s")) shown += ", median " + row.at("median_iteration_s") + " s";
    if (!row.at("failure").empty()) shown += ": " + row.at("failure");
    progress_.finished(run, shown);
    if (kept) *kept = outcome;
    return !interrupt_requested();
  }

  // The baseline and its advice: nullopt (after an error row) when either broke.
  std::optional<AdvisedValues> advised_baseline(const Point& point, const std::string& run, const std::string& case_id,
                                                int rep, bool& whole, const std::vector<std::string>& repeats = {}) {
    std::optional<AdvisedValues> advice;
    whole = measure(spec_, point, run, "baseline", case_id, rep, [&](AdviceRow& row, const JobOutcome& outcome) {
      if (outcome.status != "ok") {
        row["status"] = "error";
        if (row["failure"].empty()) row["failure"] = "the baseline failed";
        return;
      }
      std::string why;
      advice = advise(run, why, repeats);
      if (!advice) {
        row["status"] = "error";
        row["failure"] = why;
        return;
      }
      add_advice(row, *advice, advice_json(run));
    });
    return advice;
  }

  bool check_timeout() {
    const auto& a = spec_.advice;
    const Point base = base_point();
    for (int rep = 0; rep < spec_.repetitions; ++rep) {
      const std::string r = "rep" + std::to_string(rep);
      bool whole = true;
      const auto advice = advised_baseline(base, "base-" + r, "", rep, whole);
      if (!whole) return false;
      if (!advice) continue;
      if (!advice->timeout_s) {
        error_row(base, "base-" + r + "-timeout", rep, "ddp-sim advise gave no timeout (advice/base-" + r + ".json)");
        continue;
      }
      const auto copy_advice = [&](AdviceRow& row) { add_advice(row, *advice, advice_json("base-" + r)); };
      Point advised = base;
      advised.timeout_s = *advice->timeout_s;
      const ExperimentSpec longer = with_iterations(spec_.workload.iterations * a.follow_factor);
      for (int k = 0; k < a.follow_runs; ++k)
        if (!measure(longer, advised, "follow-" + r + "-" + std::to_string(k), "follow", "", rep,
                     [&](AdviceRow& row, const JobOutcome&) { copy_advice(row); }))
          return false;
      Point hung = advised;
      const int at = a.hang_iteration >= 0 ? a.hang_iteration : spec_.workload.iterations / 2;
      hung.delay = {std::to_string(a.hang_rank) + "=" + std::to_string(hang_stall_ms(*advice->timeout_s, a.hang_stall_factor)) +
                    "@" + std::to_string(at)};
      for (int k = 0; k < a.hang_runs; ++k) {
        const std::string run = "hang-" + r + "-" + std::to_string(k);
        if (!measure(spec_, hung, run, "hang", "", rep, [&](AdviceRow& row, const JobOutcome&) {
              copy_advice(row);
              if (const auto detect = detection_time_s(trace_dir(run), hung.world_size, a.hang_rank))
                row["measured_detect_s"] = number(*detect);
            }))
          return false;
      }
    }
    return true;
  }

  bool check_bucket() {
    const auto points = expand_grid(spec_.grid);
    for (const Point& own : points) {
      const std::string case_id = "cap" + number(own.bucket_cap_mb);
      bool whole = true;
      // The repeats first, each a plain run of the own cap; a broken one is left out of --repeats.
      std::vector<std::string> repeats;
      int k = 0;
      for (const std::string& repeat : baseline_repeats(case_id + "-base")) {
        bool ok = false;
        if (!measure(spec_, own, repeat, "baseline_repeat", case_id, ++k,
                     [&](AdviceRow&, const JobOutcome& outcome) { ok = outcome.status == "ok"; }))
          return false;
        if (ok) repeats.push_back(repeat);
      }
      const auto advice = advised_baseline(own, case_id + "-base", case_id, 0, whole, repeats);
      if (!whole) return false;
      if (!advice) continue;
      if (!advice->compared_cap_mb) {
        error_row(own, case_id + "-compare", 0, "ddp-sim advise gave no cap to compare (advice/" + case_id + "-base.json)");
        continue;
      }
      Point other = own;
      other.bucket_cap_mb = *advice->compared_cap_mb;
      other.id = own.id + "-other";
      for (int rep = 0; rep < spec_.repetitions; ++rep) {
        const std::string r = "-rep" + std::to_string(rep);
        // own other, other own, ...: neither cap always runs first.
        for (const bool own_first : {rep % 2 == 0, rep % 2 != 0}) {
          const Point& point = own_first ? own : other;
          const std::string role = own_first ? "own" : "other";
          if (!measure(spec_, point, case_id + "-" + role + r, role, case_id, rep,
                       [&](AdviceRow& row, const JobOutcome&) { add_advice(row, *advice, advice_json(case_id + "-base")); }))
            return false;
        }
      }
    }
    return true;
  }

  bool check_stragglers() {
    const auto points = expand_grid(spec_.grid);
    for (const RunKey& key : interleaved_schedule(points.size(), spec_.repetitions)) {
      const Point& point = points[key.point];
      const std::string run = run_name(point, key.rep);
      if (!measure(spec_, point, run, "case", point.id, key.rep, [&](AdviceRow& row, const JobOutcome& outcome) {
            row["slowed_ranks"] = rank_list(slowed_ranks(point.slowdown, point.world_size));
            if (outcome.status != "ok") {
              row["status"] = "error";
              return;
            }
            std::string why;
            const auto advice = advise(run, why);
            if (!advice || !advice->named_stragglers) {
              row["status"] = "error";
              row["failure"] = advice ? "ddp-sim advise named no stragglers field" : why;
              return;
            }
            add_advice(row, *advice, advice_json(run));
          }))
        return false;
    }
    return true;
  }

  void error_row(const Point& point, const std::string& run, int rep, const std::string& why) {
    JobOutcome outcome;
    outcome.status = "error";
    outcome.failure = why;
    write(row_of(spec_, point, run, "advice", "", rep, outcome));
    progress_.note(run, "ERROR " + why);
  }

  int dry_run() {
    const auto& a = spec_.advice;
    const auto points = expand_grid(spec_.grid);
    const auto advise_line = [&](const std::string& run) { return shell_quote(advise_command(run)); };
    if (a.machine_profile) out_ << shell_quote(machine_command()) << '\n';
    if (a.kind == "stragglers") {
      for (const RunKey& key : interleaved_schedule(points.size(), spec_.repetitions)) {
        const std::string run = run_name(points[key.point], key.rep);
        out_ << shell_quote(train_command(spec_, points[key.point], options_.bin_dir, trace_dir(run),
                                          options_.testbed_script, key.rep))
             << '\n' << advise_line(run) << '\n';
      }
      return 0;
    }
    for (const Point& point : a.kind == "bucket" ? points : std::vector<Point>{points.front()}) {
      const std::string run = a.kind == "bucket" ? "cap" + number(point.bucket_cap_mb) + "-base" : "base-rep0";
      const std::vector<std::string> repeats = a.kind == "bucket" ? baseline_repeats(run) : std::vector<std::string>{};
      for (std::size_t k = 0; k < repeats.size(); ++k)
        out_ << shell_quote(train_command(spec_, point, options_.bin_dir, trace_dir(repeats[k]), options_.testbed_script,
                                          static_cast<int>(k) + 1))
             << '\n';
      out_ << shell_quote(train_command(spec_, point, options_.bin_dir, trace_dir(run), options_.testbed_script)) << '\n'
           << shell_quote(advise_command(run, repeats)) << '\n';
    }
    if (a.kind == "timeout")
      out_ << "# then, per repetition, " << a.follow_runs << " job(s) of " << spec_.workload.iterations * a.follow_factor
           << " iterations with --timeout ADVISED and " << a.hang_runs << " with --timeout ADVISED --delay "
           << a.hang_rank << "=" << a.hang_stall_factor << "xADVISED@"
           << (a.hang_iteration >= 0 ? a.hang_iteration : spec_.workload.iterations / 2) << "\n";
    else
      out_ << "# then, per cap, " << spec_.repetitions << " pairs: --bucket-cap-mb OWN and --bucket-cap-mb COMPARED "
           << "(the advised cap, or the fastest other layout with \"keep\"), alternating which runs first\n";
    return 0;
  }

  ExperimentSpec spec_;
  const RunOptions& options_;
  std::ostream& out_;
  std::string root_;
  Progress progress_;
  int rows_ = 0, errors_ = 0;
};

}  // namespace

int run_advice_experiment(const ExperimentSpec& spec, const RunOptions& options, std::ostream& out,
                          std::ostream& err) {
  return AdviceRunner(spec, options, out, err).run();
}

}  // namespace ddpsim::experiment
