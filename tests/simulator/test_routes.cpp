// The built-in platforms' routes computed from their description (routes.hpp) against the
// routes SimGrid gives on the built platform, and replays at W = 65,536 on two-level, where
// the platform is never built, against closed forms.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "ddpsim/process/fork_call.hpp"
#include "ddpsim/process/wait.hpp"
#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/replay.hpp"
#include "minimal_workload.hpp"
#include "engine/platform_builder.hpp"
#include "engine/routes.hpp"

namespace ddpsim::sim {
namespace {

using testing::allreduce_durations_s;
using testing::communication_only_workload;
using testing::star_options;

constexpr std::int64_t kBytes = 25LL * 1024 * 1024;

// Runs `check` in a forked child (one SimGrid engine per process); returns what it reported,
// empty when it found nothing wrong.
std::string in_child(const std::function<std::string()>& check) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t child = process::fork_call([&] {
    ::close(pipe_fds[0]);
    std::string report;
    try {
      report = check();
    } catch (const std::exception& error) {
      report = std::string("exception: ") + error.what();
    }
    return ::write(pipe_fds[1], report.data(), report.size()) == static_cast<ssize_t>(report.size()) ? 0 : 1;
  });
  ::close(pipe_fds[1]);
  std::string report;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0) report.append(buffer, static_cast<std::size_t>(got));
  ::close(pipe_fds[0]);
  const int status = process::wait_for(child);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) report += " (child " + process::describe_wait_status(status) + ")";
  return report;
}

// Every ordered pair's route: the same links in the same order, the same bandwidths, and
// the same latency to the bit.
std::string compare_routes(const PlatformSpec& spec, int world) {
  int argc = 1;
  char program[] = "test";
  char* argv[] = {program, nullptr};
  simgrid::s4u::Engine engine(&argc, argv);
  const auto built = simgrid_routes(build_platform(spec, world));
  const auto described = platform_routes(spec, world);
  std::ostringstream problems;
  std::vector<RouteHop> from_simgrid;
  std::vector<RouteHop> from_description;
  for (int from = 0; from < world && problems.tellp() < 2000; ++from) {
    for (int to = 0; to < world; ++to) {
      if (from == to) continue;
      const double latency_simgrid = built->route(from, to, from_simgrid);
      const double latency_described = described->route(from, to, from_description);
      if (latency_simgrid != latency_described) {
        problems << from << "->" << to << " latency " << latency_simgrid << " vs " << latency_described << "; ";
      }
      if (from_simgrid.size() != from_description.size()) {
        problems << from << "->" << to << " " << from_simgrid.size() << " vs " << from_description.size() << " links; ";
        continue;
      }
      for (std::size_t hop = 0; hop < from_simgrid.size(); ++hop) {
        const std::string name_simgrid = built->link_name(from_simgrid[hop].link);
        const std::string name_described = described->link_name(from_description[hop].link);
        if (name_simgrid != name_described || from_simgrid[hop].bandwidth != from_description[hop].bandwidth ||
            from_simgrid[hop].fatpipe != from_description[hop].fatpipe) {
          problems << from << "->" << to << " hop " << hop << ": " << name_simgrid << " vs " << name_described << "; ";
        }
      }
    }
  }
  return problems.str();
}

PlatformSpec two_level_spec(int gpus_per_node) {
  PlatformSpec spec;
  spec.kind = PlatformKind::TwoLevel;
  spec.gpus_per_node = gpus_per_node;
  // Latencies whose halves do not add up exactly in every order.
  spec.intra_latency_s = 2.3e-6;
  spec.intra_bandwidth = 12.5e9;
  spec.inter_latency_s = 5.7e-6;
  spec.inter_bandwidth = 1.3e9;
  return spec;
}

TEST(PlatformRoutes, StarMatchesSimGridToTheBit) {
  PlatformSpec spec;
  spec.kind = PlatformKind::Star;
  spec.alpha_s = 2.3e-5;
  spec.beta_bytes_per_s = 1.25e9;
  EXPECT_EQ(in_child([&] { return compare_routes(spec, 6); }), "");
}

TEST(PlatformRoutes, TwoLevelMatchesSimGridToTheBit) {
  // 20 ranks on nodes of 8: two full nodes and a partial one.
  EXPECT_EQ(in_child([] { return compare_routes(two_level_spec(8), 20); }), "");
  EXPECT_EQ(in_child([] { return compare_routes(two_level_spec(1), 5); }), "");
}

ReplayOptions two_level_options(AllreduceAlgorithm algorithm, int world, const PlatformSpec& spec) {
  ReplayOptions options = star_options(algorithm, 20e-6, 1.25e9);
  options.platform = spec;
  options.world_size = world;
  return options;
}

// W = 65,536 ranks on 8,192 nodes (SimGrid 3.32 took 174 s to build this platform; its
// routes are computed instead). Ring: each node's uplink carries one ring flow each way, so
// the phase is one flow at the route's slowest link:
// t = 2(W−1)·(intra + inter latency) + 2(W−1)/W·S / min(intra, inter bandwidth).
TEST(TwoLevelAtScale, RingFollowsItsClosedFormAtSixtyFiveThousandRanks) {
  const int world = 65536;
  for (const bool uplink_slower : {true, false}) {
    PlatformSpec spec = two_level_spec(8);
    if (!uplink_slower) spec.inter_bandwidth = 50e9;  // the ranks' own links pace it
    const ReplayOptions options = two_level_options(AllreduceAlgorithm::RingAggregated, world, spec);
    const ReplayResult result = replay_isolated(communication_only_workload(2, kBytes), options);
    ASSERT_TRUE(result.failure.empty()) << result.failure;
    const std::vector<double> durations = allreduce_durations_s(result);
    ASSERT_EQ(static_cast<int>(durations.size()), world);
    const double expected = testing::ring_allreduce_s(world, kBytes, spec.intra_latency_s + spec.inter_latency_s,
                                                      std::min(spec.intra_bandwidth, spec.inter_bandwidth));
    for (int rank : {0, 7, 8, 40001, world - 1}) {
      EXPECT_NEAR(durations[static_cast<std::size_t>(rank)], expected, 3e-9) << "rank " << rank;
    }
    EXPECT_EQ(result.messages, world);
  }
}

// The tree's flows share links: the bound, paced by the uplink direction that the most tree
// edges cross, S/2 each: t = 2⌈log2 W⌉·(intra + inter latency) + busiest·(S/2)/inter bandwidth.
TEST(TwoLevelAtScale, TreeIsPacedByTheBusiestUplinkAtSixtyFiveThousandRanks) {
  const int world = 65536;
  const int per_node = 8;
  const PlatformSpec spec = two_level_spec(per_node);
  std::vector<int> leaving(world / per_node, 0);
  std::vector<int> entering(world / per_node, 0);
  const auto neighbours = double_binary_tree_neighbours(world);
  for (int rank = 0; rank < world; ++rank) {
    for (int peer : neighbours[static_cast<std::size_t>(rank)]) {
      if (peer / per_node == rank / per_node) continue;
      ++leaving[static_cast<std::size_t>(rank / per_node)];
      ++entering[static_cast<std::size_t>(peer / per_node)];
    }
  }
  const int busiest = std::max(*std::max_element(leaving.begin(), leaving.end()),
                               *std::max_element(entering.begin(), entering.end()));
  const double half = std::llround(static_cast<double>(kBytes) / 2);
  const double expected = 2 * ceil_log2(world) * (spec.intra_latency_s + spec.inter_latency_s) +
                          busiest * half / spec.inter_bandwidth;
  const ReplayOptions options = two_level_options(AllreduceAlgorithm::Tree, world, spec);
  const ReplayResult result = replay_isolated(communication_only_workload(2, kBytes), options);
  ASSERT_TRUE(result.failure.empty()) << result.failure;
  const std::vector<double> durations = allreduce_durations_s(result);
  ASSERT_EQ(static_cast<int>(durations.size()), world);
  EXPECT_NEAR(durations.front(), expected, 3e-9) << busiest << " tree edges through one uplink";
  EXPECT_NEAR(durations.back(), expected, 3e-9);
}

}  // namespace
}  // namespace ddpsim::sim
