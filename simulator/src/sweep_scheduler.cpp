// The sweep's scheduler (sweep.hpp): one forked process per point, `jobs` at a time, each
// appending its CSV row; the CSV is read back to skip finished points and count failures.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "ddpsim/sim/sweep.hpp"
#include "ddpsim/trace/io.hpp"

namespace ddpsim::sim {
namespace {

constexpr const char* kHeader =
    "bucket_cap_mb,slowdown,world_size,buckets,p50_iteration_s,mean_iteration_s,p99_iteration_s,"
    "samples_per_s,failure_probability,wall_s,error\n";

std::string text_of(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

void check_grid(const SweepGrid& grid, int jobs, int trace_world) {
  if (jobs < 1) throw RequestError("--jobs: expected at least 1, got " + std::to_string(jobs));
  for (double cap : grid.bucket_caps_mb) {
    if (!std::isfinite(cap) || cap < 0 || cap * 1024.0 * 1024.0 >= 9.2e18) {
      throw RequestError("--bucket-caps: expected MiB in [0, 8.7e12] (0: the trace's layout), got " + text_of(cap));
    }
  }
  bool slowed = false;
  for (double factor : grid.slowdowns) {
    try {
      point_request({}, {0, factor, 0}, 0);  // the skew syntax's rule: F >= 1, finite
    } catch (const trace::SkewError&) {
      throw RequestError("--slowdowns: expected factors F >= 1 (the rule of --slowdown), got " + text_of(factor));
    }
    slowed = slowed || factor != 1.0;
  }
  for (int world : grid.world_sizes) {
    if (world < 0) {
      throw RequestError("--world-sizes: expected 0 (the trace's) or a number of ranks >= 1, got " +
                         std::to_string(world));
    }
  }
  if (grid.slowdown_rank < 0) {
    throw RequestError("--slowdown-rank: expected a rank >= 0, got " + std::to_string(grid.slowdown_rank));
  }
  for (const SweepPoint& point : sweep_points(grid)) {
    const int world = point.world_size > 0 ? point.world_size : trace_world;
    if (slowed && grid.slowdown_rank >= world) {
      throw RequestError("--slowdown-rank: expected a rank below every world size swept (" + std::to_string(world) +
                         "), got " + std::to_string(grid.slowdown_rank));
    }
  }
}

// Key (the first three columns) → the error column ("" when the point succeeded).
std::map<std::string, std::string> read_rows(const std::string& csv_path) {
  std::map<std::string, std::string> rows;
  std::ifstream existing(csv_path);
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
    rows[line.substr(0, key_end)] = error_begin == std::string::npos ? "" : line.substr(error_begin);
  }
  return rows;
}

void write_header(const std::string& csv_path) {
  struct stat info {};
  if (::stat(csv_path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    throw RequestError("--out " + csv_path + ": expected a CSV file, got a directory");
  }
  std::ofstream out(csv_path);
  out << kHeader;
  if (!out) throw RequestError("--out " + csv_path + ": expected a writable file");
}

// One point in a forked child: the child has its own SimGrid engine and appends its row with
// one O_APPEND write, so rows of concurrent children never interleave.
[[noreturn]] void simulate_point(const ReplayRequest& base, const MonteCarloPlan& plan, const SweepPoint& point,
                                 int slowdown_rank, const std::string& csv_path) {
  const std::string key = sweep_key(point, slowdown_rank);
  std::ostringstream row;
  try {
    const PreparedReplay prepared = prepare_replay(point_request(base, point, slowdown_rank));
    const auto wall_start = std::chrono::steady_clock::now();
    const IterationDistribution d = summarize_runs(run_monte_carlo(prepared, plan),
                                                   samples_per_iteration(prepared.model, prepared.world_size()));
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    row << key << std::setprecision(9) << "," << prepared.model.buckets.size() << "," << d.p50_s << "," << d.mean_s
        << "," << d.p99_s << "," << d.samples_per_s << "," << d.failure_probability << "," << wall_s << ",\n";
  } catch (const std::exception& error) {
    std::string message = error.what();
    std::replace(message.begin(), message.end(), ',', ';');
    std::replace(message.begin(), message.end(), '\n', ' ');
    row << key << ",,,,,,,," << message << "\n";
  }
  const std::string text = row.str();
  const int fd = ::open(csv_path.c_str(), O_WRONLY | O_APPEND);
  const bool written = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ::close(fd);
  std::_Exit(written ? 0 : 1);
}

}  // namespace

SweepSummary run_sweep(const ReplayRequest& base, const MonteCarloPlan& plan, const SweepGrid& grid,
                       const std::string& csv_path, int jobs, const std::function<void()>& on_point_done) {
  check_plan(plan);
  check_grid(grid, jobs, trace::read_trace(base.trace_dir).world_size());
  const std::map<std::string, std::string> done = read_rows(csv_path);
  if (done.empty()) write_header(csv_path);

  SweepSummary summary;
  const std::vector<SweepPoint> points = sweep_points(grid);
  summary.points = points.size();
  int running = 0;
  const auto reap = [&] {
    int status = 0;
    if (::wait(&status) > 0) {
      --running;
      if (on_point_done) on_point_done();
    }
  };
  for (const SweepPoint& point : points) {
    if (done.count(sweep_key(point, grid.slowdown_rank))) {
      ++summary.skipped;
      continue;
    }
    while (running >= jobs) reap();
    std::cout.flush();
    std::cerr.flush();
    const pid_t child = ::fork();
    if (child < 0) throw std::runtime_error("sweep: fork failed");
    if (child == 0) simulate_point(base, plan, point, grid.slowdown_rank, csv_path);
    ++running;
    ++summary.simulated;
  }
  while (running > 0) reap();

  // The CSV is the record: a point failed when its row says why, or when its process died
  // before writing one.
  const std::map<std::string, std::string> rows = read_rows(csv_path);
  for (const SweepPoint& point : points) {
    const auto row = rows.find(sweep_key(point, grid.slowdown_rank));
    if (row == rows.end() || !row->second.empty()) ++summary.failed;
  }
  return summary;
}

}  // namespace ddpsim::sim
