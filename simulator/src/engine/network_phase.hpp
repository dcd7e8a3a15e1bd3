// The network phase of an aggregated collective: the flows every rank starts at once after
// the join (ring-agg: one to the right neighbour; tree: one to each tree neighbour), and
// how long they take until the last one has arrived (collectives.cpp).
//
// Only one collective is ever on the network (each needs every rank, and a rank runs one at
// a time) and compute uses no link, so the phase's duration depends on the message size
// alone: it is found once per size and slept afterwards. (With two all-reduces at once,
// ReplayOptions::allreduces_in_flight, the replay paces the closed forms instead: paced_transfers.hpp.) Three ways, chosen per pattern:
//   Exact       no link carries two flows of the pattern (the ring on the star and on the
//               two-level platform): each flow runs alone at its route's slowest link, so
//               the phase is max over flows of (route latency + bytes / that bandwidth),
//               which is what SimGrid's CM02 flow model gives (a test checks it to 1e-9).
//   Flows       SimGrid's flow model: one actor starts every rank's flow (simulated
//               actor or not) and waits for all of them. Used up to max_simulated_flows
//               flows, and always when a --cfg changes the network model.
//   Bottleneck  beyond that limit, the bound of max-min sharing for flows that start
//               together: a flow's rate never falls below the smallest fair share
//               bandwidth / flows of the links on its route, so it has arrived by
//               route latency + bytes · max over its links of (flows / bandwidth). With
//               equal sizes the flows of the most loaded link arrive exactly then; the
//               bound can only overstate when routes of different latencies meet on that
//               link (a flow still in its latency does not share yet). Linear in flows
//               (SimGrid 3.32 takes quadratic time in the number of concurrent comms).
// The routes come from routes.hpp: for the built-in platforms computed from their
// description, so Exact and Bottleneck need no SimGrid platform of W hosts (replay.cpp
// builds one only when the phase's method is Flows, or for the explicit ring).
#pragma once

#include <simgrid/s4u/Host.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "engine/routes.hpp"

namespace ddpsim::sim {

// Rank from[i] sends to rank to[i]; every flow of a phase carries the same bytes.
struct FlowPattern {
  std::vector<int> from;
  std::vector<int> to;
};

enum class PhaseMethod { Exact, Flows, Bottleneck };
const char* to_string(PhaseMethod method);

class NetworkPhase {
 public:
  // routes: between the world's ranks. flow_model_required: a --cfg changed the network
  // model, whose sharing the closed forms do not know.
  NetworkPhase(const Routes& routes, FlowPattern pattern, bool flow_model_required,
               std::int64_t max_simulated_flows);

  PhaseMethod method() const { return method_; }
  std::int64_t flow_count() const { return static_cast<std::int64_t>(pattern_.from.size()); }
  // The largest route latency of a flow: one step's latency in the aggregated models.
  double max_latency_s() const { return max_latency_s_; }

  // The phase's duration with `bytes` per flow, when known without simulating it.
  std::optional<double> known_duration_s(std::uint64_t bytes) const;
  // The closed form whatever the method: Exact's when no link carries two flows, else the
  // bottleneck bound (what the Flows method would give, within ~1 % on the built-in
  // platforms; a --cfg network model is not known to it). --allreduce auto compares these.
  double closed_form_s(std::uint64_t bytes) const;
  // Flows: true while one actor is simulating a phase of this size.
  bool simulating(std::uint64_t bytes) const { return simulating_.count(bytes) > 0; }
  // Flows: the platform's hosts, hosts[r] rank r's; set before the first simulate().
  void set_hosts(std::vector<simgrid::s4u::Host*> hosts) { hosts_ = std::move(hosts); }
  // Flows: starts every flow from the calling actor, waits for all (throws
  // CollectiveTimeout past deadline_s) and remembers the duration.
  void simulate(std::uint64_t bytes, double deadline_s);

 private:
  // What bounds one flow: its route latency and its most loaded link.
  struct FlowBound {
    double latency_s = 0;
    double flows_on_link = 1;
    double link_bandwidth = 0;
    bool operator<(const FlowBound& other) const;
  };

  std::vector<simgrid::s4u::Host*> hosts_;
  FlowPattern pattern_;
  PhaseMethod method_ = PhaseMethod::Flows;
  double max_latency_s_ = 0;
  std::vector<FlowBound> bounds_;  // distinct bounds (a handful: the platform is regular)
  std::map<std::uint64_t, double> simulated_s_;
  std::map<std::uint64_t, bool> simulating_;
};

}  // namespace ddpsim::sim
