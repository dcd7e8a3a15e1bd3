// Reading a sweep CSV's rows (sweep_csv.hpp).
#include "whatif/sweep_csv.hpp"

#include <algorithm>
#include <fstream>

namespace ddpsim::sim::sweep_csv {
namespace {

// Commas before the error column, the last: counted from the header, so a new column cannot
// leave them behind.
std::size_t commas_before_error() {
  const std::string header = kHeader;
  return static_cast<std::size_t>(std::count(header.begin(), header.end(), ','));
}

}  // namespace

std::string header_line() {
  const std::string header = kHeader;
  return header.substr(0, header.size() - 1);
}

std::string failed_row(const std::string& key, std::string message) {
  std::replace(message.begin(), message.end(), ',', ';');
  std::replace(message.begin(), message.end(), '\n', ' ');
  return key + std::string(commas_before_error() - 2, ',') + message + "\n";
}

std::vector<Row> read_rows(const std::string& path) {
  const std::size_t error_commas = commas_before_error();
  std::vector<Row> rows;
  std::ifstream existing(path);
  std::string line;
  while (std::getline(existing, line)) {
    std::size_t commas = 0;
    std::size_t key_end = 0;
    std::size_t error_begin = std::string::npos;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] != ',') continue;
      ++commas;
      if (commas == 3) key_end = i;
      if (commas == error_commas) error_begin = i + 1;
    }
    if (commas < 3 || line.rfind("bucket_cap_mb,", 0) == 0) continue;
    rows.push_back({line.substr(0, key_end), error_begin == std::string::npos ? "" : line.substr(error_begin), line});
  }
  return rows;
}

std::optional<std::string> foreign_header(const std::string& path) {
  std::ifstream in(path);
  std::string first;
  if (!in || !std::getline(in, first) || first.empty() || first == header_line()) return std::nullopt;
  return first;
}

}  // namespace ddpsim::sim::sweep_csv
