// Building the simulated platform inside the running SimGrid engine (platform.hpp).
#pragma once

#include <simgrid/s4u/Host.hpp>

#include <vector>

#include "ddpsim/sim/platform.hpp"

namespace ddpsim::sim {

// Creates (or loads) the platform and returns the host of each rank, rank r at [r].
// Throws SimulationError when the platform cannot hold world_size ranks.
std::vector<simgrid::s4u::Host*> build_platform(const PlatformSpec& spec, int world_size);

// Only the hosts of the given ranks, named as build_platform names them, in one zone with no
// links: for actors that never send (their network phases are computed from routes.hpp).
// Returns the host of ranks[i] at [i]. Linear in ranks.size().
std::vector<simgrid::s4u::Host*> build_hosts_only(const std::vector<int>& ranks);

// The largest latency of a route between two of the given hosts (src[i] → dst[i]).
double max_route_latency_s(const std::vector<simgrid::s4u::Host*>& sources,
                           const std::vector<simgrid::s4u::Host*>& destinations);

}  // namespace ddpsim::sim
