// A machine profile for tests, as ddp-machine-profile writes one for the synthetic trace's machine
// (synthetic_trace.hpp: Gloo on CPUs, one host "synthetic"): every rank on that host, a ladder of
// 4 KiB to 64 MiB by ×4 whose one-at-a-time times a test gives, two in flight at ×1.25, and a
// compute section.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

#include "ddpsim/trace/machine_profile.hpp"

namespace ddpsim::sim::testing {

// `one_s(bytes)`: one all-reduce's time at each rung; two at once take `together` times it.
inline trace::MachineProfile synthetic_profile(int world_size, const std::function<double(std::int64_t)>& one_s,
                                               double together = 1.6) {
  trace::MachineProfile profile;
  profile.tool_version = "test";
  profile.created_utc = "2030-01-01T00:00:00Z";
  profile.launcher = "torchrun";
  profile.backend = "gloo";
  profile.device = "cpu";
  profile.world_size = world_size;
  profile.hosts = {"synthetic"};
  profile.ranks_per_host = world_size;
  profile.threads = 1;
  profile.torch_version = "2.13.0";
  for (std::int64_t bytes = 4096; bytes <= (64 << 20); bytes *= 4) {
    const double one = one_s(bytes);
    profile.allreduce.steps.push_back({bytes, trace::timing_of({one}), trace::timing_of({together * one})});
  }
  profile.allreduce.in_flight = 2;
  profile.allreduce.in_flight_gain = 1.25;
  profile.compute.kernel = "test";
  profile.compute.alone = trace::timing_of({0.010});
  profile.compute.together = trace::timing_of({0.016});
  profile.compute.effective_cores = std::min(2.5, static_cast<double>(world_size));
  return profile;
}

}  // namespace ddpsim::sim::testing
