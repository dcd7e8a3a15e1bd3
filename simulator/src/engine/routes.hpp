// Routes between ranks as the network phase sees them (network_phase.hpp): the links a
// message crosses, in SimGrid's order, and the route's latency.
//
// Two sources. SimgridRoutes asks a built SimGrid platform (Host::route_to). PlatformRoutes
// computes them from the description of a built-in platform (star, two-level), link for
// link and latency for latency as SimGrid would (the same links, the same order, the same
// floating-point sums; a test compares both on every pair of a small platform), without
// building it. SimGrid 3.32 checks every new host's and link's name against every zone
// already attached, so building the two-level platform for W ranks takes time quadratic
// in W (174 s at W = 65,536); the phase only needs its routes, which are linear.
#pragma once

#include <simgrid/s4u/Host.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ddpsim/sim/platform.hpp"

namespace ddpsim::sim {

struct RouteHop {
  std::uint64_t link = 0;  // identifies the link within one Routes
  double bandwidth = 0;    // bytes/s
  bool fatpipe = false;    // gives every flow its full bandwidth
};

class Routes {
 public:
  virtual ~Routes() = default;
  virtual int world_size() const = 0;
  // The route from rank `from` to rank `to` (from != to): its links in SimGrid's order
  // (appended to `hops`, which is cleared first) and its latency.
  virtual double route(int from, int to, std::vector<RouteHop>& hops) const = 0;
  // The link's SimGrid name (for tests and messages).
  virtual std::string link_name(std::uint64_t link) const = 0;
};

// Routes of a built SimGrid platform; hosts[r] is rank r's host.
std::unique_ptr<Routes> simgrid_routes(std::vector<simgrid::s4u::Host*> hosts);

// Routes of a star or two-level platform of world_size ranks, as build_platform would wire
// it (platform_builder.cpp). Throws SimulationError for a platform file.
std::unique_ptr<Routes> platform_routes(const PlatformSpec& spec, int world_size);

}  // namespace ddpsim::sim
