#include "stop_signal.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

namespace ddpsim::runtime {
namespace {

// Lock-free atomics are async-signal-safe; sig_atomic_t would do for the flag alone.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_stop_signal(int /*signal_number*/) { g_stop.store(true); }

// Short enough that a stopped rank reacts well within the launcher's 5 s grace period, long
// enough that polling costs nothing measurable.
constexpr std::int64_t kPollNs = 10'000'000;

}  // namespace

void install_stop_signal_handler() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a blocking read inside Gloo or the store must not fail with EINTR because of us.
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
}

bool stop_requested() { return g_stop.load(); }

std::int64_t sleep_unless_stopped(std::int64_t duration_ns) {
  // Linux wakes a sleeping thread up to its timer slack (50 us by default) late, so each
  // injected sleep would overshoot by up to that, a dozen times an iteration of a slowed rank:
  // time that `--slowdown F` did not ask for. The injector wants exact sleeps: 1 ns of slack
  // on every thread that sleeps here.
  thread_local const bool precise = ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) == 0;
  (void)precise;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::nanoseconds(duration_ns);
  for (auto now = start; now < deadline && !stop_requested(); now = Clock::now()) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count();
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(left, kPollNs)));
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

}  // namespace ddpsim::runtime
