#include "runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "advice_run.hpp"
#include "commands.hpp"
#include "core_hold.hpp"
#include "machine_profile.hpp"
#include "names.hpp"
#include "process.hpp"
#include "progress.hpp"
#include "provenance.hpp"
#include "trace_summary.hpp"
#include "ddpsim/trace/stats.hpp"

namespace fs = std::filesystem;

namespace ddpsim::experiment {
namespace {

// Runs the tools of one point × repetition and turns their outputs into rows.
// The trace directories of `baseline`'s repetitions in `reps` other than `rep`: what a
// prediction from repetition `rep` passes to ddp-sim replay as --repeats.
std::vector<std::string> other_repetitions(const Layout& layout, const Point& baseline, int rep,
                                           const std::vector<int>& reps) {
  std::vector<std::string> dirs;
  for (const int other : reps)
    if (other != rep) dirs.push_back(layout.trace_dir(run_name(baseline, other)));
  return dirs;
}

class RunExecutor {
 public:
  // `profile` gives the cross predictions their machine profile's flags.
  RunExecutor(const ExperimentSpec& spec, const Layout& layout, const RunOptions& options,
              MachineProfile& profile)
      : spec_(spec), layout_(layout), bin_dir_(options.bin_dir), testbed_script_(options.testbed_script),
        profile_(profile) {}

  // Empty when interrupted (nothing is recorded, so the run is redone next time).
  std::vector<ResultRow> execute(const Point& point, int rep) {
    const std::string name = run_name(point, rep);
    const std::string trace = layout_.trace_dir(name);
    clear_leftovers(name, trace);

    ResultRow base = new_row(point, rep, "");
    base.trace_dir = relative(trace);

    const std::string train_log = layout_.log_file(name, "train");
    const auto started = std::chrono::steady_clock::now();
    // On the testbed, testbed.sh enforces job_timeout_s itself (exit 124) and tears its
    // namespaces down; our own guard comes later, for a testbed that hangs.
    const double guard_s = spec_.limits.job_timeout_s + (spec_.launch.testbed() ? 60 : 0);
    ProcessResult job = run_process(train_command(spec_, point, bin_dir_, trace, testbed_script_, rep),
                                    train_log, train_log, guard_s);
    if (job.interrupted) return {};
    if (spec_.launch.testbed() && job.exit_code == 124) job.timed_out = true;
    if (job.launch_error.empty()) base.job_exit = job.exit_code;
    base.job_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!job.launch_error.empty()) return {error(base, "ddp-launch: " + job.launch_error)};

    std::string why;
    auto measured = summarize(trace, name, "summary", why);
    if (!measured) {
      if (interrupt_requested()) return {};
      // A job that failed without leaving a readable trace: its own error says why.
      if (!job.ok()) return {error(base, "job " + describe_failure(job, train_log))};
      return {error(base, "ddp-trace summary: " + why)};
    }
    fill_results(base.measured, *measured, point.world_size);
    base.measured.iterations = measured->complete_iterations;
    if (job.timed_out) {
      base.measured.failed = true;
      base.measured.failure = "hung: killed after job_timeout_s = " +
                              format_number(spec_.limits.job_timeout_s) + " s";
    } else if (job.exit_code != 0 && measured->failures.empty()) {
      // A failure the trace does not explain is a broken run, not an outcome to study.
      return {error(base, "job " + describe_failure(job, train_log))};
    }
    return predict_all(base, point, rep);
  }

  // The predictions of a measured run: `measured` is its row with the measured columns
  // filled. Used after a measurement and, on resume, to redo predictions that failed while
  // keeping the (expensive) measurement. Empty when interrupted.
  std::vector<ResultRow> predict_all(ResultRow measured, const Point& point, int rep) {
    const std::string name = run_name(point, rep);
    const std::string trace = layout_.trace_dir(name);
    ResultRow base = std::move(measured);
    base.kind = "measurement";
    base.predicted_world_size = point.world_size;
    base.predicted_timeout_s = point.timeout_s;
    if (!spec_.predict.enabled) return {base};
    if (point.world_size < spec_.predict.min_world_size) {
      base.message = "no prediction: world size below [predict] min_world_size";
      return {base};
    }
    base.kind = "reconstruction";

    const std::string calibration = layout_.calibration_json(name);
    const std::string calibrate_log = layout_.log_file(name, "calibrate");
    fs::remove(calibrate_log);
    fs::remove(calibration);  // an earlier attempt's fit must not be reused as this one's
    const ProcessResult calibrated = run_process(
        calibrate_command(spec_, bin_dir_, trace, calibration), calibrate_log, calibrate_log,
        spec_.limits.tool_timeout_s);
    if (calibrated.interrupted) return {};
    // Every replay of this trace reuses this one fit (--calibration). Without it the replays
    // calibrate for themselves unless given the network: go on, and say why calibration
    // failed if they fail too.
    calibrate_note_ = calibrated.ok() ? "" : "; ddp-sim calibrate " +
                                                 describe_failure(calibrated, calibrate_log);
    const std::string reused = reusable(calibration);

    std::vector<ResultRow> rows;
    if (!predict(base, nullptr, point, point, name, trace, calibration, reused)) return {};
    rows.push_back(base);
    for (const auto& what_if : spec_.predict.what_ifs) {
      ResultRow row = new_row(point, rep, what_if.name);
      row.kind = "whatif";
      row.predicted_world_size = what_if.world_size.value_or(point.world_size);
      row.predicted_timeout_s = what_if.timeout_s ? what_if.timeout_s : point.timeout_s;
      row.trace_dir = relative(trace);
      row.job_exit = base.job_exit;
      if (!predict(row, &what_if, point, point, name, trace, calibration, reused)) return {};
      rows.push_back(row);
    }
    return rows;
  }

  // The prediction of `point`'s repetition `rep` from the baseline's trace of that repetition,
  // compared with `measured` (the point's own measured row). `baseline_reps`: the baseline's
  // measured repetitions; the others' traces go to the replay as --repeats, so that its
  // interval also spans how much the baseline differs from run to run. nullopt when interrupted.
  std::optional<ResultRow> cross_predict(const ResultRow& measured, const Point& point,
                                         const Point& baseline, int rep, const std::vector<int>& baseline_reps) {
    const std::string name = run_name(point, rep);
    const std::string base_name = run_name(baseline, rep);
    std::string no_profile;
    const WhatIf what_if = cross_prediction(spec_, baseline, point, profile_.args_for(baseline, point, no_profile));
    ResultRow row = new_row(point, rep, what_if.name);
    row.kind = "prediction";
    row.measured = measured.measured;
    row.job_exit = measured.job_exit;
    row.job_wall_s = measured.job_wall_s;
    row.trace_dir = measured.trace_dir;
    row.predicted_world_size = point.world_size;
    row.predicted_timeout_s = point.timeout_s;
    calibrate_note_.clear();
    if (!no_profile.empty()) {
      prediction_error(row, no_profile);
      return row;
    }
    const std::string calibration = layout_.calibration_json(base_name);
    if (!predict(row, &what_if, baseline, point, name, layout_.trace_dir(base_name), calibration,
                 reusable(calibration), repeats_of(baseline, rep, baseline_reps)))
      return std::nullopt;
    return row;
  }

 private:
  // other_repetitions that are there (a re-prediction keeps the rows of runs whose trace is gone).
  std::vector<std::string> repeats_of(const Point& baseline, int rep, const std::vector<int>& baseline_reps) const {
    std::vector<std::string> repeats = other_repetitions(layout_, baseline, rep, baseline_reps);
    repeats.erase(std::remove_if(repeats.begin(), repeats.end(), [](const std::string& dir) { return !fs::is_directory(dir); }),
                  repeats.end());
    return repeats;
  }

  // Replays `trace` (recorded at configuration `replayed`, with a what-if's flags) and fills
  // the predicted columns of `row`, the row of run `name` of point `compared` (whose measured
  // columns, if any, it is compared with). False when interrupted.
  bool predict(ResultRow& row, const WhatIf* what_if, const Point& replayed, const Point& compared,
               const std::string& name, const std::string& trace, const std::string& calibration,
               const std::string& reused_calibration, const std::vector<std::string>& repeats = {}) {
    const std::string variant = what_if ? what_if->name : "";
    const std::string out_dir = layout_.prediction_dir(name, variant);
    const std::string step = what_if ? "replay-" + variant : "replay";
    const std::string log = layout_.log_file(name, step);
    const std::string report = layout_.report_json(name, step);
    fs::remove_all(out_dir);  // a previous attempt's prediction must not be read as this one's
    fs::remove(log);
    fs::remove(report);
    const ProcessResult replay = run_process(
        replay_command(spec_, replayed, what_if, bin_dir_, trace, calibration, out_dir, report,
                       reused_calibration, repeats, layout_.machine_json()),
        log, log, spec_.limits.tool_timeout_s);
    if (replay.interrupted) return false;
    row.predicted_dir = relative(out_dir);
    row.replayed_trace = relative(trace);
    if (!replay.launch_error.empty()) {
      prediction_error(row, "ddp-sim replay: " + replay.launch_error);
      return true;
    }
    // The replay summarised the trace it predicted ("predicted" in its --json report, the same
    // summary ddp-trace summary prints): read it there, not by summarising the trace again.
    if (!fs::exists(report)) {
      if (interrupt_requested()) return false;
      prediction_error(row, "ddp-sim replay " + describe_failure(replay, log) + calibrate_note_);
      return true;
    }
    ReplayReport parsed;
    try {
      parsed = parse_replay_report(read_file(report), report);
    } catch (const std::exception& e) {
      prediction_error(row, e.what());
      return true;
    }
    const TraceSummary& predicted = parsed.predicted;
    const int world_size = what_if && what_if->world_size ? *what_if->world_size : replayed.world_size;
    fill_results(row.predicted, predicted, world_size);
    // A what-if of random stalls predicts a distribution: its median is that of every Monte
    // Carlo run's iterations, not of the first run's few draws (a few dozen draws put one run's
    // median off the distribution's, the same way in every repetition, as one --seed gives
    // every repetition the same draws).
    std::vector<double> predicted_times = predicted.iteration_times_s;
    if (what_if && !compared.delay_dist.empty() && parsed.runs > 1 && !parsed.pooled_iteration_times_s.empty()) {
      predicted_times = parsed.pooled_iteration_times_s;
      set_iteration_time(row.predicted, quantile(predicted_times, 0.5), world_size);
    }
    row.predicted.interval = parsed.interval;  // with --bootstrap: the predicted median's 90 % interval
    const std::optional<double> measured = row.measured.iter_s;
    Comparison& comparison = row.comparison;
    if (measured && row.predicted.iter_s)
      comparison.error_pct = 100.0 * trace::relative_error(*row.predicted.iter_s, *measured);
    if (measured && parsed.interval)
      comparison.inside = parsed.interval->first <= *measured && *measured <= parsed.interval->second;
    row.predicted.run_to_run_interval = parsed.run_to_run_interval;
    if (measured && parsed.run_to_run_interval)
      comparison.inside_run_to_run = parsed.run_to_run_interval->first <= *measured &&
                                     *measured <= parsed.run_to_run_interval->second;
    // A random stall per iteration: compare the whole distribution, not only the median.
    if (!compared.delay_dist.empty() && measured) {
      const auto measured_times = measured_iteration_times(run_name(compared, row.rep));
      if (!measured_times.empty() && !predicted_times.empty()) {
        const DistributionErrors d = compare_distributions(measured_times, predicted_times);
        comparison.ks_distance = d.ks;
        comparison.p50_error_pct = d.p50_error_pct;
        comparison.p90_error_pct = d.p90_error_pct;
        comparison.p99_error_pct = d.p99_error_pct;
      }
    }
    return true;
  }

  // The fit calibrate wrote for a trace, to hand to its replays; "" when calibrate failed
  // (it writes no file then, and the file of an earlier attempt was removed before it ran).
  static std::string reusable(const std::string& calibration) {
    return fs::exists(calibration) ? calibration : "";
  }

  // The measured run's iteration times (>= 1), from its summary JSON (written when it was
  // measured; summarized again if that file is gone). Empty when unreadable.
  std::vector<double> measured_iteration_times(const std::string& name) {
    const std::string json_file = layout_.log_file(name, "summary") + ".json";
    try {
      if (fs::exists(json_file)) return parse_trace_summary(read_file(json_file), json_file).iteration_times_s;
    } catch (const std::exception&) {
    }
    std::string why;
    auto summary = summarize(layout_.trace_dir(name), name, "summary-again", why);
    return summary ? summary->iteration_times_s : std::vector<double>{};
  }

  std::optional<TraceSummary> summarize(const std::string& dir, const std::string& name,
                                        const std::string& step, std::string& why) {
    const std::string json_file = layout_.log_file(name, step) + ".json";
    const std::string log = layout_.log_file(name, step);
    fs::remove(json_file);
    const ProcessResult result = run_process(summary_command(bin_dir_, dir), json_file, log,
                                             spec_.limits.tool_timeout_s);
    if (!result.ok()) {
      why = describe_failure(result, log);
      return std::nullopt;
    }
    try {
      return parse_trace_summary(read_file(json_file), json_file);
    } catch (const std::exception& e) {
      why = e.what();
      return std::nullopt;
    }
  }

  // A median iteration time and the throughput it means.
  template <typename Results>
  void set_iteration_time(Results& results, double iter_s, int world_size) const {
    results.iter_s = iter_s;
    results.samples_per_s = world_size * static_cast<double>(spec_.workload.batch_size) / iter_s;
  }

  // The measured or predicted columns a trace summary gives.
  template <typename Results>
  void fill_results(Results& results, const TraceSummary& summary, int world_size) {
    if (summary.median_iteration_s > 0) set_iteration_time(results, summary.median_iteration_s, world_size);
    results.failed = !summary.failures.empty();
    if (!summary.failures.empty()) results.failure = summary.failures.front();
  }

  // A row of run (point, rep) with its configuration, status "ok".
  ResultRow new_row(const Point& point, int rep, const std::string& variant) const {
    ResultRow row;
    row.point = point.id;
    row.rep = rep;
    row.variant = variant;
    row.status = "ok";
    row.config = config_row(spec_, point);
    return row;
  }

  // The measurement failed: the run is redone on resume.
  static ResultRow error(ResultRow row, const std::string& message) {
    row.status = "error";
    row.message = message;
    return row;
  }
  // The measurement is good but a prediction failed: resume redoes only the predictions.
  static void prediction_error(ResultRow& row, const std::string& message) {
    row.status = "prediction_error";
    row.message = message;
  }

  // An interrupted earlier attempt may have left a partial trace: never mix two runs.
  void clear_leftovers(const std::string& name, const std::string& trace) {
    fs::remove_all(trace);
    fs::remove(layout_.calibration_json(name));
    fs::remove_all(layout_.prediction_dir(name, ""));
    for (const auto& what_if : spec_.predict.what_ifs)
      fs::remove_all(layout_.prediction_dir(name, what_if.name));
    if (spec_.predict.baseline.enabled) {
      // The prediction of this run from the baseline (named after it): redone after it.
      for (const auto& entry : fs::directory_iterator(layout_.root + "/predictions"))
        if (entry.path().filename().string().rfind(name + "-from-", 0) == 0)
          fs::remove_all(entry.path());
    }
    const std::string prefix = name + ".";
    for (const auto& entry : fs::directory_iterator(layout_.root + "/logs"))
      if (entry.path().filename().string().rfind(prefix, 0) == 0) fs::remove(entry.path());
  }

  std::string relative(const std::string& path) const {
    return fs::path(path).lexically_relative(layout_.root).string();
  }

  const ExperimentSpec& spec_;
  const Layout& layout_;
  const std::string& bin_dir_;
  const std::string& testbed_script_;
  MachineProfile& profile_;
  std::string calibrate_note_;
};

// A number for the progress line, "-" when there is none.
std::string rounded(const std::optional<double>& value, const char* format) {
  if (!value) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, *value);
  return buffer;
}

std::string describe_rows(const std::vector<ResultRow>& rows) {
  const ResultRow& base = rows.front();
  if (base.status != "ok") return "ERROR " + base.message;
  std::string text = "measured " + rounded(base.measured.iter_s, "%.4g") + " s/it";
  if (base.measured.failed.value_or(false)) text += " (failed)";
  if (base.predicted.failed) {  // a replay report was read
    text += ", predicted " + rounded(base.predicted.iter_s, "%.4g") + " s/it";
    if (*base.predicted.failed) text += " (failed)";
    if (base.comparison.error_pct) text += " (" + rounded(base.comparison.error_pct, "%+.1f") + " %)";
  }
  size_t errors = 0;
  for (const auto& row : rows) errors += row.status != "ok";
  if (!base.message.empty() && errors == 0) text += " (" + base.message + ")";
  if (errors) text += "; " + std::to_string(errors) + " prediction(s) failed, see summary.csv";
  return text;
}

// Which runs are measured well enough to replay, and which cross predictions exist: the
// state the baseline predictions are scheduled from (summary.csv rows, kept and appended).
class CrossState {
 public:
  CrossState(const std::vector<Point>& points, std::optional<size_t> baseline, std::string variant)
      : points_(points), baseline_(baseline), variant_(std::move(variant)) {}

  void add(const ResultRow& row) {
    if (row.rep < 0) return;
    if (row.variant.empty() && row.status != "error") measured_[{row.point, row.rep}] = row;
    if (!variant_.empty() && row.variant == variant_) predicted_.insert({row.point, row.rep});
  }
  // The cross predictions that can be made now and are not there: (point index, rep, the
  // point's measured row), repetitions in order.
  std::vector<std::tuple<size_t, int, ResultRow>> due(int repetitions) const {
    std::vector<std::tuple<size_t, int, ResultRow>> out;
    if (!baseline_) return out;
    const std::string& base_id = points_[*baseline_].id;
    for (int rep = 0; rep < repetitions; ++rep) {
      if (!measured_.count({base_id, rep})) continue;
      for (size_t i = 0; i < points_.size(); ++i) {
        if (i == *baseline_ || predicted_.count({points_[i].id, rep})) continue;
        auto it = measured_.find({points_[i].id, rep});
        if (it != measured_.end()) out.emplace_back(i, rep, it->second);
      }
    }
    return out;
  }
  void mark_predicted(const std::string& point, int rep) { predicted_.insert({point, rep}); }
  // The baseline's measured repetitions, in order.
  std::vector<int> baseline_reps() const {
    std::vector<int> reps;
    if (!baseline_) return reps;
    for (const auto& [key, row] : measured_)
      if (key.first == points_[*baseline_].id) reps.push_back(key.second);
    return reps;
  }

 private:
  const std::vector<Point>& points_;
  std::optional<size_t> baseline_;
  std::string variant_;
  std::map<std::pair<std::string, int>, ResultRow> measured_;
  std::set<std::pair<std::string, int>> predicted_;
};

std::string describe_prediction(const ResultRow& row) {
  if (row.status != "ok") return "ERROR " + row.message;
  std::string text = "predicted " + rounded(row.predicted.iter_s, "%.4g") + " s/it vs measured " +
                     rounded(row.measured.iter_s, "%.4g") + " s/it";
  if (row.comparison.error_pct) text += " (" + rounded(row.comparison.error_pct, "%+.1f") + " %)";
  return text;
}

// How many of `pending` are runs of the baseline point.
size_t baseline_runs(const std::vector<RunKey>& pending, size_t baseline) {
  return static_cast<size_t>(std::count_if(pending.begin(), pending.end(),
                                           [&](const RunKey& run) { return run.point == baseline; }));
}

void print_dry_run(const ExperimentSpec& spec, const Layout& layout, const RunOptions& options,
                   const MachineProfile& profile, const std::vector<Point>& points,
                   const std::vector<RunKey>& pending, size_t total, CrossState cross, std::ostream& out) {
  const std::string& bin_dir = options.bin_dir;
  const std::string& testbed_script = options.testbed_script;
  // What the machine profile will give the cross predictions, unknown until measured.
  const ProfileArgs profile_placeholders = profile.placeholders();
  std::set<int> profiled;  // the repetitions whose profile round is printed
  out << "# " << spec.name << ": " << points.size() << " points x " << spec.repetitions
      << " repetitions = " << total << " runs, " << pending.size() << " to do\n";
  const auto baseline = baseline_point(points, spec.predict.baseline);
  // Whose trace is calibrated (and its fit reused by its replays), when calibrate succeeds.
  const auto calibrated = [&](const Point& point) { return point.world_size >= spec.predict.min_world_size; };
  // The cross predictions become due once the runs they need and every repetition of the
  // baseline are measured: print each where a real run would make it.
  size_t baselines_left = baseline ? baseline_runs(pending, *baseline) : 0;
  auto print_due = [&] {
    if (!spec.predict.enabled || baselines_left > 0) return;
    for (const auto& [index, rep, row] : cross.due(spec.repetitions)) {
      const Point& point = points[index];
      const std::string name = run_name(point, rep);
      const std::string base_name = run_name(points[*baseline], rep);
      const WhatIf what_if = cross_prediction(spec, points[*baseline], point, profile_placeholders);
      const std::string dir = layout.prediction_dir(name, what_if.name);
      out << "# " << name << " predicted from " << base_name << '\n';
      out << shell_quote(replay_command(spec, points[*baseline], &what_if, bin_dir,
                                        layout.trace_dir(base_name), layout.calibration_json(base_name),
                                        dir, layout.report_json(name, "replay-" + what_if.name),
                                        calibrated(points[*baseline]) ? layout.calibration_json(base_name) : "",
                                        other_repetitions(layout, points[*baseline], rep, cross.baseline_reps())))
          << '\n';
      cross.mark_predicted(point.id, rep);
    }
  };
  print_due();
  for (const auto& run : pending) {
    const Point& point = points[run.point];
    const std::string name = run_name(point, run.rep);
    const std::string trace = layout.trace_dir(name);
    const std::string calibration = layout.calibration_json(name);
    if (!options.repredict && profiled.insert(run.rep).second) profile.print_round(run.rep, out);
    out << "# " << name << '\n';
    out << shell_quote(train_command(spec, point, bin_dir, trace, testbed_script, run.rep)) << '\n';
    out << shell_quote(summary_command(bin_dir, trace)) << '\n';
    ResultRow measured;  // as if measured
    measured.point = point.id;
    measured.rep = run.rep;
    measured.status = "ok";
    cross.add(measured);
    if (baseline && run.point == *baseline) --baselines_left;
    if (!spec.predict.enabled) continue;
    if (calibrated(point)) {
      out << shell_quote(calibrate_command(spec, bin_dir, trace, calibration)) << '\n';
      const std::string base_out = layout.prediction_dir(name, "");
      out << shell_quote(replay_command(spec, point, nullptr, bin_dir, trace, calibration, base_out,
                                        layout.report_json(name, "replay"), calibration, {}, layout.machine_json()))
          << '\n';
      for (const auto& what_if : spec.predict.what_ifs) {
        const std::string dir = layout.prediction_dir(name, what_if.name);
        out << shell_quote(replay_command(spec, point, &what_if, bin_dir, trace, calibration, dir,
                                          layout.report_json(name, "replay-" + what_if.name), calibration, {},
                                          layout.machine_json()))
            << '\n';
      }
    }
    print_due();
  }
}

}  // namespace

Row config_row(const ExperimentSpec& spec, const Point& point) {
  Row config = {
      {"experiment", spec.name},
      {"world_size", std::to_string(point.world_size)},
      {"hosts", spec.launch.testbed() ? std::to_string(point.hosts) : ""},
      {"bucket_cap_mb", format_number(point.bucket_cap_mb)},
      {"first_bucket_cap_mb", point.first_bucket_cap_mb ? format_number(*point.first_bucket_cap_mb) : ""},
      {"slowdown", join(point.slowdown, " ")},
      {"delay", join(point.delay, " ")},
      {"delay_dist", join(point.delay_dist, " ")},
      {"timeout_s", point.timeout_s ? format_number(*point.timeout_s) : ""},
      {"batch_size", std::to_string(spec.workload.batch_size)},
      {"iterations", std::to_string(spec.workload.iterations)},
  };
  fill_skew_maxima(config);
  return config;
}

int run_experiment(const ExperimentSpec& spec, const RunOptions& options, std::ostream& out,
                   std::ostream& err) {
  if (spec.advice.enabled()) {  // acts on ddp-sim advise's answer: advice_run.hpp
    if (options.repredict)
      throw SpecError(spec.path + ": --repredict: expected a spec with [predict], got an [advice] spec (it predicts nothing)");
    return run_advice_experiment(spec, options, out, err);
  }
  const Layout layout{options.out_root + "/" + spec.name};
  const auto points = expand_grid(spec.grid);
  const auto schedule = interleaved_schedule(points.size(), spec.repetitions);
  const auto baseline = spec.predict.enabled ? baseline_point(points, spec.predict.baseline)
                                             : std::nullopt;
  const std::string cross_variant = baseline ? "from-" + points[*baseline].id : "";

  MachineProfile profile(spec, layout, options);

  auto rows = read_summary(layout.summary_csv());
  if (options.repredict) {
    for (auto& row : rows)
      if (row.at("status") == "ok") row["status"] = "prediction_error";
  }
  const auto repredict = runs_to_predict_again(rows, layout.summary_csv());
  const auto kept = rows_of_finished_runs(rows);
  auto pending = pending_runs(schedule, points, finished_runs(kept));
  if (options.repredict) {  // only what has a measurement and its trace: nothing is measured
    const auto before = pending.size();
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [&](const RunKey& run) {
                                   return !repredict.count({points[run.point].id, run.rep}) ||
                                          !fs::is_directory(layout.trace_dir(run_name(points[run.point], run.rep)));
                                 }),
                  pending.end());
    if (pending.size() < before)
      err << "ddp-experiment: " << spec.name << ": --repredict: " << before - pending.size()
          << " runs without a measured trace are left to a run without --repredict\n";
  }

  // What the baseline predictions can use: finished runs, and the measurements of runs whose
  // predictions are redone (their measurement is kept).
  CrossState cross(points, baseline, cross_variant);
  for (const auto& row : kept) cross.add(measured_from_row(row, layout.summary_csv()));

  if (options.dry_run) {
    for (const auto& [key, row] : repredict) cross.add(row);
    print_dry_run(spec, layout, options, profile, points, pending, schedule.size(), cross, out);
    return 0;
  }

  for (const char* sub : {"traces", "predictions", "calibration", "logs", "profile"})
    fs::create_directories(layout.root + "/" + sub);
  check_same_spec(layout.provenance_json(), spec, options.repredict);
  write_provenance(layout.provenance_json(), spec, options.command_line, options.bin_dir);
  // A run whose predictions are redone keeps its measured row, marked prediction_error, until
  // its new rows replace it: an interruption loses no measurement.
  const auto retained = rows_to_keep(rows, repredict);
  if (retained != rows || !summary_header_is_current(layout.summary_csv()))
    rewrite_summary(layout.summary_csv(), retained);

  const auto due = cross.due(spec.repetitions);
  if (pending.empty() && due.empty()) {
    err << "ddp-experiment: " << spec.name << ": all " << schedule.size()
        << " runs already in " << layout.summary_csv() << '\n';
    return 0;
  }
  if (pending.size() < schedule.size()) {
    err << "ddp-experiment: " << spec.name << ": resuming, " << schedule.size() - pending.size()
        << " of " << schedule.size() << " runs already done\n";
  }

  // Held until every run and prediction is done (a failure to hold is one line, exit 2).
  std::optional<CoreHold> hold;
  if (spec.launch.hold_cores && !options.repredict) {
    hold.emplace();
    err << "ddp-experiment: " << spec.name << ": holding " << hold->cpus().size()
        << " CPUs at idle priority while it runs ([launch] hold_cores)\n";
  }

  // From here on a results file that cannot be written (a full disk mid-run) is a failure of
  // the run, exit 1, like a failed job; what could not be set up above is usage, exit 2.
  try {
    install_interrupt_handlers();
    Progress progress(err, pending.size(), options.progress_bar);
    RunExecutor executor(spec, layout, options, profile);
    bool any_error = false;
    // Every point of a repetition predicted from that repetition's baseline, once both are
    // measured and so is every repetition of the baseline that is still to run: each
    // prediction's interval then spans the baseline's run-to-run spread over all of them
    // (replay --repeats). A rerun after an interruption only adds what is missing.
    size_t baselines_left = baseline ? baseline_runs(pending, *baseline) : 0;
    // The machine profile's round of repetition `rep` where it is missing; false when interrupted.
    auto profile_round = [&](int rep) -> bool {
      if (options.repredict) return true;  // measures nothing
      const auto failed = profile.measure(rep);
      if (!failed) {
        progress.done();
        err << "ddp-experiment: interrupted during the machine profile of repetition " << rep << "; rerun to resume\n";
        return false;
      }
      if (!failed->empty()) progress.note("profile of repetition " + std::to_string(rep), "ERROR " + *failed);
      return true;
    };
    std::map<std::string, std::string> profiles_noted;
    auto predict_due = [&]() -> bool {
      if (baselines_left > 0) return true;
      const auto due = cross.due(spec.repetitions);
      // A profile round that failed, or a rerun's: measured now, before the predictions it serves.
      for (int rep = 0; !due.empty() && rep < spec.repetitions; ++rep)
        if (!profile_round(rep)) return false;
      for (const auto& [index, rep, measured] : due) {
        const Point& point = points[index];
        const std::string label = run_name(point, rep) + " from " + run_name(points[*baseline], rep);
        progress.starting(label);
        auto row = executor.cross_predict(measured, point, points[*baseline], rep, cross.baseline_reps());
        if (!row || interrupt_requested()) {
          progress.done();
          err << "ddp-experiment: interrupted during " << label << "; rerun to resume\n";
          return false;
        }
        append_rows(layout.summary_csv(), {to_row(*row)});
        cross.add(*row);
        any_error = any_error || row->status != "ok";
        for (const auto& [what, summary] : profile.summaries()) {
          if (profiles_noted[what] == summary) continue;
          profiles_noted[what] = summary;
          progress.note(what, summary);
        }
        progress.note(label, describe_prediction(*row));
      }
      return true;
    };
    if (!predict_due()) return 130;
    for (const auto& run : pending) {
      const Point& point = points[run.point];
      const std::string name = run_name(point, run.rep);
      progress.starting(name);
      // A good measurement whose predictions failed keeps its trace: only predict again.
      const auto measured = repredict.find({point.id, run.rep});
      const bool predict_only = measured != repredict.end() && fs::is_directory(layout.trace_dir(name));
      // The machine profile of this repetition, measured beside its runs (once: its files stay).
      if (!predict_only && !profile_round(run.rep)) return 130;
      auto run_rows = predict_only ? executor.predict_all(measured->second, point, run.rep)
                                   : executor.execute(point, run.rep);
      if (run_rows.empty() || interrupt_requested()) {
        progress.done();
        err << "ddp-experiment: interrupted during " << name << "; rerun to resume\n";
        return 130;
      }
      std::vector<Row> written;
      for (const auto& row : run_rows) {
        written.push_back(to_row(row));
        any_error = any_error || row.status != "ok";
        cross.add(row);
      }
      if (measured != repredict.end()) {
        replace_run_rows(layout.summary_csv(), {point.id, run.rep}, written);
      } else {
        append_rows(layout.summary_csv(), written);
      }
      if (baseline && run.point == *baseline) --baselines_left;
      progress.finished(name, describe_rows(run_rows));
      if (!predict_due()) return 130;
    }
    progress.done();
    out << layout.summary_csv() << '\n';
    return any_error ? 1 : 0;
  } catch (const fs::filesystem_error& error) {
    err << "ddp-experiment: " << error.path1().string() << ": expected files that can be written, got "
        << error.code().message() << '\n';
    return 1;
  } catch (const std::runtime_error& error) {
    err << "ddp-experiment: " << error.what() << '\n';
    return 1;
  }
}

}  // namespace ddpsim::experiment
