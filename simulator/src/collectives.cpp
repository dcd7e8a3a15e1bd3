// S4U implementations of the all-reduce algorithms (collectives.hpp).
#include "collectives.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "platform_builder.hpp"

namespace sg4 = simgrid::s4u;

namespace ddpsim::sim {

namespace {

// The simulator moves no data: every message carries a pointer to this.
int g_no_payload = 0;

double remaining_s(double deadline_s) {
  return std::max(0.0, deadline_s - sg4::Engine::get_clock());
}

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

// Everyone joins, one message carrying all 2(W−1) chunks to the right neighbour, the other
// 2(W−1)−1 step latencies, and a final join so that every rank finishes with the slowest
// pair (in a real ring each step waits for the slowest link).
void ring_aggregated(CommunicationGroup& group, int rank, std::int64_t bytes, double deadline_s) {
  const int world = group.world_size();
  group.join_point.join(rank, deadline_s);
  const double payload = 2.0 * (world - 1) / world * static_cast<double>(bytes);
  const double later_steps_s = (2.0 * (world - 1) - 1) * group.ring_step_latency_s;
  if (group.ring_links_uncontended) {
    ++group.messages;
    sleep_within(group.ring_step_latency_s + static_cast<double>(std::llround(payload)) / group.ring_link_bandwidth + later_steps_s,
                 deadline_s);
    group.join_point.join(rank, deadline_s);
    return;
  }
  sg4::Host* right = group.hosts[static_cast<std::size_t>((rank + 1) % world)];
  sg4::CommPtr send = sg4::Comm::sendto_async(group.hosts[static_cast<std::size_t>(rank)], right,
                                              static_cast<std::uint64_t>(std::llround(payload)));
  wait_comm(send, deadline_s);
  ++group.messages;
  sleep_within(later_steps_s, deadline_s);
  group.join_point.join(rank, deadline_s);
}

// Everyone joins, then the ring formula's time passes: no network is simulated.
void analytic(CommunicationGroup& group, int rank, std::int64_t bytes, double deadline_s) {
  group.join_point.join(rank, deadline_s);
  sleep_within(ring_allreduce_s(group.world_size(), static_cast<double>(bytes), group.alpha_s,
                                group.beta_bytes_per_s),
               deadline_s);
}

// Double binary tree, aggregated like ring_aggregated: after the join, each rank sends half
// of the buffer to every neighbour it has in either tree (its share of the pipelined reduce
// towards the parent and broadcast towards the children, 2S in all for a rank that is inner
// in one tree and leaf in the other), all at once so that they share its link; then the
// remaining 2⌈log2 W⌉−1 step latencies, and a final join.
void tree(CommunicationGroup& group, int rank, std::int64_t bytes, double deadline_s) {
  const int world = group.world_size();
  group.join_point.join(rank, deadline_s);
  const auto half = static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) / 2));
  sg4::Host* self = group.hosts[static_cast<std::size_t>(rank)];
  std::vector<sg4::CommPtr> sends;
  for (int peer : group.tree_neighbours[static_cast<std::size_t>(rank)]) {
    sends.push_back(sg4::Comm::sendto_async(self, group.hosts[static_cast<std::size_t>(peer)], half));
  }
  for (const auto& send : sends) wait_comm(send, deadline_s);
  group.messages += static_cast<std::int64_t>(sends.size());
  sleep_within((2.0 * ceil_log2(world) - 1) * group.tree_step_latency_s, deadline_s);
  group.join_point.join(rank, deadline_s);
}

}  // namespace

JoinPoint::JoinPoint(int world_size) : world_size_(world_size) {
  for (int rank = 0; rank < world_size; ++rank) released_.push_back(sg4::Semaphore::create(0));
}

void JoinPoint::join(int rank, double deadline_s) {
  // Actors run one at a time (contexts/nthreads = 1), so the counter needs no lock.
  if (++arrived_ == world_size_) {
    arrived_ = 0;
    for (int other = 0; other < world_size_; ++other) {
      if (other != rank) released_[static_cast<std::size_t>(other)]->release();
    }
    return;
  }
  auto& mine = released_[static_cast<std::size_t>(rank)];
  if (deadline_s < 0) {
    mine->acquire();
  } else if (mine->acquire_timeout(remaining_s(deadline_s))) {
    throw CollectiveTimeout("a peer did not join the all-reduce in time");
  }
}

CommunicationGroup::CommunicationGroup(std::vector<sg4::Host*> hosts_in, double alpha, double beta)
    : hosts(std::move(hosts_in)), join_point(static_cast<int>(hosts.size())), alpha_s(alpha),
      beta_bytes_per_s(beta) {
  const int world = world_size();
  std::vector<sg4::Host*> right_of;
  for (int r = 0; r < world; ++r) {
    ring_inbox.push_back(sg4::Mailbox::by_name("ring-inbox-" + std::to_string(r)));
    right_of.push_back(hosts[static_cast<std::size_t>((r + 1) % world)]);
  }
  ring_step_latency_s = max_route_latency_s(hosts, right_of);

  tree_neighbours = double_binary_tree_neighbours(world);
  std::vector<sg4::Host*> edge_from;
  std::vector<sg4::Host*> edge_to;
  for (int r = 0; r < world; ++r) {
    for (int peer : tree_neighbours[static_cast<std::size_t>(r)]) {
      edge_from.push_back(hosts[static_cast<std::size_t>(r)]);
      edge_to.push_back(hosts[static_cast<std::size_t>(peer)]);
    }
  }
  tree_step_latency_s = max_route_latency_s(edge_from, edge_to);
}

void run_allreduce(CommunicationGroup& group, AllreduceAlgorithm algorithm, int rank,
                   std::int64_t bytes, double deadline_s) {
  if (group.world_size() <= 1) return;
  switch (algorithm) {
    case AllreduceAlgorithm::Ring: return ring(group, rank, bytes, deadline_s);
    case AllreduceAlgorithm::RingAggregated: return ring_aggregated(group, rank, bytes, deadline_s);
    case AllreduceAlgorithm::Analytic: return analytic(group, rank, bytes, deadline_s);
    case AllreduceAlgorithm::Tree: return tree(group, rank, bytes, deadline_s);
  }
}

}  // namespace ddpsim::sim
