#include "results.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "ddpsim/trace/skew.hpp"
#include "names.hpp"

namespace ddpsim::experiment {

const std::vector<std::string>& summary_columns() {
  static const std::vector<std::string> columns = {
      "experiment", "point", "rep", "variant",
      // prediction: replayed from the baseline's trace, compared with this point's own run;
      // reconstruction: the point's trace replayed at its own configuration; whatif: a replay
      // with no measurement; measurement: measured only
      "kind",
      // the measured configuration
      "world_size", "hosts", "bucket_cap_mb", "first_bucket_cap_mb", "slowdown", "delay",
      "delay_dist", "timeout_s", "batch_size", "iterations",
      // what the prediction is for (differs from the above only in what-if rows)
      "predicted_world_size", "predicted_timeout_s",
      // results: iteration times are medians over the run's iterations >= 1
      "measured_iter_s", "predicted_iter_s", "error_pct",
      // the 90 % interval of the predicted median (replay_args with --runs N --bootstrap), and
      // whether the measured median lies in it
      "predicted_lo_s", "predicted_hi_s", "inside",
      // with delay_dist: measured vs predicted iteration-time distributions (iterations >= 1)
      "ks_distance", "p50_error_pct", "p90_error_pct", "p99_error_pct",
      "measured_samples_per_s", "predicted_samples_per_s", "measured_iterations",
      "measured_failed", "measured_failure", "predicted_failed", "predicted_failure",
      "job_exit", "job_wall_s", "status", "message", "trace_dir", "replayed_trace",
      "predicted_dir",
      // the skew columns as numbers, for ddpsim-plot to plot on an axis: the largest --slowdown
      // factor and the longest --delay in ms, read by the trace library's skew parser (the one
      // reader of that syntax); empty without one. Last: added after the others (#14).
      "max_slowdown", "max_delay_ms",
      // the 90 % interval widened by the baseline's run-to-run spread (the prediction replayed
      // one repetition's baseline with --repeats naming the others), and whether the measured
      // median lies in it. Added after the others (issue 16).
      "run_to_run_lo_s", "run_to_run_hi_s", "inside_run_to_run"};
  return columns;
}

const std::vector<std::string>& config_columns() {
  static const std::vector<std::string> columns = {
      "experiment", "world_size", "hosts", "bucket_cap_mb", "first_bucket_cap_mb", "slowdown",
      "delay", "delay_dist", "timeout_s", "batch_size", "iterations", "max_slowdown",
      "max_delay_ms"};
  return columns;
}

void fill_skew_maxima(Row& config) {
  // The skew columns hold the flag values joined by spaces (config_row); none has a space.
  auto entries = [&](const char* column) {
    std::vector<std::string> out;
    std::istringstream words(config[column]);
    for (std::string word; words >> word;) out.push_back(word);
    return out;
  };
  // Text the parser refuses leaves the column empty: ddp-train refuses it too, with the same
  // parser and its one-line error, and that run's row says so (status error).
  std::optional<double> slowdown, delay;
  try {
    for (const auto& entry : entries("slowdown"))
      slowdown = std::max(slowdown.value_or(1.0), trace::parse_slowdown(entry).factor);
  } catch (const trace::SkewError&) {
    slowdown.reset();
  }
  try {
    for (const auto& entry : entries("delay"))
      delay = std::max(delay.value_or(0.0), trace::parse_delay(entry).ms);
  } catch (const trace::SkewError&) {
    delay.reset();
  }
  config["max_slowdown"] = slowdown ? format_number(*slowdown) : "";
  config["max_delay_ms"] = delay ? format_number(*delay) : "";
}

namespace {

std::string six_digits(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}
std::string six_digits(const std::optional<double>& value) { return value ? six_digits(*value) : ""; }
std::string integer(const std::optional<int>& value) { return value ? std::to_string(*value) : ""; }
std::string flag(const std::optional<bool>& value) { return value ? (*value ? "1" : "0") : ""; }

// A stored column back as a number (resume reads what an earlier run wrote); empty: none.
std::optional<double> stored_number(const Row& row, const char* column, const std::string& source) {
  const auto it = row.find(column);
  if (it == row.end() || it->second.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0')
    throw std::runtime_error(source + ": column '" + column + "': expected a number, got '" + it->second + "'");
  return value;
}
std::optional<int> stored_integer(const Row& row, const char* column, const std::string& source) {
  const auto value = stored_number(row, column, source);
  return value ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
}
// (point, rep) of a stored row; rep -1 when it is not a number.
std::pair<std::string, int> key_of(const Row& row) {
  const auto rep = row.count("rep") ? row.at("rep") : "";
  try {
    return {row.at("point"), std::stoi(rep)};
  } catch (const std::exception&) {
    return {row.at("point"), -1};
  }
}
std::string stored_text(const Row& row, const char* column) {
  const auto it = row.find(column);
  return it == row.end() ? "" : it->second;
}

}  // namespace

Row to_row(const ResultRow& r) {
  Row row;
  for (const auto& column : config_columns()) row[column] = stored_text(r.config, column.c_str());
  row["point"] = r.point;
  row["rep"] = std::to_string(r.rep);
  row["variant"] = r.variant;
  row["kind"] = r.kind;
  row["status"] = r.status;
  row["message"] = r.message;
  row["predicted_world_size"] = integer(r.predicted_world_size);
  row["predicted_timeout_s"] = r.predicted_timeout_s ? format_number(*r.predicted_timeout_s) : "";
  row["measured_iter_s"] = six_digits(r.measured.iter_s);
  row["measured_samples_per_s"] = six_digits(r.measured.samples_per_s);
  row["measured_iterations"] = integer(r.measured.iterations);
  row["measured_failed"] = flag(r.measured.failed);
  row["measured_failure"] = r.measured.failure;
  row["predicted_iter_s"] = six_digits(r.predicted.iter_s);
  row["predicted_samples_per_s"] = six_digits(r.predicted.samples_per_s);
  row["predicted_failed"] = flag(r.predicted.failed);
  row["predicted_failure"] = r.predicted.failure;
  if (r.predicted.interval) {
    row["predicted_lo_s"] = six_digits(r.predicted.interval->first);
    row["predicted_hi_s"] = six_digits(r.predicted.interval->second);
  }
  const auto& widened = r.predicted.run_to_run_interval;
  row["run_to_run_lo_s"] = widened ? six_digits(widened->first) : "";
  row["run_to_run_hi_s"] = widened ? six_digits(widened->second) : "";
  row["error_pct"] = six_digits(r.comparison.error_pct);
  row["inside"] = flag(r.comparison.inside);
  row["inside_run_to_run"] = flag(r.comparison.inside_run_to_run);
  row["ks_distance"] = six_digits(r.comparison.ks_distance);
  row["p50_error_pct"] = six_digits(r.comparison.p50_error_pct);
  row["p90_error_pct"] = six_digits(r.comparison.p90_error_pct);
  row["p99_error_pct"] = six_digits(r.comparison.p99_error_pct);
  row["job_exit"] = integer(r.job_exit);
  row["job_wall_s"] = six_digits(r.job_wall_s);
  row["trace_dir"] = r.trace_dir;
  row["replayed_trace"] = r.replayed_trace;
  row["predicted_dir"] = r.predicted_dir;
  return row;
}

ResultRow measured_from_row(const Row& row, const std::string& source) {
  ResultRow r;
  std::tie(r.point, r.rep) = key_of(row);
  r.variant = stored_text(row, "variant");
  r.status = stored_text(row, "status");
  for (const auto& column : config_columns()) r.config[column] = stored_text(row, column.c_str());
  r.measured.iter_s = stored_number(row, "measured_iter_s", source);
  r.measured.samples_per_s = stored_number(row, "measured_samples_per_s", source);
  r.measured.iterations = stored_integer(row, "measured_iterations", source);
  if (const auto failed = stored_integer(row, "measured_failed", source)) r.measured.failed = *failed != 0;
  r.measured.failure = stored_text(row, "measured_failure");
  r.job_exit = stored_integer(row, "job_exit", source);
  r.job_wall_s = stored_number(row, "job_wall_s", source);
  r.trace_dir = stored_text(row, "trace_dir");
  return r;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      out += ' ';  // one record per line keeps the file greppable
    } else {
      out += c;
      if (c == '"') out += '"';
    }
  }
  return out + "\"";
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted) throw std::runtime_error("unterminated quoted field");
  return fields;
}

std::vector<Row> read_summary(const std::string& path) {
  std::vector<Row> rows;
  std::ifstream in(path);
  if (!in) return rows;  // no file yet: nothing finished
  std::string line;
  if (!std::getline(in, line)) return rows;
  std::vector<std::string> header;
  try {
    header = split_csv_line(line);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ":1: " + e.what());
  }
  for (const char* required : {"point", "rep", "variant", "status"}) {
    bool found = false;
    for (const auto& name : header) found = found || name == required;
    if (!found)
      throw std::runtime_error(path + ":1: expected a ddp-experiment summary header with column '" +
                               std::string(required) + "', got '" + line + "'");
  }
  long number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    std::vector<std::string> fields;
    try {
      fields = split_csv_line(line);
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + e.what());
    }
    if (fields.size() != header.size()) {
      // A cut last line (the runner died while appending) is dropped, like a trace's.
      if (in.peek() == EOF) break;
      throw std::runtime_error(path + ":" + std::to_string(number) + ": expected " +
                               std::to_string(header.size()) + " fields, got " +
                               std::to_string(fields.size()));
    }
    Row row;
    for (size_t i = 0; i < header.size(); ++i) row[header[i]] = fields[i];
    // An older ddp-experiment's summary: the columns added since, so a rewrite has them all.
    if (!row.count("max_slowdown")) fill_skew_maxima(row);
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

void write_rows(std::FILE* file, const std::vector<Row>& rows) {
  const auto& columns = summary_columns();
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < columns.size(); ++i) {
      if (i) line += ',';
      auto it = row.find(columns[i]);
      if (it != row.end()) line += csv_field(it->second);
    }
    line += '\n';
    std::fputs(line.c_str(), file);
  }
}

std::string header_line() {
  std::string line;
  for (const auto& column : summary_columns()) line += (line.empty() ? "" : ",") + column;
  return line + "\n";
}

}  // namespace

// A runner killed while appending leaves a cut last line; appending after it would glue the
// next row onto it. Cut it off first (read_summary drops it too: that run is not finished).
void drop_cut_last_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty() || text.back() == '\n') return;
  const auto last_newline = text.rfind('\n');
  std::error_code ignored;
  std::filesystem::resize_file(path, last_newline == std::string::npos ? 0 : last_newline + 1, ignored);
}

bool summary_header_is_current(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return true;  // nothing there yet: written fresh
  return line + "\n" == header_line();
}

void append_rows(const std::string& path, const std::vector<Row>& rows) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error(path + ": expected a results file to append rows to, got another kind of file");
  drop_cut_last_line(path);
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (!file) throw std::runtime_error(path + ": cannot open for appending");
  if (std::ftell(file) == 0) std::fputs(header_line().c_str(), file);
  write_rows(file, rows);
  const bool failed = std::fflush(file) != 0;
  std::fclose(file);
  if (failed) throw std::runtime_error(path + ": write failed");
}

void rewrite_summary(const std::string& path, const std::vector<Row>& rows) {
  const std::string temp = path + ".tmp";
  std::FILE* file = std::fopen(temp.c_str(), "w");
  if (!file) throw std::runtime_error(temp + ": cannot open for writing");
  std::fputs(header_line().c_str(), file);
  write_rows(file, rows);
  const bool failed = std::fflush(file) != 0;
  std::fclose(file);
  if (failed || std::rename(temp.c_str(), path.c_str()) != 0)
    throw std::runtime_error(path + ": write failed");
}

std::set<std::pair<std::string, int>> finished_runs(const std::vector<Row>& rows) {
  std::set<std::pair<std::string, int>> seen, failed;
  for (const auto& row : rows) {
    seen.insert(key_of(row));
    if (row.at("status") != "ok") failed.insert(key_of(row));
  }
  std::set<std::pair<std::string, int>> finished;
  for (const auto& key : seen)
    if (!failed.count(key)) finished.insert(key);
  return finished;
}

std::vector<Row> rows_of_finished_runs(const std::vector<Row>& rows) {
  const auto finished = finished_runs(rows);
  std::vector<Row> kept;
  for (const auto& row : rows)
    if (finished.count(key_of(row))) kept.push_back(row);
  return kept;
}

std::vector<Row> rows_to_keep(const std::vector<Row>& rows,
                              const std::map<std::pair<std::string, int>, ResultRow>& repredict) {
  const auto finished = finished_runs(rows);
  std::vector<Row> kept;
  for (const auto& row : rows) {
    const auto key = key_of(row);
    if (finished.count(key)) {
      kept.push_back(row);
    } else if (auto variant = row.find("variant");
               repredict.count(key) && (variant == row.end() || variant->second.empty())) {
      kept.push_back(row);
      kept.back()["status"] = "prediction_error";
    }
  }
  return kept;
}

void replace_run_rows(const std::string& path, const std::pair<std::string, int>& key,
                      const std::vector<Row>& rows) {
  std::vector<Row> all;
  for (auto& row : read_summary(path))
    if (key_of(row) != key) all.push_back(std::move(row));
  all.insert(all.end(), rows.begin(), rows.end());
  rewrite_summary(path, all);
}

std::map<std::pair<std::string, int>, ResultRow> runs_to_predict_again(const std::vector<Row>& rows,
                                                                       const std::string& source) {
  std::set<std::pair<std::string, int>> broken, failed_prediction;
  std::map<std::pair<std::string, int>, const Row*> measured;
  for (const auto& row : rows) {
    const auto key = key_of(row);
    const std::string& status = row.at("status");
    if (status == "prediction_error") failed_prediction.insert(key);
    else if (status != "ok") broken.insert(key);
    auto variant = row.find("variant");
    if (variant == row.end() || variant->second.empty()) measured[key] = &row;
  }
  std::map<std::pair<std::string, int>, ResultRow> again;
  for (const auto& key : failed_prediction) {
    auto it = measured.find(key);
    if (broken.count(key) || it == measured.end()) continue;
    ResultRow row = measured_from_row(*it->second, source);
    row.status = "ok";
    again[key] = row;
  }
  return again;
}

}  // namespace ddpsim::experiment
