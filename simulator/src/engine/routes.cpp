// Routes from a built SimGrid platform or from a built-in platform's description (routes.hpp).
#include "engine/routes.hpp"

#include <simgrid/s4u/Link.hpp>

#include <string>
#include <unordered_map>

#include "ddpsim/sim/replay.hpp"

namespace sg4 = simgrid::s4u;

namespace ddpsim::sim {

namespace {

class SimgridRoutes final : public Routes {
 public:
  explicit SimgridRoutes(std::vector<sg4::Host*> hosts) : hosts_(std::move(hosts)) {}

  int world_size() const override { return static_cast<int>(hosts_.size()); }

  double route(int from, int to, std::vector<RouteHop>& hops) const override {
    hops.clear();
    links_.clear();
    double latency = 0;
    hosts_[static_cast<std::size_t>(from)]->route_to(hosts_[static_cast<std::size_t>(to)], links_, &latency);
    for (const sg4::Link* link : links_) {
      const auto [entry, inserted] = ids_.try_emplace(link, by_id_.size());
      if (inserted) by_id_.push_back(link);
      hops.push_back(RouteHop{entry->second, link->get_bandwidth(),
                              link->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE});
    }
    return latency;
  }

  std::string link_name(std::uint64_t link) const override {
    return link < by_id_.size() ? by_id_[static_cast<std::size_t>(link)]->get_name() : "";
  }

 private:
  std::vector<sg4::Host*> hosts_;
  mutable std::vector<sg4::Link*> links_;
  mutable std::unordered_map<const sg4::Link*, std::uint64_t> ids_;
  mutable std::vector<const sg4::Link*> by_id_;
};

// build_platform's wiring (platform_builder.cpp), without SimGrid. Every rank has a
// split-duplex link to its switch: ids 2r (its _UP half, leaving the rank) and 2r + 1
// (_DOWN, arriving). On two-level, node n's uplink: 2W + 2n (_UP, leaving the node) and
// 2W + 2n + 1 (_DOWN). The latencies are added in the order SimGrid adds them: within one
// zone the sender's link then the receiver's; across nodes the top zone's route first (the
// two uplinks), then the sender's link, then the receiver's.
class PlatformRoutes final : public Routes {
 public:
  PlatformRoutes(const PlatformSpec& spec, int world_size) : spec_(spec), world_(world_size) {}

  int world_size() const override { return world_; }

  double route(int from, int to, std::vector<RouteHop>& hops) const override {
    hops.clear();
    const auto up = [](int rank) { return 2 * static_cast<std::uint64_t>(rank); };
    const auto down = [](int rank) { return 2 * static_cast<std::uint64_t>(rank) + 1; };
    double latency = 0;
    if (spec_.kind == PlatformKind::Star) {
      hops.push_back(RouteHop{up(from), spec_.beta_bytes_per_s, false});
      hops.push_back(RouteHop{down(to), spec_.beta_bytes_per_s, false});
      latency += spec_.alpha_s / 2;
      latency += spec_.alpha_s / 2;
      return latency;
    }
    const int from_node = from / spec_.gpus_per_node;
    const int to_node = to / spec_.gpus_per_node;
    if (from_node != to_node) {
      const std::uint64_t uplinks = 2 * static_cast<std::uint64_t>(world_);
      latency += spec_.inter_latency_s / 2;
      latency += spec_.inter_latency_s / 2;
      hops.push_back(RouteHop{up(from), spec_.intra_bandwidth, false});
      hops.push_back(RouteHop{uplinks + up(from_node), spec_.inter_bandwidth, false});
      hops.push_back(RouteHop{uplinks + down(to_node), spec_.inter_bandwidth, false});
      hops.push_back(RouteHop{down(to), spec_.intra_bandwidth, false});
    } else {
      hops.push_back(RouteHop{up(from), spec_.intra_bandwidth, false});
      hops.push_back(RouteHop{down(to), spec_.intra_bandwidth, false});
    }
    latency += spec_.intra_latency_s / 2;
    latency += spec_.intra_latency_s / 2;
    return latency;
  }

  // The names build_platform gives the links.
  std::string link_name(std::uint64_t link) const override {
    const std::string half = link % 2 == 0 ? "_UP" : "_DOWN";
    const std::uint64_t index = link / 2;
    if (index < static_cast<std::uint64_t>(world_)) return "link-rank-" + std::to_string(index) + half;
    return "uplink-node-" + std::to_string(index - static_cast<std::uint64_t>(world_)) + half;
  }

 private:
  PlatformSpec spec_;
  int world_;
};

}  // namespace

std::unique_ptr<Routes> simgrid_routes(std::vector<sg4::Host*> hosts) {
  return std::make_unique<SimgridRoutes>(std::move(hosts));
}

std::unique_ptr<Routes> platform_routes(const PlatformSpec& spec, int world_size) {
  if (spec.kind == PlatformKind::File) {
    throw SimulationError(spec.xml_file + ": a platform file's routes come from SimGrid, not its description");
  }
  return std::make_unique<PlatformRoutes>(spec, world_size);
}

}  // namespace ddpsim::sim
