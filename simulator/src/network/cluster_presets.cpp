// The named cluster platforms and their sources (cluster_presets.hpp, docs/cluster-presets.md).
#include "ddpsim/sim/cluster_presets.hpp"

namespace ddpsim::sim {

namespace {

constexpr double kGB = 1e9;

// NVLink as NCCL achieves it: "450GB/s is the line rate. With the protocol overhead (~20%)
// NCCL can get an effective NVLink bandwidth of 370GB/s" (S. Jeaugey, NCCL maintainer, on
// H100: github.com/NVIDIA/nccl-tests/issues/212). The same ratio is applied to NVLink 2 and 3.
constexpr double kNvlinkEfficiency = 370.0 / 450.0;

// InfiniBand as NCCL achieves it: "We usually consider 24GB/s is the peak performance per
// 200G NIC (12 GB/s for 100G NICs)" (S. Jeaugey, github.com/NVIDIA/nccl-tests/issues/119),
// i.e. 96 % of the line rate; a 400G NDR NIC is taken at the same 96 % (48 GB/s).
constexpr double kEdrNic = 12 * kGB;   // 100 Gb/s
constexpr double kHdrNic = 24 * kGB;   // 200 Gb/s
constexpr double kNdrNic = 48 * kGB;   // 400 Gb/s (extrapolated)

// Latency per ring step, from the smallest all-reduces nccl-tests published on A100 systems
// (the aggregated ring pays 2(W−1) steps, so a W = 2 all-reduce of a few bytes takes 2 steps):
//  - two A100-SXM4-40GB of one node over NVLink: 32 B in 10.14 us
//    (github.com/NVIDIA/nccl/issues/583) → 5.07 us per step;
//  - two A100-SXM4-80GB on two nodes over HDR InfiniBand: 8 B in 19.90 us
//    (github.com/NVIDIA/nccl-tests/issues/150) → 9.95 us per step, of which 5.07 us is the
//    node-internal part: 4.88 us between nodes.
// They include NCCL's launch overhead, which a real ring pays once, not per step.
constexpr double kIntraLatency = 10.14e-6 / 2;
constexpr double kInterLatency = 19.90e-6 / 2 - kIntraLatency;

std::vector<ClusterPreset> make_presets() {
  std::vector<ClusterPreset> presets;
  {
    ClusterPreset p;
    p.name = "dgx-v100";
    p.description = "DGX-1: 8x V100 SXM2, NVLink 2 hybrid cube-mesh, 4x 100 Gb/s EDR InfiniBand per node";
    // 6 NVLink 2 links x 25 GB/s per direction = 150 GB/s per GPU and direction
    // (NVIDIA DGX-1 With Tesla V100 System Architecture, white paper WP-08437-002).
    p.intra_bandwidth = 150 * kGB * kNvlinkEfficiency;
    // "four 100 Gb InfiniBand network interface cards" (same white paper).
    p.inter_bandwidth = 4 * kEdrNic;
    p.sources =
        "intra 150 GB/s x 370/450: 6 NVLink2 x 25 GB/s (DGX-1 V100 white paper WP-08437-002), "
        "NCCL efficiency (nccl-tests#212); inter 4 x 12 GB/s: 4 EDR NICs (WP-08437-002), 12 GB/s per "
        "100G NIC (nccl-tests#119); latencies from A100 nccl-tests (nccl#583, nccl-tests#150)";
    presets.push_back(p);
  }
  {
    ClusterPreset p;
    p.name = "dgx-a100";
    p.description = "DGX A100: 8x A100 SXM4, NVLink 3 via 6 NVSwitches, 8x 200 Gb/s HDR InfiniBand per node";
    // 600 GB/s GPU-to-GPU bidirectional = 300 GB/s per direction (DGX A100 User Guide
    // DU-09821-001, NVIDIA A100 datasheet: 12 NVLink 3 links x 25 GB/s).
    p.intra_bandwidth = 300 * kGB * kNvlinkEfficiency;
    // 8 single-port ConnectX-6 200 Gb/s HDR for the compute fabric (DGX A100 User Guide).
    p.inter_bandwidth = 8 * kHdrNic;
    p.sources =
        "intra 300 GB/s x 370/450: NVLink3 600 GB/s bidirectional (DGX A100 User Guide DU-09821-001), "
        "NCCL efficiency (nccl-tests#212); inter 8 x 24 GB/s: 8 ConnectX-6 HDR (DU-09821-001), 24 GB/s "
        "per 200G NIC (nccl-tests#119); latencies from A100 nccl-tests (nccl#583, nccl-tests#150)";
    presets.push_back(p);
  }
  {
    ClusterPreset p;
    p.name = "dgx-h100";
    p.description = "DGX H100: 8x H100 SXM5, NVLink 4 via 4 NVSwitches, 8x 400 Gb/s NDR InfiniBand per node";
    // NVLink 4: 900 GB/s bidirectional, 450 GB/s per direction; NCCL reaches 370 GB/s
    // (DGX H100 User Guide; S. Jeaugey in nccl-tests#212).
    p.intra_bandwidth = 370 * kGB;
    // 8 ConnectX-7 at 400 Gb/s NDR for the compute fabric (DGX H100 User Guide).
    p.inter_bandwidth = 8 * kNdrNic;
    p.sources =
        "intra 370 GB/s: NVLink4 450 GB/s per direction, NCCL effective 370 GB/s (nccl-tests#212); "
        "inter 8 x 48 GB/s: 8 ConnectX-7 NDR (DGX H100 User Guide), 96 % of 400 Gb/s as 24 GB/s of "
        "200 Gb/s (nccl-tests#119); latencies from A100 nccl-tests (nccl#583, nccl-tests#150)";
    presets.push_back(p);
  }
  for (ClusterPreset& p : presets) {
    p.gpus_per_node = 8;
    p.intra_latency_s = kIntraLatency;
    p.inter_latency_s = kInterLatency;
  }
  return presets;
}

}  // namespace

const std::vector<ClusterPreset>& cluster_presets() {
  static const std::vector<ClusterPreset> presets = make_presets();
  return presets;
}

const ClusterPreset* find_cluster_preset(const std::string& name) {
  for (const ClusterPreset& preset : cluster_presets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

std::string cluster_preset_names() {
  const auto& presets = cluster_presets();
  std::string names;
  for (std::size_t i = 0; i < presets.size(); ++i) {
    if (i > 0) names += i + 1 == presets.size() ? " or " : ", ";
    names += presets[i].name;
  }
  return names;
}

PlatformSpec to_platform(const ClusterPreset& preset) {
  PlatformSpec spec;
  spec.kind = PlatformKind::TwoLevel;
  spec.gpus_per_node = preset.gpus_per_node;
  spec.intra_bandwidth = preset.intra_bandwidth;
  spec.intra_latency_s = preset.intra_latency_s;
  spec.inter_bandwidth = preset.inter_bandwidth;
  spec.inter_latency_s = preset.inter_latency_s;
  return spec;
}

}  // namespace ddpsim::sim
