// ddp-sim: replay a recorded DDP trace on a simulated platform (SimGrid), or calibrate the
// network model from it.
//
//   ddp-sim replay TRACE_DIR [--out DIR] [--json FILE] [--compute median|mean|per-iteration]
//       [--iterations N] [--allreduce ring|ring-agg|analytic|tree]
//       [--bandwidth BYTES_PER_S] [--latency S] [--platform star|two-level|FILE.xml]
//       [--gpus-per-node G --intra-bandwidth B --intra-latency S --inter-bandwidth B
//        --inter-latency S] [--cfg KEY:VALUE]... [--world-size W] [--timeout S]
//       [--slowdown RANK=FACTOR]... [--delay RANK=MS[@ITER]]... [--delay-dist RANK=DIST]...
//       [--seed S] [--runs N] [--bucket-cap-mb X [--first-bucket-cap-mb Y]]
//   ddp-sim timeout-curve TRACE_DIR --timeouts T1,T2,... [--runs N] [--epsilon E] [--csv FILE]
//       [--json FILE] [the replay's model, network and what-if options]
//   ddp-sim sweep TRACE_DIR --out FILE.csv [--bucket-caps A,B,...] [--slowdowns F1,F2,...]
//       [--world-sizes W1,W2,...] [--jobs N] [the replay's options]
//   ddp-sim calibrate TRACE_DIR [--allreduce ring|ring-agg|analytic|tree] [--json FILE]
//   ddp-sim advise TRACE_DIR [--json FILE] [--bucket-caps A,B,...] [--runs N] [--seed S]
//       [--epsilon E] [--iterations-per-day N]   (advise_command.hpp)
//
// Exit status: 0 success, 2 bad usage or input (one line on stderr), 1 anything else.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/monte_carlo.hpp"
#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/rebucket.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/report.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/skew.hpp"
#include "advise_command.hpp"
#include "progress.hpp"
#include "ddpsim/trace/summary.hpp"

namespace sim = ddpsim::sim;
namespace trace = ddpsim::trace;

namespace {

// An input or usage error: printed as one line, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ReplayFlags {
  std::string trace_dir;
  std::string out_dir;
  std::string json_file;
  // Per-iteration is the most accurate on what-ifs (simulator/bench/validate_whatif.py): the
  // median mode replays every rank at its median speed and loses the cost of noisy ranks
  // meeting at each all-reduce.
  std::string compute = "per-iteration";
  std::int64_t iterations = 0;  // 0: 3, or every source iteration with per-iteration
  std::string allreduce = "ring-agg";
  std::optional<double> bandwidth;
  std::optional<double> latency;
  std::string platform = "star";
  int gpus_per_node = 1;
  std::optional<double> intra_bandwidth;
  std::optional<double> intra_latency;
  std::optional<double> inter_bandwidth;
  std::optional<double> inter_latency;
  std::vector<std::string> cfg;
  int world_size = 0;
  double timeout = 0;
  std::vector<std::string> slowdown;
  std::vector<std::string> delay;
  std::vector<std::string> delay_dist;
  std::uint64_t seed = 0;
  int runs = 1;
  bool bootstrap = false;  // runs 1..N-1 resample the measured iterations (an interval)
  std::optional<double> bucket_cap_mb;
  std::optional<double> first_bucket_cap_mb;
};

sim::AllreduceAlgorithm parse_algorithm(const std::string& name) {
  auto algorithm = sim::allreduce_algorithm_from_string(name);
  if (!algorithm) throw UsageError("--allreduce: expected ring, ring-agg, analytic or tree, got '" + name + "'");
  return *algorithm;
}

void write_text_file(const std::string& path, const std::string& text, const std::string& flag) {
  std::ofstream out(path);
  out << text << "\n";
  if (!out) throw UsageError(flag + " " + path + ": expected a writable file");
}

bool is_readable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::map<int, double> parse_slowdowns(const std::vector<std::string>& entries) {
  std::map<int, double> slowdown;
  for (const auto& entry : entries) {
    const auto equals = entry.find('=');
    try {
      if (equals == std::string::npos) throw std::invalid_argument("no '='");
      std::size_t used = 0;
      const int rank = std::stoi(entry.substr(0, equals), &used);
      if (used != equals) throw std::invalid_argument("rank");
      const std::string factor_text = entry.substr(equals + 1);
      const double factor = std::stod(factor_text, &used);
      if (used != factor_text.size()) throw std::invalid_argument("factor");
      slowdown[rank] = factor;
    } catch (const std::exception&) {
      throw UsageError("--slowdown: expected RANK=FACTOR (e.g. 1=1.5), got '" + entry + "'");
    }
  }
  return slowdown;
}

// The network parameters: given on the command line, else fitted to the trace.
std::optional<sim::Calibration> choose_network(const ReplayFlags& flags, const trace::Trace& measured,
                                               sim::ReplayOptions& options) {
  std::optional<sim::Calibration> calibration;
  if (!flags.bandwidth || !flags.latency) {
    if (measured.world_size() < 2) {
      // A one-rank trace has no all-reduce to learn the network from. Replayed as is it
      // communicates nothing and any finite parameters will do; replayed on more ranks the
      // network would be made up, so it must be given.
      if (flags.world_size > 1) {
        throw UsageError(flags.trace_dir + ": expected a trace of at least 2 ranks to calibrate the network for --world-size " +
                         std::to_string(flags.world_size) + ", got 1 (give --bandwidth and --latency)");
      }
      options.alpha_s = 0;
      options.beta_bytes_per_s = 1e9;
    } else {
      const auto shape = options.algorithm == sim::AllreduceAlgorithm::Tree ? sim::AllreduceAlgorithm::Tree
                                                                           : sim::AllreduceAlgorithm::Ring;
      try {
        calibration = sim::calibrate(measured, shape);
      } catch (const sim::CalibrationError& error) {
        throw UsageError(error.what());
      }
      options.alpha_s = calibration->alpha_s;
      options.beta_bytes_per_s = calibration->beta_bytes_per_s;
    }
  }
  if (flags.bandwidth) options.beta_bytes_per_s = *flags.bandwidth;
  if (flags.latency) options.alpha_s = *flags.latency;
  return calibration;
}

// --delay and --delay-dist in the shared skew syntax (the runtime parses the same).
trace::SkewSpec parse_stalls(const ReplayFlags& flags) {
  trace::SkewSpec skew;
  skew.seed = flags.seed;
  try {
    for (const auto& text : flags.delay) skew.delays.push_back(trace::parse_delay(text));
    for (const auto& text : flags.delay_dist) skew.distributions.push_back(trace::parse_delay_distribution(text));
  } catch (const trace::SkewError& error) {
    throw UsageError(error.what());
  }
  return skew;
}

// Everything a replay needs, from the flags: the workload (re-bucketed if asked), the
// network (calibrated unless given) and the what-ifs.
struct PreparedReplay {
  trace::Trace measured;
  sim::WorkloadModel model;
  sim::ReplayOptions options;
  std::optional<sim::Calibration> calibration;
};

PreparedReplay prepare_replay(const ReplayFlags& flags) {
  PreparedReplay prepared;
  prepared.measured = trace::read_trace(flags.trace_dir);
  const trace::Trace& measured = prepared.measured;

  auto mode = sim::compute_mode_from_string(flags.compute);
  if (!mode) throw UsageError("--compute: expected median, mean or per-iteration, got '" + flags.compute + "'");
  sim::WorkloadModel& model = prepared.model;
  model = sim::extract_workload(measured, *mode);
  if (flags.bucket_cap_mb || flags.first_bucket_cap_mb) {
    const auto& settings = model.source_meta.settings;
    const auto parameters = settings.find("parameters");
    if (parameters != settings.end() && parameters->second == "per-bucket") {
      throw UsageError(flags.trace_dir +
                       ": expected per-parameter sizes and gradient times to re-bucket "
                       "(--bucket-cap-mb), got a profiler import with one pseudo-parameter per "
                       "all-reduce bucket");
    }
    // DDP's bucket_cap_mb is in MiB.
    constexpr double kMiB = 1024.0 * 1024.0;
    sim::BucketCaps caps;
    caps.bucket_cap_bytes = flags.bucket_cap_mb ? static_cast<std::int64_t>(*flags.bucket_cap_mb * kMiB)
                                                : model.source_meta.bucket_cap_bytes;
    caps.first_bucket_cap_bytes = flags.first_bucket_cap_mb
                                      ? static_cast<std::int64_t>(*flags.first_bucket_cap_mb * kMiB)
                                      : model.source_meta.first_bucket_cap_bytes;
    model = sim::rebucket(model, caps);
  }

  sim::ReplayOptions& options = prepared.options;
  options.algorithm = parse_algorithm(flags.allreduce);
  prepared.calibration = choose_network(flags, measured, options);
  options.iterations = flags.iterations > 0 ? flags.iterations
                       : *mode == sim::ComputeMode::PerIteration
                           ? static_cast<std::int64_t>(model.source_iterations.size())
                           : 3;
  options.simgrid_config = flags.cfg;
  options.world_size = flags.world_size;
  options.timeout_s = flags.timeout;
  options.slowdown = parse_slowdowns(flags.slowdown);
  options.skew = parse_stalls(flags);
  if (flags.runs < 1) throw UsageError("--runs: expected at least 1, got " + std::to_string(flags.runs));
  if (flags.bootstrap && flags.runs < 11) {
    throw UsageError("--bootstrap: expected --runs of at least 11 (1 + 10 resampled), got " +
                     std::to_string(flags.runs));
  }

  sim::PlatformSpec& platform = options.platform;
  platform.alpha_s = options.alpha_s;
  platform.beta_bytes_per_s = options.beta_bytes_per_s;
  if (flags.platform == "star") {
    platform.kind = sim::PlatformKind::Star;
  } else if (flags.platform == "two-level") {
    platform.kind = sim::PlatformKind::TwoLevel;
    platform.gpus_per_node = flags.gpus_per_node;
    platform.intra_bandwidth = flags.intra_bandwidth.value_or(options.beta_bytes_per_s);
    platform.intra_latency_s = flags.intra_latency.value_or(options.alpha_s);
    platform.inter_bandwidth = flags.inter_bandwidth.value_or(options.beta_bytes_per_s);
    platform.inter_latency_s = flags.inter_latency.value_or(options.alpha_s);
  } else if (is_readable_file(flags.platform)) {
    platform.kind = sim::PlatformKind::File;
    platform.xml_file = flags.platform;
  } else {
    throw UsageError("--platform: expected star, two-level or a readable SimGrid XML file, got '" +
                     flags.platform + "'");
  }
  return prepared;
}

// Run i draws its random stalls from seed + i.
std::vector<sim::RunOutcome> run_monte_carlo(const PreparedReplay& prepared, const ReplayFlags& flags,
                                             sim::ReplayResult* first_result) {
  std::vector<sim::RunOutcome> outcomes;
  ddpsim::cli::Progress progress("replay runs", flags.runs);
  try {
    for (int run = 0; run < flags.runs; ++run, progress.step()) {
      sim::ReplayOptions run_options = prepared.options;
      run_options.skew.seed = flags.seed + static_cast<std::uint64_t>(run);
      // Run 0 replays the trace's iterations in order (the reported prediction); with
      // --bootstrap the others resample them (odd, so never 0: "no resampling").
      if (flags.bootstrap && run > 0) run_options.resample_seed = 2 * run_options.skew.seed + 1;
      sim::ReplayResult run_result = sim::replay_isolated(prepared.model, run_options);
      outcomes.push_back(sim::outcome_of(run_result));
      if (run == 0 && first_result != nullptr) *first_result = std::move(run_result);
    }
  } catch (const sim::SimulationError& error) {
    throw UsageError(error.what());
  }
  return outcomes;
}

int run_replay(const ReplayFlags& flags) {
  const PreparedReplay prepared = prepare_replay(flags);
  const sim::WorkloadModel& model = prepared.model;
  const sim::ReplayOptions& options = prepared.options;
  const trace::Trace& measured = prepared.measured;

  // Run 0 is the one reported in detail.
  sim::ReplayResult result;
  const std::vector<sim::RunOutcome> outcomes = run_monte_carlo(prepared, flags, &result);
  const int world = options.world_size > 0 ? options.world_size : model.world_size;
  const sim::IterationDistribution distribution =
      sim::summarize_runs(outcomes, sim::samples_per_iteration(model, world));
  const trace::Trace predicted = sim::make_predicted_trace(model, options, result);
  if (!flags.out_dir.empty()) trace::write_trace(flags.out_dir, predicted);

  sim::ReplayReport report;
  report.trace_dir = flags.trace_dir;
  report.model = &model;
  report.options = &options;
  report.result = &result;
  report.calibration = prepared.calibration;
  report.measured = trace::summarize(measured);
  report.predicted = trace::summarize(predicted);
  std::cout << sim::report_to_text(report) << sim::distribution_to_text(distribution);
  std::optional<sim::MedianInterval> interval;
  if (flags.bootstrap) {
    interval = sim::median_interval({outcomes.begin() + 1, outcomes.end()});
    std::cout << sim::interval_to_text(*interval);
  }
  for (const std::string& note : report.measured.notes) std::cout << "measured " << note << "\n";
  if (!flags.json_file.empty()) {
    nlohmann::json json = nlohmann::json::parse(sim::report_to_json(report));
    json["distribution"] = nlohmann::json::parse(sim::distribution_to_json(distribution));
    if (interval) {
      json["interval"] = {{"median_iteration_s", {interval->low_s, interval->high_s}},
                          {"level", interval->level},
                          {"replicates", interval->replicates}};
    }
    write_text_file(flags.json_file, json.dump(2), "--json");
  }
  return 0;
}

struct TimeoutCurveFlags {
  std::vector<double> timeouts_s;
  double epsilon = 0.01;
  std::string csv_file;
};

// Every timeout sees the same stall draws (run i uses seed + i whatever T is), so a longer
// timeout never fails a run that a shorter one survived and the curve is monotone.
int run_timeout_curve(ReplayFlags flags, const TimeoutCurveFlags& curve) {
  if (curve.timeouts_s.empty()) throw UsageError("--timeouts: expected at least one timeout in seconds");
  for (double timeout : curve.timeouts_s) {
    if (!(timeout > 0)) throw UsageError("--timeouts: expected positive seconds, got " + std::to_string(timeout));
  }
  if (!(curve.epsilon >= 0 && curve.epsilon <= 1)) throw UsageError("--epsilon: expected a probability in [0, 1]");
  std::vector<double> timeouts = curve.timeouts_s;
  std::sort(timeouts.begin(), timeouts.end());
  PreparedReplay prepared = prepare_replay(flags);
  const int world = prepared.options.world_size > 0 ? prepared.options.world_size : prepared.model.world_size;

  std::ostringstream csv;
  csv << "timeout_s,runs,failed_runs,failure_probability,mean_time_to_failure_s,mean_iteration_s,p99_iteration_s\n";
  nlohmann::json json = {{"trace_dir", flags.trace_dir}, {"runs", flags.runs}, {"epsilon", curve.epsilon}};
  json["points"] = nlohmann::json::array();
  std::optional<double> smallest_safe;
  std::cout << "timeout curve (" << flags.runs << " runs per timeout)\n"
            << "  timeout_s  P(fail)  mean time to failure s  mean iteration s\n";
  for (double timeout : timeouts) {
    prepared.options.timeout_s = timeout;
    const sim::IterationDistribution d = sim::summarize_runs(
        run_monte_carlo(prepared, flags, nullptr), sim::samples_per_iteration(prepared.model, world));
    csv << std::setprecision(9) << timeout << "," << d.runs << "," << d.failed_runs << "," << d.failure_probability
        << "," << d.mean_time_to_failure_s << "," << d.mean_s << "," << d.p99_s << "\n";
    std::cout << "  " << std::setw(9) << timeout << "  " << std::setw(7) << d.failure_probability << "  "
              << std::setw(22) << d.mean_time_to_failure_s << "  " << d.mean_s << "\n";
    nlohmann::json point = nlohmann::json::parse(sim::distribution_to_json(d));
    point["timeout_s"] = timeout;
    json["points"].push_back(point);
    if (!smallest_safe && d.failure_probability <= curve.epsilon) smallest_safe = timeout;
  }
  if (smallest_safe) {
    std::cout << "smallest timeout with P(fail) <= " << curve.epsilon << ": " << *smallest_safe << " s\n";
    json["smallest_safe_timeout_s"] = *smallest_safe;
  } else {
    std::cout << "no timeout tried has P(fail) <= " << curve.epsilon << "\n";
    json["smallest_safe_timeout_s"] = nullptr;
  }
  std::string csv_text = csv.str();
  csv_text.pop_back();  // write_text_file ends the file with its own newline
  if (!curve.csv_file.empty()) write_text_file(curve.csv_file, csv_text, "--csv");
  if (!flags.json_file.empty()) write_text_file(flags.json_file, json.dump(2), "--json");
  return 0;
}

struct SweepFlags {
  std::vector<double> bucket_caps_mb;
  std::vector<double> slowdowns;
  std::vector<int> world_sizes;
  std::string out_csv;
  int jobs = 1;
};

// A point's key as it is written in the CSV's first three columns.
std::string sweep_key(double cap_mb, double slowdown, int world) {
  std::ostringstream key;
  key << std::setprecision(9) << cap_mb << "," << slowdown << "," << world;
  return key.str();
}

// One point in a forked child: the child has its own SimGrid engine and appends its row with
// one O_APPEND write, so rows of concurrent children never interleave.
[[noreturn]] void sweep_point(ReplayFlags flags, double cap_mb, double slowdown, int world, const std::string& csv) {
  std::ostringstream row;
  try {
    if (cap_mb > 0) flags.bucket_cap_mb = cap_mb;  // 0: the trace's own layout
    flags.world_size = world;
    if (slowdown != 1.0) {
      std::ostringstream entry;
      entry << std::setprecision(9) << "0=" << slowdown;
      flags.slowdown = {entry.str()};
    }
    const PreparedReplay prepared = prepare_replay(flags);
    const auto wall_start = std::chrono::steady_clock::now();
    const sim::IterationDistribution d = sim::summarize_runs(run_monte_carlo(prepared, flags, nullptr),
                                                             sim::samples_per_iteration(prepared.model, world));
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    row << sweep_key(cap_mb, slowdown, world) << std::setprecision(9) << "," << prepared.model.buckets.size() << ","
        << d.p50_s << "," << d.mean_s << "," << d.p99_s << "," << d.samples_per_s << "," << d.failure_probability << ","
        << wall_s << ",\n";
  } catch (const std::exception& error) {
    std::string message = error.what();
    std::replace(message.begin(), message.end(), ',', ';');
    std::replace(message.begin(), message.end(), '\n', ' ');
    row << sweep_key(cap_mb, slowdown, world) << ",,,,,,,," << message << "\n";
  }
  const std::string text = row.str();
  const int fd = ::open(csv.c_str(), O_WRONLY | O_APPEND);
  const bool written = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ::close(fd);
  std::_Exit(written ? 0 : 1);
}

// Every (cap, slowdown, world size) point, `jobs` at a time; rows already in the CSV are kept
// and their points skipped, so an interrupted sweep resumes where it stopped.
int run_sweep(const ReplayFlags& flags, const SweepFlags& sweep) {
  if (sweep.jobs < 1) throw UsageError("--jobs: expected at least 1");
  std::vector<double> caps = sweep.bucket_caps_mb;
  if (caps.empty()) caps.push_back(0);  // 0: the trace's own layout
  std::vector<double> slowdowns = sweep.slowdowns.empty() ? std::vector<double>{1.0} : sweep.slowdowns;
  std::vector<int> worlds = sweep.world_sizes.empty() ? std::vector<int>{0} : sweep.world_sizes;
  for (double cap : caps) {
    if (cap < 0) throw UsageError("--bucket-caps: expected positive MiB");
  }
  for (double factor : slowdowns) {
    if (!(factor > 0)) throw UsageError("--slowdowns: expected positive factors");
  }
  (void)trace::read_trace(flags.trace_dir);  // a bad trace is one error, not one per point

  std::set<std::string> done;
  {
    std::ifstream existing(sweep.out_csv);
    std::string line;
    while (std::getline(existing, line)) {
      std::size_t commas = 0;
      std::size_t end = 0;
      while (end < line.size() && commas < 3) commas += line[end++] == ',' ? 1 : 0;
      if (commas == 3) done.insert(line.substr(0, end - 1));
    }
    if (done.empty()) {
      write_text_file(sweep.out_csv,
                      "bucket_cap_mb,slowdown,world_size,buckets,p50_iteration_s,mean_iteration_s,p99_iteration_s,"
                      "samples_per_s,failure_probability,wall_s,error",
                      "--out");
    }
  }
  int running = 0;
  int failed = 0;
  int skipped = 0;
  ddpsim::cli::Progress progress("sweep points", static_cast<long>(caps.size() * slowdowns.size() * worlds.size()));
  const auto reap = [&] {
    int status = 0;
    if (::wait(&status) > 0) {
      progress.step();
      --running;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
  };
  for (double cap : caps) {
    for (double factor : slowdowns) {
      for (int world : worlds) {
        if (done.count(sweep_key(cap, factor, world))) {
          ++skipped;
          continue;
        }
        while (running >= sweep.jobs) reap();
        std::cout.flush();
        const pid_t child = ::fork();
        if (child < 0) throw std::runtime_error("sweep: fork failed");
        if (child == 0) sweep_point(flags, cap, factor, world, sweep.out_csv);
        ++running;
      }
    }
  }
  while (running > 0) reap();
  std::cout << "sweep: " << caps.size() * slowdowns.size() * worlds.size() - static_cast<std::size_t>(skipped)
            << " points simulated, " << skipped << " already in " << sweep.out_csv << "\n";
  return failed == 0 ? 0 : 1;
}

int run_calibrate(const std::string& trace_dir, const std::string& algorithm_name, const std::string& json_file) {
  const trace::Trace measured = trace::read_trace(trace_dir);
  sim::Calibration calibration;
  try {
    calibration = sim::calibrate(measured, parse_algorithm(algorithm_name));
  } catch (const sim::CalibrationError& error) {
    throw UsageError(error.what());
  }
  std::cout << sim::calibration_to_text(calibration);
  if (!json_file.empty()) write_text_file(json_file, sim::calibration_to_json(calibration), "--json");
  return 0;
}

// Numeric flags: CLI11's Range lets NaN through (every comparison with NaN is false), and a
// world size of 0 or -5 must not silently mean "the trace's".
const CLI::Validator kPositive(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double value = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value <= 0) {
        return "expected a finite number > 0, got " + text;
      }
      return "";
    },
    "POSITIVE");
const CLI::Validator kNonNegative(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double value = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value < 0) {
        return "expected a finite number >= 0, got " + text;
      }
      return "";
    },
    "NON-NEGATIVE");

// The options shared by `replay` and `timeout-curve`: the trace, the model, the network and
// the what-ifs.
void add_replay_options(CLI::App* command, ReplayFlags& flags) {
  command->add_option("TRACE_DIR", flags.trace_dir, "Recorded trace directory")->required();
  command->add_option("--compute", flags.compute, "Compute durations: per-iteration (default), median or mean");
  command->add_option("--iterations", flags.iterations, "Iterations to simulate (default 3; per-iteration: all)")
      ->check(kPositive);
  command->add_option("--allreduce", flags.allreduce, "ring, ring-agg (default), analytic or tree");
  command->add_option("--bandwidth", flags.bandwidth, "Link bandwidth, bytes/s (default: calibrated)")
      ->check(kPositive);
  command->add_option("--latency", flags.latency, "Rank-to-rank latency, seconds (default: calibrated)")
      ->check(kNonNegative);
  command->add_option("--platform", flags.platform, "star (default), two-level or a SimGrid platform XML file");
  command->add_option("--gpus-per-node", flags.gpus_per_node, "two-level: ranks per node (default 1)")
      ->check(kPositive);
  command->add_option("--intra-bandwidth", flags.intra_bandwidth, "two-level: rank link bandwidth, bytes/s")
      ->check(kPositive);
  command->add_option("--intra-latency", flags.intra_latency, "two-level: latency between ranks of a node, s")
      ->check(kNonNegative);
  command->add_option("--inter-bandwidth", flags.inter_bandwidth, "two-level: node uplink bandwidth, bytes/s")
      ->check(kPositive);
  command->add_option("--inter-latency", flags.inter_latency, "two-level: extra latency between nodes, s")
      ->check(kNonNegative);
  command->add_option("--cfg", flags.cfg, "SimGrid configuration KEY:VALUE (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--world-size", flags.world_size, "What-if: simulate W ranks (ranks beyond the trace replay a measured rank drawn per iteration from --seed)")
      ->check(kPositive);
  command->add_option("--timeout", flags.timeout, "What-if: fail an all-reduce that waits longer, seconds")
      ->check(kPositive);
  command->add_option("--slowdown", flags.slowdown, "What-if: RANK=FACTOR stretches a rank's compute (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--delay", flags.delay, "What-if: RANK=MS[@ITER] stalls a rank at an iteration's start (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--delay-dist", flags.delay_dist,
                     "What-if: RANK=lognormal:MU,SIGMA|exp:MEAN|uniform:A,B random stall per iteration, ms (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--seed", flags.seed, "Seed of the random stalls (run i uses seed + i)");
  command->add_option("--runs", flags.runs, "Monte Carlo: replay N times with different stall draws (default 1)")
      ->check(kPositive);
  command->add_flag("--bootstrap", flags.bootstrap,
                    "With --runs N: runs 2..N resample the measured iterations; prints the median's "
                    "90 % interval");
  command->add_option("--bucket-cap-mb", flags.bucket_cap_mb,
                     "What-if: re-bucket with this bucket_cap_mb (MiB), from the measured gradient times")
      ->check(kPositive);
  command->add_option("--first-bucket-cap-mb", flags.first_bucket_cap_mb,
                     "What-if: the first bucket's cap, MiB (default: the trace's)")
      ->check(kPositive);

}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ddp-sim: replay a recorded DDP trace on a simulated platform (SimGrid 3.32)"};
  app.require_subcommand(1);

  ReplayFlags flags;
  CLI::App* replay = app.add_subcommand("replay", "Predict a run from a recorded trace");
  add_replay_options(replay, flags);
  replay->add_option("--out", flags.out_dir, "Write the predicted run as a trace into DIR");
  replay->add_option("--json", flags.json_file, "Write the report as JSON");

  ReplayFlags curve_flags;
  TimeoutCurveFlags curve;
  CLI::App* timeout_curve = app.add_subcommand(
      "timeout-curve", "Failure probability and time to failure per process-group timeout (Monte Carlo)");
  add_replay_options(timeout_curve, curve_flags);
  timeout_curve->add_option("--timeouts", curve.timeouts_s, "Timeouts to try, seconds: T1,T2,...")
      ->required()
      ->delimiter(',');
  timeout_curve->add_option("--epsilon", curve.epsilon, "Report the smallest timeout with P(fail) <= E (default 0.01)");
  timeout_curve->add_option("--csv", curve.csv_file, "Write one row per timeout as CSV");
  timeout_curve->add_option("--json", curve_flags.json_file, "Write the curve as JSON");

  ReplayFlags sweep_flags;
  SweepFlags sweep;
  CLI::App* sweep_command = app.add_subcommand(
      "sweep", "Simulate every (bucket cap, rank-0 slowdown, world size) point in parallel processes");
  add_replay_options(sweep_command, sweep_flags);
  sweep_command->add_option("--bucket-caps", sweep.bucket_caps_mb, "bucket_cap_mb values, MiB (0: the trace's layout)")
      ->delimiter(',');
  sweep_command->add_option("--slowdowns", sweep.slowdowns, "Rank 0's compute slowdown factors")->delimiter(',');
  sweep_command->add_option("--world-sizes", sweep.world_sizes, "World sizes")->delimiter(',');
  sweep_command->add_option("--out", sweep.out_csv, "CSV file: one row per point; existing rows are kept (resume)")
      ->required();
  sweep_command->add_option("--jobs", sweep.jobs, "Points simulated at once (default 1)");

  std::string calibrate_dir;
  std::string calibrate_algorithm = "ring";
  std::string calibrate_json;
  CLI::App* calibrate = app.add_subcommand("calibrate", "Fit the network's latency and bandwidth to a trace");
  calibrate->add_option("TRACE_DIR", calibrate_dir, "Recorded trace directory")->required();
  calibrate->add_option("--allreduce", calibrate_algorithm, "Formula to invert: ring (default) or tree");
  calibrate->add_option("--json", calibrate_json, "Write the fit as JSON");

  ddpsim::cli::AdviseFlags advise_flags;
  CLI::App* advise = ddpsim::cli::add_advise_command(app, advise_flags);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    std::cerr << "ddp-sim: " << error.what() << "\n";
    return 2;
  }

  try {
    if (replay->parsed()) return run_replay(flags);
    if (timeout_curve->parsed()) return run_timeout_curve(curve_flags, curve);
    if (sweep_command->parsed()) return run_sweep(sweep_flags, sweep);
    if (advise->parsed()) return ddpsim::cli::run_advise(advise_flags);
    return run_calibrate(calibrate_dir, calibrate_algorithm, calibrate_json);
  } catch (const trace::TraceError& error) {
    std::cerr << "ddp-sim: " << error.what() << "\n";
    return 2;
  } catch (const sim::WorkloadError& error) {
    std::cerr << "ddp-sim: " << error.what() << "\n";
    return 2;
  } catch (const UsageError& error) {
    std::cerr << "ddp-sim: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "ddp-sim: " << error.what() << "\n";
    return 1;
  }
}
