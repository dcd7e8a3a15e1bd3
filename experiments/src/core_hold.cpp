#include "core_hold.hpp"

#include <pthread.h>
#include <sched.h>

#include <cstring>
#include <future>
#include <stdexcept>

namespace ddpsim::experiment {

namespace {

// Pins the calling thread to `cpu` at SCHED_IDLE; "" or what failed.
std::string pin_at_idle_priority(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (int error = ::pthread_setaffinity_np(::pthread_self(), sizeof one, &one))
    return "pinning a thread to CPU " + std::to_string(cpu) + ": " + std::strerror(error);
  sched_param param{};
  param.sched_priority = 0;  // the only priority SCHED_IDLE takes
  if (int error = ::pthread_setschedparam(::pthread_self(), SCHED_IDLE, &param))
    return std::string("giving a thread SCHED_IDLE priority: ") + std::strerror(error);
  return "";
}

}  // namespace

CoreHold::CoreHold() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (int error = ::pthread_getaffinity_np(::pthread_self(), sizeof allowed, &allowed))
    throw std::runtime_error(std::string("hold_cores: reading this process's CPUs: ") + std::strerror(error));
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus_.push_back(cpu);

  // Each spinner says through its promise whether it is pinned at idle priority (the shared
  // state outlives whichever side finishes first).
  std::vector<std::future<std::string>> pinned;
  try {
    for (int cpu : cpus_) {
      std::promise<std::string> promise;
      pinned.push_back(promise.get_future());
      spinners_.emplace_back([this, cpu, promise = std::move(promise)]() mutable {
        const std::string error = pin_at_idle_priority(cpu);
        promise.set_value(error);
        if (!error.empty()) return;
        // A plain load, no pause instruction: a hypervisor may take a loop of pauses for a vCPU
        // spinning on a lock (pause-loop exiting) and deschedule it, the halt this is here to avoid.
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
    }
  } catch (...) {  // a thread that could not be started: the others must not outlive *this
    stop();
    throw;
  }
  std::string failure;
  for (auto& answer : pinned) {
    const std::string error = answer.get();
    if (failure.empty()) failure = error;
  }
  if (!failure.empty()) {
    stop();
    throw std::runtime_error("hold_cores: " + failure);
  }
}

CoreHold::~CoreHold() { stop(); }

void CoreHold::stop() {
  stop_.store(true, std::memory_order_relaxed);
  for (auto& spinner : spinners_)
    if (spinner.joinable()) spinner.join();
  spinners_.clear();
}

}  // namespace ddpsim::experiment
