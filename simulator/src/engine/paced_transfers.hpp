// All-reduces in flight at once, sharing one rate (replay.cpp, ReplayOptions::allreduces_in_flight).
//
// Gloo runs a process group's collectives on worker threads (two by default): a bucket ready
// while another is in flight starts at once, and the two share what the cores and the link
// give. One closed form per all-reduce cannot say when either ends, since each one's rate
// changes whenever another starts or ends or autograd (which shares the cores) stops. So each
// transfer is its work, the seconds it would take alone at the full rate, and all in flight
// progress together: n of them at aggregate_rate(n) / n each, re-evaluated at every change,
// as autograd_for paces compute.
#pragma once

#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

namespace ddpsim::sim {

class PacedTransfers {
 public:
  // aggregate_rate(n): what n transfers in flight do together, in work seconds per second
  // (1: one alone at the full rate). Read again at every change.
  explicit PacedTransfers(std::function<double(int)> aggregate_rate);

  // Runs transfer `key` (its work: `work_s`) from now until it is done. Every participant of
  // a collective calls this at the instant they have all joined; the first starts it, the
  // others wait for the same transfer. Throws CollectiveTimeout past deadline_s (negative: none).
  void run(std::int64_t key, double work_s, double deadline_s);

  // What aggregate_rate depends on other than the count changed (autograd started or ended):
  // the progress so far is kept at the old rate and the new one applies from now.
  void rate_changed();

  int in_flight() const { return static_cast<int>(in_flight_.size()); }

 private:
  struct Transfer {
    double left_s = 0;  // work left
    bool done = false;
  };
  void bank();          // every transfer's progress since since_s_ at each_rate_
  void reprice();       // each_rate_ for the transfers in flight now; wakes every waiter

  std::function<double(int)> aggregate_rate_;
  std::map<std::int64_t, std::shared_ptr<Transfer>> in_flight_;
  double since_s_ = 0;
  double each_rate_ = 0;  // work seconds per second of each transfer in flight
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr changed_;
};

}  // namespace ddpsim::sim
