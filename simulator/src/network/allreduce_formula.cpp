// Closed-form α-β costs of the all-reduce algorithms (allreduce.hpp).
#include "ddpsim/sim/allreduce.hpp"

#include <algorithm>

namespace ddpsim::sim {

const char* to_string(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::Ring: return "ring";
    case AllreduceAlgorithm::RingAggregated: return "ring-agg";
    case AllreduceAlgorithm::Analytic: return "analytic";
    case AllreduceAlgorithm::Tree: return "tree";
    case AllreduceAlgorithm::Auto: return "auto";
  }
  return "unknown";
}

std::optional<AllreduceAlgorithm> allreduce_algorithm_from_string(const std::string& name) {
  for (AllreduceAlgorithm algorithm :
       {AllreduceAlgorithm::Ring, AllreduceAlgorithm::RingAggregated,
        AllreduceAlgorithm::Analytic, AllreduceAlgorithm::Tree, AllreduceAlgorithm::Auto}) {
    if (name == to_string(algorithm)) return algorithm;
  }
  return std::nullopt;
}

int ceil_log2(int world_size) {
  int depth = 0;
  while ((1LL << depth) < world_size) ++depth;
  return depth;
}

FormulaShape allreduce_formula_shape(AllreduceAlgorithm algorithm, int world_size) {
  if (world_size <= 1) return {};
  if (algorithm == AllreduceAlgorithm::Tree) {
    return {2.0 * ceil_log2(world_size), double_binary_tree_max_degree(world_size) / 2.0};
  }
  const double steps = 2.0 * (world_size - 1);
  return {steps, steps / world_size};
}

double allreduce_formula_s(AllreduceAlgorithm algorithm, int world_size, double bytes,
                           double alpha_s, double beta_bytes_per_s) {
  if (algorithm == AllreduceAlgorithm::Auto) {
    return std::min(ring_allreduce_s(world_size, bytes, alpha_s, beta_bytes_per_s),
                    tree_allreduce_s(world_size, bytes, alpha_s, beta_bytes_per_s));
  }
  const FormulaShape shape = allreduce_formula_shape(algorithm, world_size);
  if (shape.latency_coefficient == 0) return 0;
  return shape.latency_coefficient * alpha_s +
         shape.bandwidth_coefficient * bytes / beta_bytes_per_s;
}

double ring_allreduce_s(int world_size, double bytes, double alpha_s, double beta_bytes_per_s) {
  return allreduce_formula_s(AllreduceAlgorithm::Ring, world_size, bytes, alpha_s,
                             beta_bytes_per_s);
}

double tree_allreduce_s(int world_size, double bytes, double alpha_s, double beta_bytes_per_s) {
  return allreduce_formula_s(AllreduceAlgorithm::Tree, world_size, bytes, alpha_s,
                             beta_bytes_per_s);
}

}  // namespace ddpsim::sim
