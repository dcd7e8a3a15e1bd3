#include "advice_check.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "names.hpp"
#include "results.hpp"

namespace ddpsim::experiment {

std::vector<int> slowed_ranks(const SkewSetting& slowdown, int world_size) {
  std::vector<int> ranks;
  for (const auto& flag : slowdown) {
    const auto eq = flag.find('=');
    size_t used = 0;
    double factor = 0;
    try {
      if (eq == std::string::npos) throw std::invalid_argument(flag);
      factor = std::stod(flag.substr(eq + 1), &used);
      if (used != flag.size() - eq - 1) throw std::invalid_argument(flag);
    } catch (const std::exception&) {
      throw std::runtime_error("--slowdown " + flag + ": expected RANK=FACTOR");
    }
    if (!(factor > 1)) continue;
    const std::string rank = flag.substr(0, eq);
    if (rank == "all") {
      for (int r = 0; r < world_size; ++r) ranks.push_back(r);
      continue;
    }
    try {
      const int r = std::stoi(rank, &used);
      if (used != rank.size() || r < 0) throw std::invalid_argument(rank);
      ranks.push_back(r);
    } catch (const std::exception&) {
      throw std::runtime_error("--slowdown " + flag + ": expected RANK=FACTOR");
    }
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

long hang_stall_ms(double timeout_s, double factor) { return static_cast<long>(std::ceil(timeout_s * factor * 1e3)); }

namespace {

// The t_ns of every event named `event` in rank-R.events.csv (its header names the columns).
std::vector<long long> event_times(const std::string& trace_dir, int rank, const std::string& event) {
  std::ifstream in(trace_dir + "/rank-" + std::to_string(rank) + ".events.csv");
  std::vector<long long> times;
  std::string line;
  if (!std::getline(in, line)) return times;
  std::vector<std::string> header;
  for (std::stringstream s(line); std::getline(s, line, ',');) header.push_back(line);
  const auto column = [&](const char* name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t event_column = column("event"), time_column = column("t_ns");
  if (event_column == header.size() || time_column == header.size()) return times;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string field; fields.size() <= std::max(event_column, time_column) && std::getline(s, field, ',');)
      fields.push_back(field);
    if (fields.size() <= std::max(event_column, time_column) || fields[event_column] != event) continue;
    try {
      times.push_back(std::stoll(fields[time_column]));
    } catch (const std::exception&) {
    }
  }
  return times;
}

}  // namespace

std::optional<double> detection_time_s(const std::string& trace_dir, int world_size, int hang_rank) {
  const auto stalls = event_times(trace_dir, hang_rank, "delay");
  std::optional<long long> failure;
  for (int rank = 0; rank < world_size; ++rank)
    for (const long long t : event_times(trace_dir, rank, "failure"))
      if (!failure || t < *failure) failure = t;
  if (stalls.empty() || !failure) return std::nullopt;
  return static_cast<double>(*failure - stalls.front()) * 1e-9;
}

const std::vector<std::string>& advice_columns() {
  static const std::vector<std::string> columns = {
      "experiment", "kind", "case", "rep", "role", "run", "world_size", "bucket_cap_mb", "slowdown", "delay",
      "timeout_s", "iterations", "status", "job_exit", "failure", "complete_iterations", "median_iteration_s",
      "job_wall_s", "advised_timeout_s", "advised_detect_s", "replayed_detect_s", "measured_detect_s", "own_cap_mb", "advised_cap_mb",
      "keep", "compared_cap_mb", "predicted_gain", "predicted_gain_lo", "predicted_gain_hi", "slowed_ranks",
      "named_ranks", "advice_json"};
  return columns;
}

std::string advice_header_line() { return join(advice_columns(), ",") + "\n"; }

std::string advice_row_line(const AdviceRow& row) {
  std::vector<std::string> fields;
  for (const auto& column : advice_columns()) {
    const auto it = row.find(column);
    fields.push_back(it == row.end() ? "" : csv_field(it->second));
  }
  return join(fields, ",") + "\n";
}

std::string rank_list(const std::vector<int>& ranks) {
  std::vector<std::string> parts;
  for (int r : ranks) parts.push_back(std::to_string(r));
  return join(parts, ";");
}

}  // namespace ddpsim::experiment
