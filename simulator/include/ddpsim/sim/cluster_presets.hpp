// Named cluster platforms: nodes of 8 GPUs on NVLink/NVSwitch, the nodes joined by their
// InfiniBand NICs, as the two-level platform (platform.hpp) with numbers from public sources.
//
// What the two-level platform makes of a node: every GPU has one link to the node's switch
// (NVLink/NVSwitch: a GPU's bandwidth per direction as NCCL achieves it), and the node one
// uplink to the top switch carrying all its NICs together (NCCL spreads its rings, one NIC
// each, over all NICs). Bandwidths are what nccl-tests measure, not line rates: line rate ×
// the efficiency NCCL's maintainers quote (docs/cluster-presets.md has the sources).
// Latencies are per ring step, from the smallest all-reduce nccl-tests published for A100
// systems (the same for every preset: no comparable V100/H100 measurement was found).
#pragma once

#include <string>
#include <vector>

#include "ddpsim/sim/platform.hpp"

namespace ddpsim::sim {

struct ClusterPreset {
  std::string name;         // e.g. "dgx-a100"
  std::string description;  // one line: GPUs, NVLink, NICs
  int gpus_per_node = 8;
  double intra_bandwidth = 0;  // bytes/s per GPU and direction
  double intra_latency_s = 0;  // between two GPUs of a node
  double inter_bandwidth = 0;  // bytes/s per node and direction, all NICs
  double inter_latency_s = 0;  // added between nodes
  std::string sources;      // where each number comes from (one line per parameter)
};

// dgx-v100, dgx-a100, dgx-h100, in that order.
const std::vector<ClusterPreset>& cluster_presets();
// nullptr when there is no preset of that name.
const ClusterPreset* find_cluster_preset(const std::string& name);
// "dgx-v100, dgx-a100 or dgx-h100", for messages.
std::string cluster_preset_names();
// The preset as a two-level platform.
PlatformSpec to_platform(const ClusterPreset& preset);

}  // namespace ddpsim::sim
