// All-reduce algorithms the simulator can play, and their closed-form α-β costs.
//
// α is the latency of one point-to-point message between two ranks, β the bandwidth of one
// rank's link (bytes/s). The closed forms are what `calibrate` inverts and what the tests
// hold the SimGrid runs against.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::sim {

enum class AllreduceAlgorithm {
  // 2(W−1) explicit steps of S/W bytes to the right neighbour (reduce-scatter + all-gather).
  // Exact but costs 2W(W−1) simulated messages per bucket.
  Ring,
  // All ranks join, then each sends one message of 2(W−1)/W·S bytes to its right neighbour
  // and waits out the remaining 2(W−1)−1 step latencies. Same time as Ring on uncontended
  // platforms, W messages per bucket instead of 2W(W−1).
  RingAggregated,
  // All ranks join, then sleep for the ring's α-β formula: no network simulated at all.
  Analytic,
  // Double binary tree (NCCL's algorithm at scale); see tree_allreduce_s for the model.
  Tree,
  // Per collective, whichever of RingAggregated and Tree the model predicts faster for its
  // message size on this platform and world size, as NCCL's tuner does with its own
  // estimates (src/graph/tuning.cc: a latency + size / bandwidth per algorithm, the
  // smallest wins). The estimates are each model's closed form on the platform's routes
  // (network_phase.hpp: exact for the ring on the built-in platforms, the max-min bound for
  // the tree), so the collective takes min(ring-agg, tree); the choice is made once per
  // message size and reported (AllreduceChoice).
  Auto,
};

// What Auto chose for one message size: the two estimates, and the faster (a tie goes to
// the ring, NCCL's algorithm for large messages).
struct AllreduceChoice {
  std::int64_t bytes = 0;
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::RingAggregated;
  double ring_agg_s = 0;
  double tree_s = 0;
};

const char* to_string(AllreduceAlgorithm algorithm);
std::optional<AllreduceAlgorithm> allreduce_algorithm_from_string(const std::string& name);

// Ring: 2(W−1)·α + 2(W−1)/W · S/β. Zero for W = 1.
double ring_allreduce_s(int world_size, double bytes, double alpha_s, double beta_bytes_per_s);

// Double binary tree, pipelined (NCCL). Each of the two trees carries half of the buffer;
// over a tree edge S/2 goes up (reduce) and S/2 comes down (broadcast). A rank that is an
// inner node of one tree (parent + 2 children) and a leaf of the other (parent) thus sends
// and receives 4·S/2 = 2S bytes over its link, like the ring's 2(W−1)/W·S. With deep
// pipelining the payload streams at the busiest link's speed and the latency is that of the
// two tree depths:
//   t = 2·⌈log2 W⌉·α + (D/2)·S/β
// where D = double_binary_tree_max_degree(W) is the most tree neighbours any rank has
// (4 for W ≥ 4, 3 for W = 3, 2 for W = 2). The pipeline fill of a few chunks is ignored. Zero for W = 1.
double tree_allreduce_s(int world_size, double bytes, double alpha_s, double beta_bytes_per_s);

// The first tree of NCCL's double binary tree shape, as the parent of each rank: ranks
// 1…W−1 form an in-order binary tree (a rank whose lowest set bit is 2^k has children
// r ± 2^(k−1), when they exist) whose top is the largest power of two below W, and rank 0
// is the root above it. parent[0] = −1.
std::vector<int> binary_tree_parents(int world_size);
// Each rank's neighbours (parent and children) in both trees. As in NCCL, the second tree
// is the first mirrored (rank r plays W−1−r) for even W and shifted by one (r plays r+1)
// for odd W, so that each rank is a leaf in one tree and (mostly) inner in the other and
// no rank has more than 4 neighbours. A peer linked in both trees appears twice.
std::vector<std::vector<int>> double_binary_tree_neighbours(int world_size);
int double_binary_tree_max_degree(int world_size);

// The formula of an algorithm: Ring, RingAggregated and Analytic use the ring formula,
// Auto the smaller of the ring's and the tree's.
double allreduce_formula_s(AllreduceAlgorithm algorithm, int world_size, double bytes,
                           double alpha_s, double beta_bytes_per_s);

// The formula's shape t(S) = latency_coefficient·α + bandwidth_coefficient·S/β, so that a
// fitted line t = a + b·S gives α = a / latency_coefficient, β = bandwidth_coefficient / b.
// Auto, not a line, has the ring's shape: a trace is calibrated with the ring's formula.
struct FormulaShape {
  double latency_coefficient = 0;
  double bandwidth_coefficient = 0;
};
FormulaShape allreduce_formula_shape(AllreduceAlgorithm algorithm, int world_size);

// ⌈log2 W⌉ for W ≥ 1 (0 for W = 1).
int ceil_log2(int world_size);

}  // namespace ddpsim::sim
