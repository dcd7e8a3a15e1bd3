// A sweep CSV's format, shared by the scheduler that writes it and the merge that joins shards
// of it (sweep.hpp): the header, and each row's key and error columns.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ddpsim::sim::sweep_csv {

// The first line, '\n' included. interval_*: the median iteration's 90 % bootstrap interval
// (monte_carlo.hpp), empty without one; run_to_run_*: widened by --repeats (run_to_run.hpp),
// empty without them. The error column is the last.
inline constexpr const char* kHeader =
    "bucket_cap_mb,slowdown,world_size,buckets,p50_iteration_s,interval_low_s,interval_high_s,"
    "run_to_run_low_s,run_to_run_high_s,mean_iteration_s,p99_iteration_s,samples_per_s,failure_probability,"
    "runs,wall_s,error\n";

// kHeader's first line, without its '\n'.
std::string header_line();

struct Row {
  std::string key;    // the first three columns: the point (sweep_key)
  std::string error;  // the last column: "" when the point succeeded
  std::string line;   // the whole row, without its '\n'
};

// The row of point `key` that failed: every value column empty, `message` in the error column
// (its commas and newlines replaced, so it stays one cell of one line), '\n' included.
std::string failed_row(const std::string& key, std::string message);

// The rows of a sweep CSV in file order; the header and lines of fewer than four columns are
// skipped, and a file that cannot be read has none (a sweep not started yet).
std::vector<Row> read_rows(const std::string& path);

// The first line of `path` when it is there and is not kHeader's (another CSV, or a sweep CSV of
// an older ddp-sim whose columns differ, which must not be resumed or merged as this one);
// nullopt when it is kHeader's, or the file is missing or empty.
std::optional<std::string> foreign_header(const std::string& path);

}  // namespace ddpsim::sim::sweep_csv
