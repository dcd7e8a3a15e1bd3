// Holds every CPU this process may run on at idle priority while an experiment runs
// ([launch] hold_cores = true in a spec).
//
// Why: on a VM whose guest halts an idle vCPU at once (Linux's haltpoll cpuidle driver with
// guest_halt_poll_ns=0, as on this project's 2-vCPU machine), a DDP job that idles often (a rank
// waiting for its peer, a slowed rank's injected sleeps) wakes on halted vCPUs, and its speed
// changes from run to run. One spinning thread per CPU, each pinned to its
// CPU at SCHED_IDLE, keeps the vCPUs from halting: a SCHED_IDLE thread runs only when nothing else
// wants the CPU, and a waking rank preempts it at once, so the job's own work is not slowed. It is
// booting with idle=poll, from user space and for one experiment. See Note [held cores] in
// docs/model.md.
//
// The ranks and tools are other processes: fork copies only the calling thread, and a child
// inherits that thread's affinity and scheduling policy, not the spinners'.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace ddpsim::experiment {

class CoreHold {
 public:
  // Starts one spinner per CPU in the calling thread's affinity mask and returns once each runs
  // pinned at SCHED_IDLE. Throws std::runtime_error (one line) when a spinner cannot be pinned or
  // given idle priority; none is left running then.
  CoreHold();
  ~CoreHold();  // stops and joins the spinners
  CoreHold(const CoreHold&) = delete;
  CoreHold& operator=(const CoreHold&) = delete;

  const std::vector<int>& cpus() const { return cpus_; }

 private:
  void stop();

  std::vector<int> cpus_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> spinners_;
};

}  // namespace ddpsim::experiment
