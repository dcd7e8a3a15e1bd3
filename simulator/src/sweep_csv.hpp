// A sweep CSV's format, shared by the scheduler that writes it and the merge that joins shards
// of it (sweep.hpp): the header, and each row's key and error columns.
#pragma once

#include <string>
#include <vector>

namespace ddpsim::sim::sweep_csv {

// The first line, '\n' included.
inline constexpr const char* kHeader =
    "bucket_cap_mb,slowdown,world_size,buckets,p50_iteration_s,mean_iteration_s,p99_iteration_s,"
    "samples_per_s,failure_probability,wall_s,error\n";

struct Row {
  std::string key;    // the first three columns: the point (sweep_key)
  std::string error;  // the last column: "" when the point succeeded
  std::string line;   // the whole row, without its '\n'
};

// The rows of a sweep CSV in file order; the header and lines of fewer than four columns are
// skipped, and a file that cannot be read has none (a sweep not started yet).
std::vector<Row> read_rows(const std::string& path);

}  // namespace ddpsim::sim::sweep_csv
