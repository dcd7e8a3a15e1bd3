// The simulated machine: which hosts the ranks run on and how they are wired.
//
// Built in code (the style of SimGrid's S4U examples) for the two shapes DDP studies need,
// or loaded from a SimGrid platform XML file for anything else.
#pragma once

#include <string>

namespace ddpsim::sim {

enum class PlatformKind {
  // One switch; every rank has its own full-duplex link to it. A message between two ranks
  // crosses two links (sender's up, receiver's down), so each link gets half the
  // point-to-point latency: rank-to-rank latency = alpha_s, bandwidth = beta.
  Star,
  // Nodes of gpus_per_node ranks. Each rank has a full-duplex link to its node's switch
  // (half of intra_latency each, intra_bandwidth); each node has a full-duplex link to the
  // top switch (half of inter_latency each, inter_bandwidth). So two ranks of one node see
  // intra_latency and intra_bandwidth; two ranks of different nodes see
  // intra_latency + inter_latency and min(intra_bandwidth, inter_bandwidth), and every flow
  // leaving a node shares that node's link.
  TwoLevel,
  // A SimGrid platform XML file; rank r runs on the r-th host in natural name order
  // ("host-2" before "host-10").
  File,
};

struct PlatformSpec {
  PlatformKind kind = PlatformKind::Star;
  // Star.
  double alpha_s = 0;           // rank-to-rank latency, seconds
  double beta_bytes_per_s = 0;  // link bandwidth, bytes/s
  // TwoLevel.
  int gpus_per_node = 1;
  double intra_latency_s = 0;
  double intra_bandwidth = 0;
  double inter_latency_s = 0;
  double inter_bandwidth = 0;
  // File.
  std::string xml_file;

  std::string describe() const;  // one line for the predicted trace's settings
};

}  // namespace ddpsim::sim
