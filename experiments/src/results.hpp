// summary.csv: one row per point × repetition (plus one per what-if prediction), appended as
// runs finish so an interrupted experiment keeps everything it completed.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ddpsim::experiment {

// The columns, in file order. The analysis scripts (analysis/) read them by name.
const std::vector<std::string>& summary_columns();

// A row as column name -> text; columns not set are written empty.
using Row = std::map<std::string, std::string>;

// Reads a summary.csv written by this runner. Throws std::runtime_error (one line, naming the
// file and line) on a header that is not ours or a broken line.
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

// Runs whose measurement is good (no row "error") but some prediction failed (a row
// "prediction_error"): their measured row, prediction columns cleared, to predict again.
std::map<std::pair<std::string, int>, Row> runs_to_predict_again(const std::vector<Row>& rows);

// One CSV field, quoted when it holds ',', '"' or a line break.
std::string csv_field(const std::string& text);
// Splits one CSV record (RFC 4180 quoting; no embedded line breaks). Throws on a broken quote.
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace ddpsim::experiment
