// How long the flows of one aggregated collective take (network_phase.hpp).
#include "engine/network_phase.hpp"

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <set>
#include <tuple>

#include "engine/collectives.hpp"

namespace sg4 = simgrid::s4u;

namespace ddpsim::sim {

const char* to_string(PhaseMethod method) {
  switch (method) {
    case PhaseMethod::Exact: return "exact";
    case PhaseMethod::Flows: return "flows";
    case PhaseMethod::Bottleneck: return "bottleneck";
  }
  return "unknown";
}

bool NetworkPhase::FlowBound::operator<(const FlowBound& other) const {
  return std::tie(latency_s, flows_on_link, link_bandwidth) <
         std::tie(other.latency_s, other.flows_on_link, other.link_bandwidth);
}

NetworkPhase::NetworkPhase(const Routes& routes, FlowPattern pattern, bool flow_model_required,
                           std::int64_t max_simulated_flows)
    : pattern_(std::move(pattern)) {
  // How many flows of the pattern each link carries, then every flow's bound. A fat pipe
  // gives each flow its full bandwidth, so it counts as carrying one. Two passes over the
  // routes, none of them kept: memory grows with the links, not with the hops (Note [ranks as
  // classes] in docs/model.md).
  const std::size_t count = pattern_.from.size();
  std::vector<RouteHop> hops;
  std::vector<int> load;  // by link id (dense, routes.hpp)
  int most_loaded = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (pattern_.from[i] == pattern_.to[i]) continue;
    max_latency_s_ = std::max(max_latency_s_, routes.route(pattern_.from[i], pattern_.to[i], hops));
    for (const RouteHop& hop : hops) {
      if (hop.fatpipe) continue;
      if (hop.link >= load.size()) load.resize(std::max<std::size_t>(hop.link + 1, 2 * load.size()), 0);
      most_loaded = std::max(most_loaded, ++load[static_cast<std::size_t>(hop.link)]);
    }
  }

  std::set<FlowBound> bounds;
  for (std::size_t i = 0; i < count; ++i) {
    FlowBound bound;
    hops.clear();
    if (pattern_.from[i] != pattern_.to[i]) bound.latency_s = routes.route(pattern_.from[i], pattern_.to[i], hops);
    for (const RouteHop& hop : hops) {
      const double flows = hop.fatpipe ? 1.0 : load[static_cast<std::size_t>(hop.link)];
      const double bandwidth = hop.bandwidth;
      if (bound.link_bandwidth == 0 || flows / bandwidth > bound.flows_on_link / bound.link_bandwidth) {
        bound.flows_on_link = flows;
        bound.link_bandwidth = bandwidth;
      }
    }
    if (bound.link_bandwidth > 0) bounds.insert(bound);
  }
  bounds_.assign(bounds.begin(), bounds.end());

  if (flow_model_required) {
    method_ = PhaseMethod::Flows;
  } else if (most_loaded <= 1) {
    method_ = PhaseMethod::Exact;
  } else if (static_cast<std::int64_t>(count) <= max_simulated_flows) {
    method_ = PhaseMethod::Flows;
  } else {
    method_ = PhaseMethod::Bottleneck;
  }
}

std::optional<double> NetworkPhase::known_duration_s(std::uint64_t bytes) const {
  if (method_ == PhaseMethod::Flows) {
    const auto found = simulated_s_.find(bytes);
    if (found == simulated_s_.end()) return std::nullopt;
    return found->second;
  }
  return closed_form_s(bytes);
}

double NetworkPhase::closed_form_s(std::uint64_t bytes) const {
  double longest = 0;
  for (const FlowBound& bound : bounds_) {
    // bytes · flows / bandwidth, in this order: with one flow it is bytes / bandwidth to the bit.
    longest = std::max(longest, bound.latency_s + static_cast<double>(bytes) * bound.flows_on_link / bound.link_bandwidth);
  }
  return longest;
}

void NetworkPhase::simulate(std::uint64_t bytes, double deadline_s) {
  simulating_[bytes] = true;
  const double start_s = sg4::Engine::get_clock();
  std::vector<sg4::CommPtr> comms;
  comms.reserve(pattern_.from.size());
  for (std::size_t i = 0; i < pattern_.from.size(); ++i) {
    comms.push_back(sg4::Comm::sendto_async(hosts_[static_cast<std::size_t>(pattern_.from[i])],
                                            hosts_[static_cast<std::size_t>(pattern_.to[i])], bytes));
  }
  for (const auto& comm : comms) wait_comm(comm, deadline_s);
  simulated_s_[bytes] = sg4::Engine::get_clock() - start_s;
  simulating_.erase(bytes);
}

}  // namespace ddpsim::sim
