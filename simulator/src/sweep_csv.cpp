// Reading a sweep CSV's rows (sweep_csv.hpp).
#include "sweep_csv.hpp"

#include <fstream>

namespace ddpsim::sim::sweep_csv {

std::vector<Row> read_rows(const std::string& path) {
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
      if (commas == 10) error_begin = i + 1;
    }
    if (commas < 3 || line.rfind("bucket_cap_mb,", 0) == 0) continue;
    rows.push_back({line.substr(0, key_end), error_begin == std::string::npos ? "" : line.substr(error_begin), line});
  }
  return rows;
}

}  // namespace ddpsim::sim::sweep_csv
