// Named cluster platforms (cluster_presets.hpp): their numbers as derived from the cited
// sources, the ring all-reduce on them against its closed form, and `ddp-sim --cluster`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

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

constexpr double kNvlinkEfficiency = 370.0 / 450.0;  // nccl-tests#212

TEST(ClusterPresets, NumbersFollowTheirSources) {
  ASSERT_EQ(cluster_presets().size(), 3u);
  EXPECT_EQ(cluster_preset_names(), "dgx-v100, dgx-a100 or dgx-h100");
  struct Expected {
    const char* name;
    double nvlink_per_direction;  // vendor, bytes/s
    int nics;
    double nic;  // what NCCL gets from one NIC (nccl-tests#119), bytes/s
  };
  for (const Expected& expected : {Expected{"dgx-v100", 150e9, 4, 12e9}, Expected{"dgx-a100", 300e9, 8, 24e9},
                                   Expected{"dgx-h100", 450e9, 8, 48e9}}) {
    const ClusterPreset* preset = find_cluster_preset(expected.name);
    ASSERT_NE(preset, nullptr) << expected.name;
    EXPECT_EQ(preset->gpus_per_node, 8);
    EXPECT_NEAR(preset->intra_bandwidth, expected.nvlink_per_direction * kNvlinkEfficiency, 1e-6 * preset->intra_bandwidth)
        << expected.name;
    EXPECT_DOUBLE_EQ(preset->inter_bandwidth, expected.nics * expected.nic) << expected.name;
    // Per ring step: half a 2-GPU NVLink all-reduce of 32 B (10.14 us, nccl#583); between nodes,
    // half a 2-node one of 8 B (19.90 us, nccl-tests#150) less the node-internal part.
    EXPECT_NEAR(preset->intra_latency_s, 5.07e-6, 1e-12);
    EXPECT_NEAR(preset->intra_latency_s + preset->inter_latency_s, 9.95e-6, 1e-12);
    EXPECT_NE(preset->sources.find("nccl-tests#119"), std::string::npos) << preset->sources;
    EXPECT_NE(preset->sources.find("nccl-tests#212"), std::string::npos) << preset->sources;
    const PlatformSpec spec = to_platform(*preset);
    EXPECT_EQ(spec.kind, PlatformKind::TwoLevel);
    EXPECT_EQ(spec.gpus_per_node, 8);
    EXPECT_EQ(spec.inter_bandwidth, preset->inter_bandwidth);
    EXPECT_EQ(spec.intra_latency_s, preset->intra_latency_s);
  }
  EXPECT_EQ(find_cluster_preset("dgx-b200"), nullptr);
}

// The ring on a preset: each node's uplink carries one ring flow each way, so every step is
// paced by the slowest link of the inter-node route:
// t = 2(W−1)·(intra + inter latency) + 2(W−1)/W·S / min(NVLink, the node's NICs).
TEST(ClusterPresets, RingFollowsItsClosedForm) {
  const std::int64_t bytes = 256LL * 1024 * 1024;
  for (const ClusterPreset& preset : cluster_presets()) {
    for (int world : {16, 4096}) {
      ReplayOptions options = star_options(AllreduceAlgorithm::RingAggregated, 20e-6, 1.25e9);
      options.platform = to_platform(preset);
      options.world_size = world;
      const ReplayResult result = replay_isolated(communication_only_workload(2, bytes), options);
      ASSERT_TRUE(result.failure.empty()) << result.failure;
      const std::vector<double> durations = allreduce_durations_s(result);
      ASSERT_EQ(static_cast<int>(durations.size()), world);
      const double expected = testing::ring_allreduce_s(world, bytes, preset.intra_latency_s + preset.inter_latency_s,
                                                        std::min(preset.intra_bandwidth, preset.inter_bandwidth));
      EXPECT_NEAR(durations.front(), expected, 3e-9) << preset.name << " W=" << world;
      EXPECT_NEAR(durations.back(), expected, 3e-9) << preset.name << " W=" << world;
    }
  }
}

TEST(ClusterPresets, CliUsesThePresetAndItsOverrides) {
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(testing::SyntheticRun{}));
  const std::string replay = "replay " + dir / "measured" + " --iterations 1 --world-size 32 ";
  const Outcome preset = run_cli(dir, replay + "--cluster dgx-h100");
  ASSERT_EQ(preset.status, 0) << preset.err;
  EXPECT_NE(preset.out.find("two-level gpus_per_node=8 intra_latency_s=5.07e-06 intra_bandwidth=3.7e+11 "
                            "inter_latency_s=4.88e-06 inter_bandwidth=3.84e+11"),
            std::string::npos)
      << preset.out;
  const Outcome overridden =
      run_cli(dir, replay + "--cluster dgx-v100 --platform two-level --gpus-per-node 4 --inter-bandwidth 25e9");
  ASSERT_EQ(overridden.status, 0) << overridden.err;
  EXPECT_NE(overridden.out.find("gpus_per_node=4 "), std::string::npos) << overridden.out;
  EXPECT_NE(overridden.out.find("inter_bandwidth=2.5e+10"), std::string::npos) << overridden.out;
}

}  // namespace
}  // namespace ddpsim::sim
