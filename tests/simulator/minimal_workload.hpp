// A workload with no computation: one bucket, ready at once. Replaying it times one
// all-reduce on the platform alone.
#pragma once

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

}  // namespace ddpsim::sim::testing
