// Building the simulated platform inside the running SimGrid engine (platform.hpp).
#pragma once

#include <simgrid/s4u/Host.hpp>

#include <vector>

#include "ddpsim/sim/platform.hpp"

namespace ddpsim::sim {

// Creates (or loads) the platform and returns the host of each rank, rank r at [r].
// Throws SimulationError when the platform cannot hold world_size ranks.
std::vector<simgrid::s4u::Host*> build_platform(const PlatformSpec& spec, int world_size);

// The largest latency of a route between two of the given hosts (src[i] → dst[i]).
double max_route_latency_s(const std::vector<simgrid::s4u::Host*>& sources,
                           const std::vector<simgrid::s4u::Host*>& destinations);

}  // namespace ddpsim::sim
