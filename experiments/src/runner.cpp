#include "runner.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "names.hpp"
#include "process.hpp"
#include "progress.hpp"
#include "provenance.hpp"
#include "trace_summary.hpp"

namespace fs = std::filesystem;

namespace ddpsim::experiment {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The last non-empty line of a log: usually the tool's one-line error.
std::string last_line(const std::string& path) {
  std::istringstream in(read_file(path));
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last.empty() ? "(no output; see " + path + ")" : last;
}

std::string describe_failure(const ProcessResult& result, const std::string& log) {
  if (!result.launch_error.empty()) return result.launch_error;
  if (result.timed_out) return "killed after the time limit; see " + log;
  return "exit " + std::to_string(result.exit_code) + ": " + last_line(log);
}

std::string seconds_text(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", seconds);
  return buffer;
}

// Runs the tools of one point × repetition and turns their outputs into rows.
class RunExecutor {
 public:
  RunExecutor(const ExperimentSpec& spec, const Layout& layout, const std::string& bin_dir)
      : spec_(spec), layout_(layout), bin_dir_(bin_dir) {}

  // Empty when interrupted (nothing is recorded, so the run is redone next time).
  std::vector<Row> execute(const Point& point, int rep) {
    const std::string name = run_name(point, rep);
    const std::string trace = layout_.trace_dir(name);
    clear_leftovers(name, trace);

    Row base = config_row(spec_, point, rep);
    base["status"] = "ok";
    base["trace_dir"] = relative(trace);

    const std::string train_log = layout_.log_file(name, "train");
    const auto started = std::chrono::steady_clock::now();
    const ProcessResult job = run_process(train_command(spec_, point, bin_dir_, trace), train_log,
                                          train_log, spec_.limits.job_timeout_s);
    if (job.interrupted) return {};
    base["job_exit"] = job.launch_error.empty() ? std::to_string(job.exit_code) : "";
    base["job_wall_s"] = seconds_text(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (!job.launch_error.empty()) return {error(base, "ddp-launch: " + job.launch_error)};

    std::string why;
    auto measured = summarize(trace, name, "summary", why);
    if (!measured) {
      if (interrupt_requested()) return {};
      // A job that failed without leaving a readable trace: its own error says why.
      if (!job.ok()) return {error(base, "job " + describe_failure(job, train_log))};
      return {error(base, "ddp-trace summary: " + why)};
    }
    fill_results(base, "measured", *measured, point.world_size);
    base["measured_iterations"] = std::to_string(measured->complete_iterations);
    if (job.timed_out) {
      base["measured_failed"] = "1";
      base["measured_failure"] = "hung: killed after job_timeout_s = " +
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
  std::vector<Row> predict_all(Row measured, const Point& point, int rep) {
    const std::string name = run_name(point, rep);
    const std::string trace = layout_.trace_dir(name);
    Row base = std::move(measured);
    base["predicted_world_size"] = std::to_string(point.world_size);
    base["predicted_timeout_s"] = point.timeout_s ? format_number(*point.timeout_s) : "";
    if (!spec_.predict.enabled) return {base};
    if (point.world_size < spec_.predict.min_world_size) {
      base["message"] = "no prediction: world size below [predict] min_world_size";
      return {base};
    }

    const std::string calibration = layout_.calibration_json(name);
    const std::string calibrate_log = layout_.log_file(name, "calibrate");
    fs::remove(calibrate_log);
    const ProcessResult calibrated = run_process(
        calibrate_command(spec_, bin_dir_, trace, calibration), calibrate_log, calibrate_log,
        spec_.limits.tool_timeout_s);
    if (calibrated.interrupted) return {};
    // The replays calibrate for themselves unless given the network: go on, and say why
    // calibration failed if they fail too.
    calibrate_note_ = calibrated.ok() ? "" : "; ddp-sim calibrate " +
                                                 describe_failure(calibrated, calibrate_log);

    std::vector<Row> rows;
    if (!predict(base, nullptr, point, name, trace, calibration)) return {};
    rows.push_back(base);
    for (const auto& what_if : spec_.predict.what_ifs) {
      Row row = config_row(spec_, point, rep);
      row["variant"] = what_if.name;
      row["status"] = "ok";
      row["predicted_world_size"] = std::to_string(what_if.world_size.value_or(point.world_size));
      row["predicted_timeout_s"] = what_if.timeout_s ? format_number(*what_if.timeout_s)
                                   : point.timeout_s ? format_number(*point.timeout_s) : "";
      row["trace_dir"] = relative(trace);
      row["job_exit"] = base["job_exit"];
      if (!predict(row, &what_if, point, name, trace, calibration)) return {};
      rows.push_back(row);
    }
    return rows;
  }

 private:
  // Replays the trace (with a what-if's flags) and fills the predicted columns of `row`.
  // False when interrupted.
  bool predict(Row& row, const WhatIf* what_if, const Point& point, const std::string& name,
               const std::string& trace, const std::string& calibration) {
    const std::string variant = what_if ? what_if->name : "";
    const std::string out_dir = layout_.prediction_dir(name, variant);
    const std::string step = what_if ? "replay-" + variant : "replay";
    const std::string log = layout_.log_file(name, step);
    fs::remove_all(out_dir);  // a previous attempt's prediction must not be read as this one's
    fs::remove(log);
    const ProcessResult replay = run_process(
        replay_command(spec_, point, what_if, bin_dir_, trace, calibration, out_dir), log, log,
        spec_.limits.tool_timeout_s);
    if (replay.interrupted) return false;
    row["predicted_dir"] = relative(out_dir);
    if (!replay.launch_error.empty()) {
      row = prediction_error(row, "ddp-sim replay: " + replay.launch_error);
      return true;
    }
    // A replay that predicts a failure may exit non-zero; its trace is what counts.
    std::string why;
    auto predicted = summarize(out_dir, name, "summary-" + (variant.empty() ? "predicted" : variant), why);
    if (!predicted) {
      if (interrupt_requested()) return false;
      row = prediction_error(row, "ddp-sim replay " + describe_failure(replay, log) + calibrate_note_);
      return true;
    }
    const int world_size = what_if && what_if->world_size ? *what_if->world_size : point.world_size;
    fill_results(row, "predicted", *predicted, world_size);
    const std::string& measured = row["measured_iter_s"];
    if (!measured.empty() && !row["predicted_iter_s"].empty()) {
      const double m = std::stod(measured), p = std::stod(row["predicted_iter_s"]);
      row["error_pct"] = seconds_text(100.0 * (p - m) / m);
    }
    return true;
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

  void fill_results(Row& row, const std::string& which, const TraceSummary& summary,
                    int world_size) {
    if (summary.median_iteration_s > 0) {
      row[which + "_iter_s"] = seconds_text(summary.median_iteration_s);
      row[which + "_samples_per_s"] = seconds_text(
          world_size * static_cast<double>(spec_.workload.batch_size) / summary.median_iteration_s);
    }
    row[which + "_failed"] = summary.failures.empty() ? "0" : "1";
    if (!summary.failures.empty()) row[which + "_failure"] = summary.failures.front();
  }

  // The measurement failed: the run is redone on resume.
  static Row error(Row row, const std::string& message) {
    row["status"] = "error";
    row["message"] = message;
    return row;
  }
  // The measurement is good but a prediction failed: resume redoes only the predictions.
  static Row prediction_error(Row row, const std::string& message) {
    row["status"] = "prediction_error";
    row["message"] = message;
    return row;
  }

  // An interrupted earlier attempt may have left a partial trace: never mix two runs.
  void clear_leftovers(const std::string& name, const std::string& trace) {
    fs::remove_all(trace);
    fs::remove_all(layout_.prediction_dir(name, ""));
    for (const auto& what_if : spec_.predict.what_ifs)
      fs::remove_all(layout_.prediction_dir(name, what_if.name));
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
  std::string calibrate_note_;
};

std::string describe_rows(const std::vector<Row>& rows) {
  const Row& base = rows.front();
  if (base.at("status") != "ok") return "ERROR " + base.at("message");
  auto get = [&](const char* key) {
    auto it = base.find(key);
    return it == base.end() || it->second.empty() ? std::string("-") : it->second;
  };
  auto rounded = [&](const char* key, const char* format) {
    const std::string value = get(key);
    if (value == "-") return value;
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, format, std::stod(value));
    return std::string(buffer);
  };
  std::string text = "measured " + rounded("measured_iter_s", "%.4g") + " s/it";
  if (get("measured_failed") == "1") text += " (failed)";
  if (base.count("predicted_iter_s")) {
    text += ", predicted " + rounded("predicted_iter_s", "%.4g") + " s/it";
    if (get("predicted_failed") == "1") text += " (failed)";
    if (get("error_pct") != "-") text += " (" + rounded("error_pct", "%+.1f") + " %)";
  }
  size_t errors = 0;
  for (const auto& row : rows) errors += row.at("status") != "ok";
  if (base.count("message") && !base.at("message").empty() && errors == 0)
    text += " (" + base.at("message") + ")";
  if (errors) text += "; " + std::to_string(errors) + " prediction(s) failed, see summary.csv";
  return text;
}

void print_dry_run(const ExperimentSpec& spec, const Layout& layout, const std::string& bin_dir,
                   const std::vector<Point>& points, const std::vector<RunKey>& pending,
                   size_t total, std::ostream& out) {
  out << "# " << spec.name << ": " << points.size() << " points x " << spec.repetitions
      << " repetitions = " << total << " runs, " << pending.size() << " to do\n";
  for (const auto& run : pending) {
    const Point& point = points[run.point];
    const std::string name = run_name(point, run.rep);
    const std::string trace = layout.trace_dir(name);
    const std::string calibration = layout.calibration_json(name);
    out << "# " << name << '\n';
    out << shell_quote(train_command(spec, point, bin_dir, trace)) << '\n';
    out << shell_quote(summary_command(bin_dir, trace)) << '\n';
    if (!spec.predict.enabled) continue;
    out << shell_quote(calibrate_command(spec, bin_dir, trace, calibration)) << '\n';
    const std::string base_out = layout.prediction_dir(name, "");
    out << shell_quote(replay_command(spec, point, nullptr, bin_dir, trace, calibration, base_out)) << '\n';
    out << shell_quote(summary_command(bin_dir, base_out)) << '\n';
    for (const auto& what_if : spec.predict.what_ifs) {
      const std::string dir = layout.prediction_dir(name, what_if.name);
      out << shell_quote(replay_command(spec, point, &what_if, bin_dir, trace, calibration, dir)) << '\n';
      out << shell_quote(summary_command(bin_dir, dir)) << '\n';
    }
  }
}

}  // namespace

Row config_row(const ExperimentSpec& spec, const Point& point, int rep) {
  return {
      {"experiment", spec.name},
      {"point", point.id},
      {"rep", std::to_string(rep)},
      {"variant", ""},
      {"world_size", std::to_string(point.world_size)},
      {"bucket_cap_mb", format_number(point.bucket_cap_mb)},
      {"first_bucket_cap_mb", point.first_bucket_cap_mb ? format_number(*point.first_bucket_cap_mb) : ""},
      {"slowdown", join(point.slowdown, " ")},
      {"delay", join(point.delay, " ")},
      {"timeout_s", point.timeout_s ? format_number(*point.timeout_s) : ""},
      {"batch_size", std::to_string(spec.workload.batch_size)},
      {"iterations", std::to_string(spec.workload.iterations)},
  };
}

int run_experiment(const ExperimentSpec& spec, const RunOptions& options, std::ostream& out,
                   std::ostream& err) {
  const Layout layout{options.out_root + "/" + spec.name};
  const auto points = expand_grid(spec.grid);
  const auto schedule = interleaved_schedule(points.size(), spec.repetitions);

  auto rows = read_summary(layout.summary_csv());
  const auto repredict = runs_to_predict_again(rows);
  const auto kept = rows_of_finished_runs(rows);
  const auto pending = pending_runs(schedule, points, finished_runs(kept));

  if (options.dry_run) {
    print_dry_run(spec, layout, options.bin_dir, points, pending, schedule.size(), out);
    return 0;
  }

  for (const char* sub : {"traces", "predictions", "calibration", "logs"})
    fs::create_directories(layout.root + "/" + sub);
  check_same_spec(layout.provenance_json(), spec);
  write_provenance(layout.provenance_json(), spec, options.command_line, options.bin_dir);
  if (kept.size() != rows.size()) rewrite_summary(layout.summary_csv(), kept);

  if (pending.empty()) {
    err << "ddp-experiment: " << spec.name << ": all " << schedule.size()
        << " runs already in " << layout.summary_csv() << '\n';
    return 0;
  }
  if (pending.size() < schedule.size()) {
    err << "ddp-experiment: " << spec.name << ": resuming, " << schedule.size() - pending.size()
        << " of " << schedule.size() << " runs already done\n";
  }

  install_interrupt_handlers();
  Progress progress(err, pending.size(), options.progress_bar);
  RunExecutor executor(spec, layout, options.bin_dir);
  bool any_error = false;
  for (const auto& run : pending) {
    const Point& point = points[run.point];
    const std::string name = run_name(point, run.rep);
    progress.starting(name);
    // A good measurement whose predictions failed keeps its trace: only predict again.
    const auto measured = repredict.find({point.id, run.rep});
    auto run_rows = measured != repredict.end() && fs::is_directory(layout.trace_dir(name))
                        ? executor.predict_all(measured->second, point, run.rep)
                        : executor.execute(point, run.rep);
    if (run_rows.empty() || interrupt_requested()) {
      progress.done();
      err << "ddp-experiment: interrupted during " << name << "; rerun to resume\n";
      return 130;
    }
    append_rows(layout.summary_csv(), run_rows);
    for (const auto& row : run_rows) any_error = any_error || row.at("status") != "ok";
    progress.finished(name, describe_rows(run_rows));
  }
  progress.done();
  out << layout.summary_csv() << '\n';
  return any_error ? 1 : 0;
}

}  // namespace ddpsim::experiment
