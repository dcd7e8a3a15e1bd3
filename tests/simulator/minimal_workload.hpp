// A workload with no computation: one bucket, ready at once. Replaying it times one
// all-reduce on the platform alone.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"

namespace ddpsim::sim::testing {

inline WorkloadModel communication_only_workload(int world_size, std::int64_t bytes) {
  WorkloadModel model;
  model.world_size = world_size;
  model.buckets = {{0}};
  model.bucket_bytes = {bytes};
  RankIterationCosts costs;
  costs.bucket_ready_s = {0.0};
  model.costs.assign(static_cast<std::size_t>(world_size), {costs});
  model.source_iterations = {0};
  model.source_meta.world_size = world_size;
  model.source_meta.parameters = {{0, "weight", bytes / 4, "float32"}};
  return model;
}

// Every rank's allreduce_end − allreduce_begin of bucket 0, iteration 0.
inline std::vector<double> allreduce_durations_s(const ReplayResult& result) {
  std::vector<double> durations;
  for (const auto& events : result.events) {
    std::int64_t begin = -1;
    for (const auto& event : events) {
      if (event.iteration != 0 || event.bucket != 0) continue;
      if (event.type == trace::EventType::AllreduceBegin) begin = event.t_ns;
      if (event.type == trace::EventType::AllreduceEnd && begin >= 0) {
        durations.push_back(static_cast<double>(event.t_ns - begin) * 1e-9);
      }
    }
  }
  return durations;
}

inline ReplayOptions star_options(AllreduceAlgorithm algorithm, double alpha_s, double beta) {
  ReplayOptions options;
  options.algorithm = algorithm;
  options.alpha_s = alpha_s;
  options.beta_bytes_per_s = beta;
  options.platform.kind = PlatformKind::Star;
  options.platform.alpha_s = alpha_s;
  options.platform.beta_bytes_per_s = beta;
  options.iterations = 1;
  return options;
}

// The closed form of a ring all-reduce of `bytes` on W ranks where each of its 2(W−1) steps
// pays `step_latency_s` and the slowest link paces the payload: 2(W−1)·latency +
// 2(W−1)/W·S / bandwidth, the payload in whole bytes as the replay sends it.
inline double ring_allreduce_s(int world, std::int64_t bytes, double step_latency_s, double bandwidth) {
  const double payload = std::llround(2.0 * (world - 1) / world * static_cast<double>(bytes));
  return 2.0 * (world - 1) * step_latency_s + payload / bandwidth;
}

}  // namespace ddpsim::sim::testing
