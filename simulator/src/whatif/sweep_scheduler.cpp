// The sweep's scheduler (sweep.hpp): one forked process per point, `jobs` at a time, each
// appending its CSV row; the CSV is read back to skip finished points and count failures.
// A shard is the same with fewer points: the CSV holds only its rows.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "ddpsim/process/fork_call.hpp"
#include "ddpsim/sim/run_to_run.hpp"
#include "ddpsim/sim/sweep.hpp"
#include "ddpsim/trace/io.hpp"
#include "whatif/sweep_csv.hpp"

namespace ddpsim::sim {
namespace {

// Key (the first three columns) -> the error column ("" when the point succeeded); the last
// row of a key wins.
std::map<std::string, std::string> read_rows(const std::string& csv_path) {
  std::map<std::string, std::string> rows;
  for (const sweep_csv::Row& row : sweep_csv::read_rows(csv_path)) rows[row.key] = row.error;
  return rows;
}

void write_header(const std::string& csv_path) {
  std::ofstream out(csv_path);
  out << sweep_csv::kHeader;
  if (!out) throw RequestError("--out " + csv_path + ": expected a writable file");
}

// One point, run in a forked child (process::fork_call): the child has its own SimGrid engine
// and appends its row with one O_APPEND write, so rows of concurrent children never interleave.
// Returns the child's exit status.
int simulate_point(const ReplayRequest& base, const MonteCarloPlan& asked, const std::optional<RunToRunSpread>& spread,
                   const SweepPoint& point, const std::string& csv_path) {
  const std::string key = sweep_key(point);
  std::ostringstream row;
  try {
    const PreparedReplay prepared = prepare_replay(point_request(base, point));
    const MonteCarloPlan plan = plan_for(prepared, asked);
    const auto wall_start = std::chrono::steady_clock::now();
    const std::vector<RunOutcome> outcomes = run_monte_carlo(prepared, plan);
    const IterationDistribution d =
        summarize_runs(outcomes, samples_per_iteration(prepared.model, prepared.world_size()));
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    std::optional<MedianInterval> interval;
    if (plan.bootstrap) interval = median_interval({outcomes.begin() + 1, outcomes.end()});
    std::optional<MedianInterval> run_to_run;
    if (spread) {
      // As replay: around the bootstrap interval, else around run 0's median.
      run_to_run = interval ? widened(*interval, *spread)
                            : widened(percentile_of(outcomes.front().iteration_times_s, 0.5), *spread);
    }
    const auto bounds = [](const std::optional<MedianInterval>& i) {
      std::ostringstream cells;
      cells << std::setprecision(9);
      if (i) cells << i->low_s << "," << i->high_s;
      else cells << ",";
      return cells.str();
    };
    row << key << std::setprecision(9) << "," << prepared.model.buckets.size() << "," << d.p50_s << ","
        << bounds(interval) << "," << bounds(run_to_run) << "," << d.mean_s << "," << d.p99_s << ","
        << d.samples_per_s << "," << d.failure_probability << "," << plan.runs << "," << wall_s << ",\n";
  } catch (const std::exception& error) {
    row << sweep_csv::failed_row(key, error.what());
  }
  const std::string text = row.str();
  const int fd = ::open(csv_path.c_str(), O_WRONLY | O_APPEND);
  const bool written = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ::close(fd);
  return written ? 0 : 1;
}

}  // namespace

SweepSummary run_sweep(const ReplayRequest& base, const MonteCarloPlan& plan,
                       const std::optional<RunToRunSpread>& run_to_run, const SweepGrid& grid,
                       const SweepShard& shard, const std::string& csv_path, int jobs,
                       const std::function<void()>& on_point_done) {
  check_plan(plan);
  if (jobs < 1) throw RequestError("--jobs: expected at least 1, got " + std::to_string(jobs));
  check_sweep_grid(grid, trace::read_trace(base.trace_dir).world_size());
  struct stat info {};
  if (::stat(csv_path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    throw RequestError("--out " + csv_path + ": expected a CSV file, got a directory");
  }
  // Resuming appends rows: a file with other columns (another CSV, an older ddp-sim's sweep)
  // would get rows that its header does not describe.
  if (const std::optional<std::string> header = sweep_csv::foreign_header(csv_path)) {
    throw RequestError("--out " + csv_path + ": expected a sweep CSV to resume, with the header '" +
                       sweep_csv::header_line() + "', got '" + header->substr(0, 80) +
                       "' (another file, or an older ddp-sim's sweep: give a new --out)");
  }
  const std::map<std::string, std::string> done = read_rows(csv_path);
  if (done.empty()) write_header(csv_path);

  SweepSummary summary;
  const std::vector<SweepPoint> points = sweep_points(grid, shard);
  summary.points = points.size();
  int running = 0;
  const auto reap = [&] {
    if (::wait(nullptr) > 0) {
      --running;
      if (on_point_done) on_point_done();
    }
  };
  for (const SweepPoint& point : points) {
    if (done.count(sweep_key(point))) {
      ++summary.skipped;
      continue;
    }
    while (running >= jobs) reap();
    process::fork_call([&] { return simulate_point(base, plan, run_to_run, point, csv_path); });
    ++running;
    ++summary.simulated;
  }
  while (running > 0) reap();

  // The CSV is the record: a point failed when its row says why, or when its process died
  // before writing one.
  const std::map<std::string, std::string> rows = read_rows(csv_path);
  for (const SweepPoint& point : points) {
    const auto row = rows.find(sweep_key(point));
    if (row == rows.end() || !row->second.empty()) ++summary.failed;
  }
  return summary;
}

}  // namespace ddpsim::sim
