// S4U implementations of the all-reduce algorithms (collectives.hpp).
#include "engine/collectives.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cmath>
#include <string>


namespace sg4 = simgrid::s4u;

namespace ddpsim::sim {

namespace {

// The simulator moves no data: every message carries a pointer to this.
int g_no_payload = 0;

double remaining_s(double deadline_s) {
  return std::max(0.0, deadline_s - sg4::Engine::get_clock());
}

void sleep_within(double duration_s, double deadline_s) {
  if (deadline_s >= 0 && sg4::Engine::get_clock() + duration_s > deadline_s) {
    sg4::this_actor::sleep_until(deadline_s);
    throw CollectiveTimeout("the all-reduce did not finish in time");
  }
  sg4::this_actor::sleep_for(duration_s);
}

// 2(W−1) steps; in each, send one chunk to the right neighbour and receive one from the left
// (the reduce-scatter then the all-gather of the ring algorithm).
void ring(CommunicationGroup& group, int rank, std::int64_t bytes, double deadline_s) {
  const int world = group.world_size();
  const auto chunk = static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) / world));
  sg4::Mailbox* right = group.ring_inbox[static_cast<std::size_t>((rank + 1) % world)];
  sg4::Mailbox* mine = group.ring_inbox[static_cast<std::size_t>(rank)];
  for (int step = 0; step < 2 * (world - 1); ++step) {
    sg4::CommPtr send = right->put_async(&g_no_payload, chunk);
    int* received = nullptr;
    sg4::CommPtr receive = mine->get_async<int>(&received);
    wait_comm(receive, deadline_s);
    wait_comm(send, deadline_s);
    ++group.messages;
  }
}

// The network phase of an aggregated model, then `later_steps_s`: every participant leaves
// at the same time, with the slowest flow. A phase size seen before is slept; the first
// one simulated with SimGrid's flows is played by the first participant to get here, while
// the others wait for it (network_phase.hpp).
void aggregated_phase(CommunicationGroup& group, NetworkPhase& phase, Participant who, std::uint64_t bytes,
                      double later_steps_s, double deadline_s) {
  if (who.index == 0) group.messages += phase.flow_count();
  if (const auto known = phase.known_duration_s(bytes)) {
    sleep_within(*known + later_steps_s, deadline_s);
    return;
  }
  if (!phase.simulating(bytes)) phase.simulate(bytes, deadline_s);
  group.phase_done.join(who.index, deadline_s);
  sleep_within(later_steps_s, deadline_s);
}

// Everyone joins, then each rank sends one message carrying all 2(W−1) chunks to its right
// neighbour and waits out the other 2(W−1)−1 step latencies; every rank finishes with the
// slowest pair (in a real ring each step waits for the slowest link).
std::uint64_t ring_payload(int world, std::int64_t bytes) {
  return static_cast<std::uint64_t>(std::llround(2.0 * (world - 1) / world * static_cast<double>(bytes)));
}

double ring_later_steps_s(const CommunicationGroup& group) {
  return (2.0 * (group.world_size() - 1) - 1) * group.ring_phase->max_latency_s();
}

void ring_aggregated(CommunicationGroup& group, Participant who, std::int64_t bytes, double deadline_s) {
  group.join_point.join(who.index, deadline_s);
  aggregated_phase(group, *group.ring_phase, who, ring_payload(group.world_size(), bytes), ring_later_steps_s(group),
                   deadline_s);
}

// Everyone joins, then the ring formula's time passes: no network is simulated.
void analytic(CommunicationGroup& group, Participant who, std::int64_t bytes, double deadline_s) {
  group.join_point.join(who.index, deadline_s);
  sleep_within(ring_allreduce_s(group.world_size(), static_cast<double>(bytes), group.alpha_s,
                                group.beta_bytes_per_s),
               deadline_s);
}

// Double binary tree, aggregated like ring_aggregated: after the join, each rank sends half
// of the buffer to every neighbour it has in either tree (its share of the pipelined reduce
// towards the parent and broadcast towards the children, 2S in all for a rank that is inner
// in one tree and leaf in the other), all at once so that they share its link; then the
// remaining 2⌈log2 W⌉−1 step latencies.
std::uint64_t tree_payload(std::int64_t bytes) {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) / 2));
}

double tree_later_steps_s(const CommunicationGroup& group) {
  return (2.0 * ceil_log2(group.world_size()) - 1) * group.tree_phase->max_latency_s();
}

void tree(CommunicationGroup& group, Participant who, std::int64_t bytes, double deadline_s) {
  group.join_point.join(who.index, deadline_s);
  aggregated_phase(group, *group.tree_phase, who, tree_payload(bytes), tree_later_steps_s(group), deadline_s);
}

FlowPattern ring_pattern(int world) {
  FlowPattern pattern;
  for (int r = 0; r < world; ++r) {
    pattern.from.push_back(r);
    pattern.to.push_back((r + 1) % world);
  }
  return pattern;
}

FlowPattern tree_pattern(int world) {
  FlowPattern pattern;
  const std::vector<std::vector<int>> neighbours = double_binary_tree_neighbours(world);
  for (int r = 0; r < world; ++r) {
    for (int peer : neighbours[static_cast<std::size_t>(r)]) {
      pattern.from.push_back(r);
      pattern.to.push_back(peer);
    }
  }
  return pattern;
}

}  // namespace

void wait_comm(const sg4::CommPtr& comm, double deadline_s) {
  if (deadline_s < 0) {
    comm->wait();
    return;
  }
  try {
    comm->wait_for(remaining_s(deadline_s));
  } catch (const simgrid::TimeoutException&) {
    throw CollectiveTimeout("a peer did not join the all-reduce in time");
  }
}

JoinPoint::JoinPoint(int participants) : participants_(participants) {
  for (int index = 0; index < participants; ++index) released_.push_back(sg4::Semaphore::create(0));
}

void JoinPoint::join(int participant, double deadline_s) {
  // Actors run one at a time (contexts/nthreads = 1), so the counter needs no lock.
  if (++arrived_ == participants_) {
    arrived_ = 0;
    for (int other = 0; other < participants_; ++other) {
      if (other != participant) released_[static_cast<std::size_t>(other)]->release();
    }
    return;
  }
  auto& mine = released_[static_cast<std::size_t>(participant)];
  if (deadline_s < 0) {
    mine->acquire();
  } else if (mine->acquire_timeout(remaining_s(deadline_s))) {
    throw CollectiveTimeout("a peer did not join the all-reduce in time");
  }
}

CommunicationGroup::CommunicationGroup(const Routes& routes, int participants, AllreduceAlgorithm algorithm,
                                       double alpha, double beta, bool flow_model_required,
                                       std::int64_t max_simulated_flows)
    : world(routes.world_size()), join_point(participants), phase_done(participants), alpha_s(alpha),
      beta_bytes_per_s(beta) {
  if (world <= 1) return;
  if (algorithm == AllreduceAlgorithm::Ring) {
    for (int r = 0; r < world; ++r) ring_inbox.push_back(sg4::Mailbox::by_name("ring-inbox-" + std::to_string(r)));
  }
  if (algorithm == AllreduceAlgorithm::RingAggregated || algorithm == AllreduceAlgorithm::Auto) {
    ring_phase.emplace(routes, ring_pattern(world), flow_model_required, max_simulated_flows);
  }
  if (algorithm == AllreduceAlgorithm::Tree || algorithm == AllreduceAlgorithm::Auto) {
    tree_phase.emplace(routes, tree_pattern(world), flow_model_required, max_simulated_flows);
  }
}

std::vector<NetworkPhase*> CommunicationGroup::phases() {
  std::vector<NetworkPhase*> built;
  if (ring_phase) built.push_back(&*ring_phase);
  if (tree_phase) built.push_back(&*tree_phase);
  return built;
}

const AllreduceChoice& CommunicationGroup::choose(std::int64_t bytes) {
  const auto known = choices.find(bytes);
  if (known != choices.end()) return known->second;
  // Each model's whole collective: its network phase's closed form, then its later steps.
  // Closed forms, not SimGrid's flows, even where the phase will be simulated with flows:
  // the choice is a prediction made before the collective, as NCCL's is.
  AllreduceChoice choice;
  choice.bytes = bytes;
  choice.ring_agg_s = ring_phase->closed_form_s(ring_payload(world, bytes)) + ring_later_steps_s(*this);
  choice.tree_s = tree_phase->closed_form_s(tree_payload(bytes)) + tree_later_steps_s(*this);
  choice.algorithm = choice.tree_s < choice.ring_agg_s ? AllreduceAlgorithm::Tree : AllreduceAlgorithm::RingAggregated;
  return choices.emplace(bytes, choice).first->second;
}

double closed_form_allreduce_s(CommunicationGroup& group, AllreduceAlgorithm algorithm, std::int64_t bytes) {
  if (group.world_size() <= 1) return 0;
  switch (algorithm) {
    case AllreduceAlgorithm::RingAggregated:
      return group.ring_phase->closed_form_s(ring_payload(group.world_size(), bytes)) + ring_later_steps_s(group);
    case AllreduceAlgorithm::Tree:
      return group.tree_phase->closed_form_s(tree_payload(bytes)) + tree_later_steps_s(group);
    case AllreduceAlgorithm::Analytic:
      return ring_allreduce_s(group.world_size(), static_cast<double>(bytes), group.alpha_s, group.beta_bytes_per_s);
    case AllreduceAlgorithm::Auto: return closed_form_allreduce_s(group, group.choose(bytes).algorithm, bytes);
    case AllreduceAlgorithm::Ring: break;
  }
  throw std::logic_error("closed_form_allreduce_s: the explicit ring has no closed form here");
}

void run_allreduce(CommunicationGroup& group, AllreduceAlgorithm algorithm, Participant who,
                   std::int64_t bytes, double deadline_s) {
  if (group.world_size() <= 1) return;
  switch (algorithm) {
    case AllreduceAlgorithm::Ring: return ring(group, who.rank, bytes, deadline_s);
    case AllreduceAlgorithm::RingAggregated: return ring_aggregated(group, who, bytes, deadline_s);
    case AllreduceAlgorithm::Analytic: return analytic(group, who, bytes, deadline_s);
    case AllreduceAlgorithm::Tree: return tree(group, who, bytes, deadline_s);
    case AllreduceAlgorithm::Auto: return run_allreduce(group, group.choose(bytes).algorithm, who, bytes, deadline_s);
  }
}

}  // namespace ddpsim::sim
