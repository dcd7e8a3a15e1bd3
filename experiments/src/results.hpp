// summary.csv: one row per point × repetition (plus one per what-if prediction), appended as
// runs finish so an interrupted experiment keeps everything it completed.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ddpsim::experiment {

// The columns, in file order. ddpsim-plot (python/ddpsim/plot) reads them by name.
const std::vector<std::string>& summary_columns();

// A row as column name -> text; columns not set are written empty. What summary.csv holds:
// read back for resume and rewritten as it was; new results are ResultRow, written by to_row.
using Row = std::map<std::string, std::string>;

// The configuration columns besides point and rep (config_row in runner.hpp fills them from the
// spec): text as the spec gives it, never computed with.
const std::vector<std::string>& config_columns();
// Sets max_slowdown and max_delay_ms from the configuration's slowdown and delay columns, with
// the trace library's skew parser (config_row does; read_summary does for the rows of an older
// summary.csv, which lack them). Empty where there is no skew or the parser refuses the text.
void fill_skew_maxima(Row& config);

// What a run measured: `ddp-trace summary --json` of its trace, and how its job ended.
struct Measured {
  std::optional<double> iter_s;         // median iteration time (iterations >= 1); none if 0
  std::optional<double> samples_per_s;  // world_size * batch_size / iter_s
  std::optional<int> iterations;        // complete iterations
  std::optional<bool> failed;
  std::string failure;                  // the first failure, when failed
};

// What a replay predicted: `ddp-sim replay --json`'s "predicted" summary and "interval".
struct Predicted {
  std::optional<double> iter_s, samples_per_s;
  std::optional<bool> failed;  // set whenever a report was read
  std::string failure;
  std::optional<std::pair<double, double>> interval;  // 90 % interval of the predicted median
  // ... widened by the baseline's run-to-run spread (replay --repeats: its other repetitions)
  std::optional<std::pair<double, double>> run_to_run_interval;
};

// How the prediction compares with the measurement (both present).
struct Comparison {
  std::optional<double> error_pct;  // 100 * trace::relative_error(predicted, measured)
  std::optional<bool> inside;       // the measured median lies in the predicted interval
  std::optional<bool> inside_run_to_run;  // ... in the interval widened by the run-to-run spread
  // With delay_dist: the iteration-time distributions (trace_summary.hpp's DistributionErrors).
  std::optional<double> ks_distance, p50_error_pct, p90_error_pct, p99_error_pct;
};

// One summary.csv row as numbers: filled by the runner from the spec and the tools' JSON, and
// turned into text once, by to_row, so nothing written is parsed back to compute with.
struct ResultRow {
  std::string point;
  int rep = -1;
  std::string variant;  // "" for the measured configuration's row
  std::string kind, status, message;
  Row config;  // config_columns()
  std::optional<int> predicted_world_size;
  std::optional<double> predicted_timeout_s;
  Measured measured;
  Predicted predicted;
  Comparison comparison;
  std::optional<int> job_exit;
  std::optional<double> job_wall_s;
  std::string trace_dir, replayed_trace, predicted_dir;
};

// The row as summary.csv text: seconds, rates and percentages with 6 significant digits,
// timeouts as format_number, flags as 0/1, what is not set empty.
Row to_row(const ResultRow& result);

// The part of a stored row that resume keeps: point, rep, variant, status, configuration,
// measurement and job (not kind, message or anything predicted: those are redone). Throws
// std::runtime_error naming `source` and the column on a measured column that is not a number.
ResultRow measured_from_row(const Row& row, const std::string& source);

// Reads a summary.csv written by this runner; the rows of an older one gain the columns added
// since (fill_skew_maxima). Throws std::runtime_error (one line, naming the file and line) on a
// header that is not ours or a broken line.
std::vector<Row> read_summary(const std::string& path);

// Appends rows (writing the header first when the file is new or empty), flushed at once.
void append_rows(const std::string& path, const std::vector<Row>& rows);
// False when the file's header is not today's columns (results of an older ddp-experiment):
// the runner then rewrites it before appending.
bool summary_header_is_current(const std::string& path);
// Replaces the file atomically (temp file + rename) with exactly these rows.
void rewrite_summary(const std::string& path, const std::vector<Row>& rows);

// (point, rep) of the runs that are finished: every one of their rows has status "ok".
// A run with a row of status "error" counts as not done, so resuming retries it.
std::set<std::pair<std::string, int>> finished_runs(const std::vector<Row>& rows);

// Keeps only the rows of finished runs (drops partial or failed runs before they are redone).
std::vector<Row> rows_of_finished_runs(const std::vector<Row>& rows);

// What the summary keeps while runs are redone: the rows of finished runs and, of each run
// in `repredict` (runs_to_predict_again), its measured row marked prediction_error, so that
// an interrupted re-prediction leaves the measurement to predict again.
std::vector<Row> rows_to_keep(const std::vector<Row>& rows,
                              const std::map<std::pair<std::string, int>, ResultRow>& repredict);

// Replaces every row of run `key` in the summary with `rows` (atomically, rewrite_summary).
void replace_run_rows(const std::string& path, const std::pair<std::string, int>& key,
                      const std::vector<Row>& rows);

// Runs whose measurement is good (no row "error") but some prediction failed (a row
// "prediction_error"): their measured row (measured_from_row, status "ok"), to predict again.
std::map<std::pair<std::string, int>, ResultRow> runs_to_predict_again(const std::vector<Row>& rows,
                                                                       const std::string& source);

// One CSV field, quoted when it holds ',', '"' or a line break.
std::string csv_field(const std::string& text);
// Splits one CSV record (RFC 4180 quoting; no embedded line breaks). Throws on a broken quote.
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace ddpsim::experiment
