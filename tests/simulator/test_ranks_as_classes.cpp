// Ranks kept as classes of identical ranks from the simulation to the report (Note [ranks as
// classes] in docs/model.md): a replay whose ranks merge into a few classes predicts, number
// for number, what the same ranks replayed one by one predict; and a million of them fit in
// well under a gigabyte and a few seconds.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "ddpsim/sim/monte_carlo.hpp"
#include "ddpsim/sim/predicted_trace.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/skew.hpp"
#include "ddpsim/trace/summary.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"

namespace ddpsim::sim {
namespace {

constexpr int kWorld = 64;

// Two measured ranks that compute alike, and the same costs given to every one of kWorld
// measured ranks: replayed at kWorld, the first is 2 classes plus the ranks with inputs of
// their own (every rank beyond the trace replays rank 0's or rank 1's identical costs), the
// second is kWorld classes (a measured rank replays itself): the per-rank path.
struct Workloads {
  WorkloadModel classes;
  WorkloadModel ranks;
};

Workloads workloads() {
  testing::SyntheticRun run;
  run.world_size = 2;
  run.iterations = 4;
  run.rank_skew = 0;
  Workloads out;
  out.classes = extract_workload(testing::make_synthetic_trace(run), ComputeMode::PerIteration);
  out.classes.costs[1] = out.classes.costs[0];
  out.ranks = out.classes;
  out.ranks.world_size = kWorld;
  out.ranks.source_meta.world_size = kWorld;
  out.ranks.costs.assign(kWorld, out.classes.costs[0]);
  return out;
}

ReplayOptions options_for(AllreduceAlgorithm algorithm, PlatformKind platform) {
  ReplayOptions options;
  options.algorithm = algorithm;
  options.alpha_s = 40e-6;
  options.beta_bytes_per_s = 2e9;
  options.platform.kind = platform;
  options.platform.alpha_s = options.alpha_s;
  options.platform.beta_bytes_per_s = options.beta_bytes_per_s;
  options.platform.gpus_per_node = 8;
  options.platform.intra_latency_s = 5e-6;
  options.platform.intra_bandwidth = 20e9;
  options.platform.inter_latency_s = 40e-6;
  options.platform.inter_bandwidth = 2e9;
  options.iterations = 3;
  options.world_size = kWorld;
  // Ranks with inputs of their own: classes of one rank beside the large ones.
  options.slowdown = {{5, 1.5}};

  return options;
}

void expect_same_prediction(const Workloads& models, const ReplayOptions& options, const std::string& what) {
  const ReplayResult by_class = replay_isolated_by_class(models.classes, options);
  const ReplayResult one_by_one = replay_isolated(models.ranks, options);
  ASSERT_TRUE(by_class.failure.empty()) << what << ": " << by_class.failure;
  ASSERT_EQ(by_class.world_size(), kWorld) << what;
  ASSERT_EQ(one_by_one.world_size(), kWorld) << what;
  // The class path is the one taken: a class per sequence of the 2 measured ranks over 3
  // iterations, and the slowed and the stalled rank's.
  EXPECT_LE(by_class.events.size(), 8u + 2u) << what;
  EXPECT_EQ(one_by_one.events.size(), static_cast<std::size_t>(kWorld)) << what;

  const std::vector<double> times = outcome_of(by_class).iteration_times_s;
  EXPECT_EQ(times, outcome_of(one_by_one).iteration_times_s) << what;
  EXPECT_EQ(times.size(), 3u) << what;
  EXPECT_EQ(by_class.messages, one_by_one.messages) << what;
  // Every figure of the report's summary, to the bit, and the classes written out per rank
  // are the ranks replayed one by one.
  EXPECT_EQ(trace::summary_to_json(summarize_prediction(models.classes, options, by_class)),
            trace::summary_to_json(trace::summarize(make_predicted_trace(models.ranks, options, one_by_one))))
      << what;
  const ReplayResult written_out = per_rank(by_class);
  ASSERT_EQ(written_out.events.size(), static_cast<std::size_t>(kWorld)) << what;
  for (int rank : {0, 1, 5, 9, 63}) {
    const auto& mine = written_out.events[static_cast<std::size_t>(rank)];
    const auto& theirs = one_by_one.events[static_cast<std::size_t>(rank)];
    ASSERT_EQ(mine.size(), theirs.size()) << what << " rank " << rank;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      EXPECT_EQ(mine[i].rank, rank) << what;
      EXPECT_EQ(mine[i].t_ns, theirs[i].t_ns) << what << " rank " << rank << " event " << i;
      EXPECT_EQ(mine[i].type, theirs[i].type) << what << " rank " << rank << " event " << i;
    }
  }
}

TEST(RanksAsClasses, PredictWhatTheirRanksReplayedOneByOnePredict) {
  const Workloads models = workloads();
  for (const PlatformKind platform : {PlatformKind::Star, PlatformKind::TwoLevel}) {
    for (const AllreduceAlgorithm algorithm :
         {AllreduceAlgorithm::RingAggregated, AllreduceAlgorithm::Tree, AllreduceAlgorithm::Auto}) {
      const ReplayOptions options = options_for(algorithm, platform);
      expect_same_prediction(models, options, std::string(to_string(algorithm)) + " on " + options.platform.describe());
    }
  }
}

TEST(RanksAsClasses, PredictTheSameWithTheBottleneckBoundTwoLanesOrContention) {
  const Workloads models = workloads();
  ReplayOptions bound = options_for(AllreduceAlgorithm::Tree, PlatformKind::TwoLevel);
  bound.max_simulated_flows = 0;
  expect_same_prediction(models, bound, "tree, bottleneck bound");
  ReplayOptions lanes = options_for(AllreduceAlgorithm::RingAggregated, PlatformKind::Star);
  lanes.allreduces_in_flight = 2;
  lanes.in_flight_gain = 1.4;
  expect_same_prediction(models, lanes, "two lanes");
  ReplayOptions contended = options_for(AllreduceAlgorithm::RingAggregated, PlatformKind::Star);
  contended.overlap_bandwidth_fraction = 0.6;
  contended.compute_fraction_during_allreduce = 0.8;
  expect_same_prediction(models, contended, "contention");
}

// ddp-sim with `arguments` through the shell, its output discarded; the exit status, and the
// largest resident set of the shell, ddp-sim and ddp-sim's replay child in KiB (wait4's).
std::pair<int, long> run_measured(const test_support::TempDir& dir, const std::string& arguments) {
  const std::string command = std::string(DDPSIM_SIM_BINARY) + " " + arguments + " >" + (dir / "stdout.txt") +
                              " 2>" + (dir / "stderr.txt");
  const pid_t child = ::fork();
  if (child == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  if (child < 0 || ::wait4(child, &status, 0, &usage) != child) return {-1, 0};
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

// 2^20 ranks of the example trace, one iteration, on the star and on a DGX A100 cluster: a
// result in seconds and well under 1 GiB (a rank costs bytes, its class the events), with
// every rank in the report and each bucket's transfer at the ring's closed form for W ranks.
TEST(ReplayAtScale, AMillionRanksReplayInSecondsAndUnderAGigabyte) {
  const int world = 1 << 20;
  for (const std::string platform : {"", " --cluster dgx-a100"}) {
    test_support::TempDir dir;
    const std::string json_file = dir / "report.json";
    const auto start = std::chrono::steady_clock::now();
    const auto [status, peak_kib] = run_measured(dir, "replay " + std::string(DDPSIM_TEST_DATA_DIR) +
                                                          "/mlp-cap25 --iterations 1 --world-size " +
                                                          std::to_string(world) + platform + " --json " + json_file);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(status, 0) << platform << ": " << slurp(dir / "stderr.txt");
    EXPECT_LT(wall_s, 20) << platform;
    EXPECT_LT(peak_kib, 1024L * 1024) << platform << ": peak resident KiB";

    const nlohmann::json report = nlohmann::json::parse(slurp(json_file));
    EXPECT_EQ(report["world_size"], world) << platform;
    ASSERT_EQ(report["predicted"]["iterations"].size(), 1u) << platform;
    EXPECT_EQ(report["predicted"]["iterations"][0]["rank_time_s"].size(), static_cast<std::size_t>(world)) << platform;
    // The ring's closed form: 2(W-1) steps, each paying the slowest route's latency (the star's
    // alpha; across two nodes both latencies), and the payload paced by the slowest link (the
    // star's; the uplink). The cluster's values come from the report's description, 6 digits.
    const std::string described = report["platform"];
    const auto value_of = [&described](const std::string& key) {
      return std::stod(described.substr(described.find(key + "=") + key.size() + 1));
    };
    const double latency = platform.empty() ? report["network"]["alpha_s"].get<double>()
                                            : value_of("intra_latency_s") + value_of("inter_latency_s");
    const double bandwidth = platform.empty() ? report["network"]["beta_bytes_per_s"].get<double>()
                                              : value_of("inter_bandwidth");
    const double tolerance = platform.empty() ? 1e-9 : 1e-4;
    ASSERT_EQ(report["predicted"]["buckets"].size(), 2u) << platform;
    for (const auto& bucket : report["predicted"]["buckets"]) {
      const double payload = std::llround(2.0 * (world - 1) / world * bucket["bytes"].get<double>());
      const double ring = 2.0 * (world - 1) * latency + payload / bandwidth;
      EXPECT_NEAR(bucket["median_transfer_s"].get<double>(), ring, tolerance * ring)
          << platform << " bucket " << bucket["bucket"];
    }
    EXPECT_GT(report["predicted"]["median_iteration_s"].get<double>(), 0) << platform;
  }
}

}  // namespace
}  // namespace ddpsim::sim
