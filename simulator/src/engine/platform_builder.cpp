// Star and two-level platforms built in code, or a platform XML file (platform.hpp).
#include "engine/platform_builder.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>

#include "ddpsim/sim/replay.hpp"

namespace sg4 = simgrid::s4u;

namespace ddpsim::sim {

namespace {

// Hosts only sleep (compute is replayed as measured durations), so their speed is unused.
constexpr double kHostSpeedFlops = 1e9;

std::string rank_host_name(int rank) { return "rank-" + std::to_string(rank); }

// Gives a host its own full-duplex link to the zone's switch: messages leave on the UP half
// and arrive on the DOWN half, so a rank can send and receive at full speed at once (a ring
// step does both).
void attach_to_switch(sg4::NetZone* zone, sg4::Host* host, double bandwidth, double latency_s) {
  sg4::Link* link = zone->create_split_duplex_link("link-" + host->get_name(), bandwidth)
                        ->set_latency(latency_s);
  zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                  {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
}

std::vector<sg4::Host*> build_star(const PlatformSpec& spec, int world_size) {
  auto* zone = sg4::create_star_zone("switch");
  std::vector<sg4::Host*> hosts;
  for (int rank = 0; rank < world_size; ++rank) {
    sg4::Host* host = zone->create_host(rank_host_name(rank), kHostSpeedFlops);
    // Two links per route, so each carries half of the rank-to-rank latency.
    attach_to_switch(zone, host, spec.beta_bytes_per_s, spec.alpha_s / 2);
    hosts.push_back(host);
  }
  zone->seal();
  return hosts;
}

std::vector<sg4::Host*> build_two_level(const PlatformSpec& spec, int world_size) {
  auto* top = sg4::create_star_zone("top-switch");
  std::vector<sg4::Host*> hosts;
  const int num_nodes = (world_size + spec.gpus_per_node - 1) / spec.gpus_per_node;
  for (int node = 0; node < num_nodes; ++node) {
    const std::string node_name = "node-" + std::to_string(node);
    auto* node_zone = sg4::create_star_zone(node_name);
    node_zone->set_parent(top);
    for (int local = 0; local < spec.gpus_per_node; ++local) {
      const int rank = node * spec.gpus_per_node + local;
      if (rank >= world_size) break;
      sg4::Host* host = node_zone->create_host(rank_host_name(rank), kHostSpeedFlops);
      attach_to_switch(node_zone, host, spec.intra_bandwidth, spec.intra_latency_s / 2);
      hosts.push_back(host);
    }
    // Traffic leaving the node goes through its switch, then the node's uplink.
    auto* node_switch = node_zone->create_router(node_name + "-switch");
    node_zone->seal();
    sg4::Link* uplink = top->create_split_duplex_link("uplink-" + node_name, spec.inter_bandwidth)
                            ->set_latency(spec.inter_latency_s / 2);
    top->add_route(node_zone->get_netpoint(), nullptr, node_switch, nullptr,
                   {sg4::LinkInRoute(uplink, sg4::LinkInRoute::Direction::UP)}, true);
  }
  top->seal();
  return hosts;
}

// "host-2" < "host-10": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t end_i = i;
      std::size_t end_j = j;
      while (end_i < a.size() && std::isdigit(static_cast<unsigned char>(a[end_i]))) ++end_i;
      while (end_j < b.size() && std::isdigit(static_cast<unsigned char>(b[end_j]))) ++end_j;
      const std::string digits_a = a.substr(i, end_i - i);
      const std::string digits_b = b.substr(j, end_j - j);
      const std::string trimmed_a = digits_a.substr(std::min(digits_a.find_first_not_of('0'), digits_a.size()));
      const std::string trimmed_b = digits_b.substr(std::min(digits_b.find_first_not_of('0'), digits_b.size()));
      if (trimmed_a.size() != trimmed_b.size()) return trimmed_a.size() < trimmed_b.size();
      if (trimmed_a != trimmed_b) return trimmed_a < trimmed_b;
      i = end_i;
      j = end_j;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::vector<sg4::Host*> load_file(const PlatformSpec& spec, int world_size) {
  sg4::Engine* engine = sg4::Engine::get_instance();
  try {
    engine->load_platform(spec.xml_file);
  } catch (const std::exception& error) {
    std::string reason = error.what();
    reason = reason.substr(0, reason.find('\n'));
    throw SimulationError(spec.xml_file + ": expected a SimGrid platform file, got an error: " + reason);
  }
  std::vector<sg4::Host*> hosts = engine->get_all_hosts();
  if (static_cast<int>(hosts.size()) < world_size) {
    throw SimulationError(spec.xml_file + ": expected at least " + std::to_string(world_size) +
                          " hosts (one per rank), got " + std::to_string(hosts.size()));
  }
  std::sort(hosts.begin(), hosts.end(),
            [](const sg4::Host* a, const sg4::Host* b) { return natural_less(a->get_name(), b->get_name()); });
  hosts.resize(static_cast<std::size_t>(world_size));
  return hosts;
}

}  // namespace

std::string PlatformSpec::describe() const {
  std::ostringstream text;
  switch (kind) {
    case PlatformKind::Star:
      text << "star alpha_s=" << alpha_s << " beta=" << beta_bytes_per_s;
      break;
    case PlatformKind::TwoLevel:
      text << "two-level gpus_per_node=" << gpus_per_node << " intra_latency_s=" << intra_latency_s
           << " intra_bandwidth=" << intra_bandwidth << " inter_latency_s=" << inter_latency_s
           << " inter_bandwidth=" << inter_bandwidth;
      break;
    case PlatformKind::File:
      text << "file " << xml_file;
      break;
  }
  return text.str();
}

std::vector<sg4::Host*> build_platform(const PlatformSpec& spec, int world_size) {
  switch (spec.kind) {
    case PlatformKind::Star: return build_star(spec, world_size);
    case PlatformKind::TwoLevel: return build_two_level(spec, world_size);
    case PlatformKind::File: return load_file(spec, world_size);
  }
  throw SimulationError("unknown platform kind");
}

std::vector<sg4::Host*> build_hosts_only(const std::vector<int>& ranks) {
  auto* zone = sg4::create_star_zone("actors");
  std::vector<sg4::Host*> hosts;
  hosts.reserve(ranks.size());
  for (int rank : ranks) hosts.push_back(zone->create_host(rank_host_name(rank), kHostSpeedFlops));
  zone->seal();
  return hosts;
}

double max_route_latency_s(const std::vector<sg4::Host*>& sources,
                           const std::vector<sg4::Host*>& destinations) {
  double worst = 0;
  for (std::size_t i = 0; i < sources.size() && i < destinations.size(); ++i) {
    if (sources[i] == destinations[i]) continue;
    std::vector<sg4::Link*> links;
    double latency = 0;
    sources[i]->route_to(destinations[i], links, &latency);
    worst = std::max(worst, latency);
  }
  return worst;
}

}  // namespace ddpsim::sim
