// Joining the CSVs of a sharded sweep into one, in grid order (sweep.hpp).
#include <fstream>
#include <map>

#include "ddpsim/sim/sweep.hpp"
#include "ddpsim/trace/io.hpp"
#include "whatif/sweep_csv.hpp"

namespace ddpsim::sim {
namespace {

// An input must be a sweep CSV: a typo'd path or another CSV is refused, not merged as empty.
void check_header(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw RequestError("--merge " + path + ": expected a readable sweep CSV, got no such file");
  std::string first;
  std::getline(in, first);
  if (first != sweep_csv::header_line()) {
    throw RequestError("--merge " + path + ": expected the sweep CSV header '" + sweep_csv::header_line() +
                       "', got '" + first.substr(0, 80) + "'");
  }
}

}  // namespace

SweepMerge merge_sweep_csvs(const SweepGrid& grid, const std::vector<std::string>& inputs,
                            const std::string& out_csv) {
  const std::vector<SweepPoint> points = sweep_points(grid);
  std::map<std::string, std::size_t> position;  // key -> place in grid order
  for (std::size_t i = 0; i < points.size(); ++i) position[sweep_key(points[i])] = i;

  std::vector<const sweep_csv::Row*> chosen(points.size(), nullptr);
  std::vector<std::string> owner(points.size());
  std::vector<std::vector<sweep_csv::Row>> files;
  files.reserve(inputs.size());  // never reallocated: `chosen` points into it
  for (const std::string& input : inputs) {
    check_header(input);
    files.push_back(sweep_csv::read_rows(input));
    for (const sweep_csv::Row& row : files.back()) {
      const auto place = position.find(row.key);
      if (place == position.end()) {
        throw RequestError("--merge " + input +
                           ": expected rows of the grid given (the sweep's --bucket-caps, --slowdowns, --world-sizes, "
                           "--slowdown-rank), got point " + row.key);
      }
      // Shards are disjoint: a point in two files means two grids' or two runs' files were mixed.
      // Within one file the last row wins, as when a sweep resumes.
      if (chosen[place->second] != nullptr && owner[place->second] != input) {
        throw RequestError("--merge: expected each point in one file, got " + row.key + " in " + owner[place->second] +
                           " and " + input);
      }
      chosen[place->second] = &row;
      owner[place->second] = input;
    }
  }

  SweepMerge merge;
  merge.points = points.size();
  std::string text = sweep_csv::kHeader;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (chosen[i] == nullptr) {
      if (merge.first_missing.empty()) merge.first_missing = sweep_key(points[i]);
      continue;
    }
    text += chosen[i]->line + "\n";
    ++merge.rows;
    if (!chosen[i]->error.empty()) ++merge.failed;
  }
  trace::write_file_atomically(out_csv, text, "the merged sweep CSV");
  return merge;
}

}  // namespace ddpsim::sim
