// All-reduce algorithms played by the comm actors inside SimGrid (allreduce.hpp).
#pragma once

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "ddpsim/sim/allreduce.hpp"
#include "engine/network_phase.hpp"

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
  explicit JoinPoint(int participants);
  // Blocks until every participant has joined; throws CollectiveTimeout past `deadline_s`
  // (a negative deadline waits forever).
  void join(int participant, double deadline_s);

 private:
  int participants_;
  int arrived_ = 0;
  std::vector<simgrid::s4u::SemaphorePtr> released_;
};

// Who calls a collective: a class of identical ranks (replay_classes.hpp), played by the
// actors of its first rank. The join points count classes; the network carries every rank.
struct Participant {
  int index = 0;  // the class
  int rank = 0;   // the rank whose actors play it
};

// What the ranks share to run collectives.
struct CommunicationGroup {
  // routes: between the W = routes.world_size() ranks (routes.hpp); `participants` actors
  // call each collective. flow_model_required: a --cfg changed the network model
  // (network_phase.hpp). A phase whose method is Flows needs the platform's hosts
  // (phase->set_hosts) before it runs.
  CommunicationGroup(const Routes& routes, int participants, AllreduceAlgorithm algorithm, double alpha_s,
                     double beta_bytes_per_s, bool flow_model_required, std::int64_t max_simulated_flows);

  int world_size() const { return world; }

  int world = 0;
  std::vector<simgrid::s4u::Mailbox*> ring_inbox;  // explicit ring: ring_inbox[r] holds messages to rank r
  JoinPoint join_point;  // everyone has arrived: the collective starts
  JoinPoint phase_done;  // the network phase that was being simulated is over
  // The aggregated models' flows (ring-agg: to the right neighbour; tree: to every
  // double-binary-tree neighbour); only the algorithm's own are built, both for auto. A
  // phase's largest route latency is its model's per-step latency (the slowest pair paces
  // every step).
  std::optional<NetworkPhase> ring_phase;
  std::optional<NetworkPhase> tree_phase;
  // auto: the choice made for each message size, the first time it is all-reduced.
  std::map<std::int64_t, AllreduceChoice> choices;
  double alpha_s = 0;
  double beta_bytes_per_s = 0;
  std::int64_t messages = 0;

  // The phases that are built (one, two for auto, none for the explicit ring and analytic).
  std::vector<NetworkPhase*> phases();
  // auto: ring-agg's and the tree's closed forms for `bytes`, and the faster; remembered.
  const AllreduceChoice& choose(std::int64_t bytes);
};

// Blocks until `comm` is done; throws CollectiveTimeout past deadline_s (negative: none).
void wait_comm(const simgrid::s4u::CommPtr& comm, double deadline_s);

// How long all-reducing `bytes` with `algorithm` takes alone on an idle network, by the
// closed form of its network phase (the bottleneck bound where that is shared) and its later
// steps' latencies: the work of a paced transfer (paced_transfers.hpp). Not for the explicit
// ring, which has no closed form here.
double closed_form_allreduce_s(CommunicationGroup& group, AllreduceAlgorithm algorithm, std::int64_t bytes);

// All-reduces `bytes` with `algorithm` as `who`; returns when its ranks have the result.
// Throws CollectiveTimeout past deadline_s (negative: no deadline).
void run_allreduce(CommunicationGroup& group, AllreduceAlgorithm algorithm, Participant who,
                   std::int64_t bytes, double deadline_s);

}  // namespace ddpsim::sim
