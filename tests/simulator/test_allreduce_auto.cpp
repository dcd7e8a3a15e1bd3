// --allreduce auto: per message size, the faster of ring-agg and tree by their closed forms
// (allreduce.hpp). On the star the two closed forms cross at one size, found here by hand;
// below it the tree must be played, above it the ring. Every replay runs in a forked child.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/cluster_presets.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/trace/io.hpp"
#include "minimal_workload.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"

namespace ddpsim::sim {
namespace {

using testing::allreduce_durations_s;
using testing::communication_only_workload;
using testing::star_options;

constexpr double kAlpha = 20e-6;  // per message between two ranks
constexpr double kBeta = 1.25e9;  // each rank's link
constexpr int kWorld = 64;

struct Played {
  double duration_s = 0;  // the slowest rank's all-reduce
  std::vector<AllreduceChoice> choices;
};

// One all-reduce of `bytes` on options.world_size ranks (a 2-rank workload scaled out).
Played play(AllreduceAlgorithm algorithm, const ReplayOptions& base, std::int64_t bytes) {
  ReplayOptions options = base;
  options.algorithm = algorithm;
  const ReplayResult result = replay_isolated(communication_only_workload(2, bytes), options);
  EXPECT_TRUE(result.failure.empty()) << result.failure;
  const std::vector<double> durations = allreduce_durations_s(result);
  EXPECT_EQ(static_cast<int>(durations.size()), options.world_size);
  return {*std::max_element(durations.begin(), durations.end()), result.allreduce_choices};
}

// On the star: ring 2(W−1)·α + 2(W−1)/W·S/β, tree 2⌈log2 W⌉·α + (D/2)·S/β with D = 4 tree
// neighbours for W ≥ 4. The tree pays fewer latencies and more bytes per link, so they are
// equal at S* = (2(W−1) − 2⌈log2 W⌉)·α·β / (D/2 − 2(W−1)/W): 91.2 MB for W = 64.
double star_crossover_bytes(int world) {
  const double half_degree = double_binary_tree_max_degree(world) / 2.0;
  return (2.0 * (world - 1) - 2.0 * ceil_log2(world)) * kAlpha * kBeta / (half_degree - 2.0 * (world - 1) / world);
}

TEST(AllreduceAuto, CrossoverOnTheStarFromTheClosedForms) {
  const double crossover = star_crossover_bytes(kWorld);
  ASSERT_NEAR(crossover, 91.2e6, 1e3);  // the hand computation: 114·α·β / (2 − 126/64)
  ReplayOptions options = star_options(AllreduceAlgorithm::Auto, kAlpha, kBeta);
  options.world_size = kWorld;
  struct Case {
    double factor;  // of the crossover
    AllreduceAlgorithm expected;
  };
  // Far on either side, and 1 % on either side of S*: the choice flips where the closed forms cross.
  for (const Case& c : {Case{0.25, AllreduceAlgorithm::Tree}, Case{0.99, AllreduceAlgorithm::Tree},
                        Case{1.01, AllreduceAlgorithm::RingAggregated}, Case{4.0, AllreduceAlgorithm::RingAggregated}}) {
    const auto bytes = static_cast<std::int64_t>(std::llround(c.factor * crossover));
    const Played played = play(AllreduceAlgorithm::Auto, options, bytes);
    ASSERT_EQ(played.choices.size(), 1u);
    const AllreduceChoice& choice = played.choices.front();
    EXPECT_EQ(choice.bytes, bytes);
    EXPECT_EQ(choice.algorithm, c.expected) << c.factor << " x S*";
    // The estimates are the closed forms (the payloads in whole bytes, as the replay sends them).
    const double ring = testing::ring_allreduce_s(kWorld, bytes, kAlpha, kBeta);
    const double tree = tree_allreduce_s(kWorld, static_cast<double>(bytes), kAlpha, kBeta);
    EXPECT_NEAR(choice.ring_agg_s, ring, 1e-9 * ring);
    EXPECT_NEAR(choice.tree_s, tree, 1e-6 * tree);
    // The collective takes the chosen model's time: min of the two, within the 1 % that
    // separates the tree's SimGrid flows from its closed form (test_collectives.cpp).
    const double fastest = std::min(ring, tree);
    EXPECT_NEAR(played.duration_s, fastest, 1e-2 * fastest) << c.factor << " x S*";
    EXPECT_NEAR(allreduce_formula_s(AllreduceAlgorithm::Auto, kWorld, static_cast<double>(bytes), kAlpha, kBeta),
                fastest, 1e-6 * fastest);
  }
}

// The most double-binary-tree edges that leave (or enter) one node: the tree's payload
// crosses that node's uplink k times S/2 (test_collectives.cpp, ReplayAtScale).
int busiest_uplink_edges(int world, int per_node) {
  std::vector<int> leaving(static_cast<std::size_t>(world / per_node), 0);
  std::vector<int> entering(leaving.size(), 0);
  const auto neighbours = double_binary_tree_neighbours(world);
  for (int rank = 0; rank < world; ++rank) {
    for (int peer : neighbours[static_cast<std::size_t>(rank)]) {
      if (peer / per_node == rank / per_node) continue;
      ++leaving[static_cast<std::size_t>(rank / per_node)];
      ++entering[static_cast<std::size_t>(peer / per_node)];
    }
  }
  return std::max(*std::max_element(leaving.begin(), leaving.end()),
                  *std::max_element(entering.begin(), entering.end()));
}

// On dgx-a100 with W = 32 (4 nodes): every ring step pays L = intra + inter latency and the
// payload is paced by the node uplink B (192 GB/s, below NVLink's 246.7): ring
// 2(W−1)·L + 2(W−1)/W·S/B; the tree 2⌈log2 W⌉·L + k·(S/2)/B with k edges through the busiest
// uplink (k ≥ 4, so the uplink and not a GPU's NVLink paces it). With k/2 > 2(W−1)/W the ring
// wins above S* = (2(W−1) − 2⌈log2 W⌉)·L·B / (k/2 − 2(W−1)/W), the tree below. Auto must play
// there exactly what the chosen model plays alone. At W = 4,096 a few bytes must go to the
// tree (2·4,095 ring steps against 2·12).
TEST(AllreduceAuto, CrossoverOnAPresetFromTheClosedForms) {
  const ClusterPreset* preset = find_cluster_preset("dgx-a100");
  ASSERT_NE(preset, nullptr);
  ReplayOptions options = star_options(AllreduceAlgorithm::Auto, kAlpha, kBeta);
  options.platform = to_platform(*preset);
  const int world = 32;
  options.world_size = world;
  const int busiest = busiest_uplink_edges(world, preset->gpus_per_node);
  ASSERT_GE(busiest, 4);
  ASSERT_LT(preset->inter_bandwidth, preset->intra_bandwidth);
  const double ring_share = 2.0 * (world - 1) / world;
  ASSERT_GT(busiest / 2.0, ring_share);
  const double latency = preset->intra_latency_s + preset->inter_latency_s;
  const double crossover = (2.0 * (world - 1) - 2.0 * ceil_log2(world)) * latency * preset->inter_bandwidth /
                           (busiest / 2.0 - ring_share);
  for (const double factor : {0.5, 2.0}) {
    const auto bytes = static_cast<std::int64_t>(std::llround(factor * crossover));
    const Played chosen = play(AllreduceAlgorithm::Auto, options, bytes);
    ASSERT_EQ(chosen.choices.size(), 1u);
    const AllreduceAlgorithm expected = factor < 1 ? AllreduceAlgorithm::Tree : AllreduceAlgorithm::RingAggregated;
    EXPECT_EQ(chosen.choices.front().algorithm, expected) << factor << " x S* = " << bytes << " B";
    const double ring = testing::ring_allreduce_s(world, bytes, latency, preset->inter_bandwidth);
    const double tree = 2 * ceil_log2(world) * latency +
                        busiest * static_cast<double>(std::llround(static_cast<double>(bytes) / 2)) /
                            preset->inter_bandwidth;
    EXPECT_NEAR(chosen.choices.front().ring_agg_s, ring, 1e-9 * ring);
    EXPECT_NEAR(chosen.choices.front().tree_s, tree, 1e-9 * tree);
    EXPECT_NEAR(chosen.duration_s, std::min(ring, tree), 3e-9) << factor << " x S*";
    // What the chosen model gives alone.
    EXPECT_NEAR(chosen.duration_s, play(expected, options, bytes).duration_s, 2e-9);
  }
  options.world_size = 4096;
  const Played tiny = play(AllreduceAlgorithm::Auto, options, 8);
  ASSERT_EQ(tiny.choices.size(), 1u);
  EXPECT_EQ(tiny.choices.front().algorithm, AllreduceAlgorithm::Tree);
  EXPECT_NEAR(tiny.duration_s, play(AllreduceAlgorithm::Tree, options, 8).duration_s, 2e-9);
}

// The report says what was chosen for each bucket; calibrate refuses auto (no formula to invert).
TEST(AllreduceAuto, ReportNamesTheChoicePerBucket) {
  test_support::TempDir dir;
  const testing::SyntheticRun run;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  const Outcome outcome = run_cli(dir, "replay " + dir / "measured" +
                                           " --iterations 1 --world-size 256 --cluster dgx-a100 --allreduce auto"
                                           " --json " + dir / "report.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("auto: ring-agg or tree per message size"), std::string::npos) << outcome.out;
  const auto report = nlohmann::json::parse(slurp(dir / "report.json"));
  EXPECT_EQ(report["allreduce"], "auto");
  std::vector<int> buckets;
  for (const auto& choice : report["allreduce_choices"]) {
    const double ring = choice["ring_agg_s"];
    const double tree = choice["tree_s"];
    EXPECT_EQ(choice["algorithm"], tree < ring ? "tree" : "ring-agg") << choice.dump();
    for (const auto& bucket : choice["buckets"]) buckets.push_back(bucket);
  }
  std::sort(buckets.begin(), buckets.end());
  std::vector<int> every(run.buckets.size());
  for (std::size_t b = 0; b < every.size(); ++b) every[b] = static_cast<int>(b);
  EXPECT_EQ(buckets, every);  // each bucket under exactly one choice

  const Outcome refused = run_cli(dir, "calibrate " + dir / "measured" + " --allreduce auto");
  expect_one_line_error(refused, "--allreduce: expected ring, ring-agg, analytic or tree, got 'auto'");
}

}  // namespace
}  // namespace ddpsim::sim
