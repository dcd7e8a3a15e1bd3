// All-reduce algorithms played by the ranks' comm actors inside SimGrid (allreduce.hpp).
#pragma once

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "ddpsim/sim/allreduce.hpp"

namespace ddpsim::sim {

// Thrown inside a comm actor when a collective waits past its deadline.
class CollectiveTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every rank calls join() with the same sequence of collectives; the last one to arrive
// releases the others. One semaphore per rank (not a condition variable under a mutex):
// an actor blocked in acquire can be killed safely, and acquire_timeout gives timeouts.
class JoinPoint {
 public:
  explicit JoinPoint(int world_size);
  // Blocks until every rank has joined; throws CollectiveTimeout past `deadline_s`
  // (a negative deadline waits forever).
  void join(int rank, double deadline_s);

 private:
  int world_size_;
  int arrived_ = 0;
  std::vector<simgrid::s4u::SemaphorePtr> released_;
};

// What the ranks share to run collectives.
struct CommunicationGroup {
  CommunicationGroup(std::vector<simgrid::s4u::Host*> hosts, double alpha_s, double beta_bytes_per_s);

  int world_size() const { return static_cast<int>(hosts.size()); }

  std::vector<simgrid::s4u::Host*> hosts;
  std::vector<simgrid::s4u::Mailbox*> ring_inbox;  // ring_inbox[r]: messages to rank r
  JoinPoint join_point;
  // Largest route latency between ring neighbours / double-binary-tree neighbours: the
  // per-step latency of the aggregated models (the slowest pair paces every step).
  double ring_step_latency_s = 0;
  double tree_step_latency_s = 0;
  // tree_neighbours[r]: double_binary_tree_neighbours(W)[r].
  std::vector<std::vector<int>> tree_neighbours;
  double alpha_s = 0;
  double beta_bytes_per_s = 0;
  std::int64_t messages = 0;
  // Set when every ring neighbour pair has links of its own (the star platform, CM02 without
  // cross-traffic, one collective at a time): each aggregated ring message then runs alone
  // at its route's bandwidth, so ring-agg sleeps for latency + bytes / β instead of asking
  // the LMM solver. With W simultaneous flows that solver was the superlinear part
  // (W=4096: 4 s vs 0.4 s at W=1024).
  bool ring_links_uncontended = false;
  double ring_link_bandwidth = 0;  // bytes/s of those links
};

// All-reduces `bytes` with `algorithm` as rank `rank`; returns when this rank has the
// result. Throws CollectiveTimeout past deadline_s (negative: no deadline).
void run_allreduce(CommunicationGroup& group, AllreduceAlgorithm algorithm, int rank,
                   std::int64_t bytes, double deadline_s);

}  // namespace ddpsim::sim
