// CoreHold ([launch] hold_cores): while it lives, one spinning thread per CPU this process may
// run on, each pinned to its CPU at SCHED_IDLE; none once it is gone; the calling thread (which
// starts the jobs, so whose affinity and policy they inherit) left as it was.
#include "core_hold.hpp"

#include <sched.h>
#include <sys/types.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ddpsim::experiment {
namespace {

namespace fs = std::filesystem;

std::vector<int> cpus_of(pid_t tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(tid, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

struct IdleThread {
  std::vector<int> cpus;
  char state;  // /proc's: 'R' running or runnable, 'S' sleeping, ...
};

// This process's threads at SCHED_IDLE.
std::vector<IdleThread> idle_threads() {
  std::vector<IdleThread> out;
  for (const auto& entry : fs::directory_iterator("/proc/self/task")) {
    const pid_t tid = std::stoi(entry.path().filename().string());
    if (::sched_getscheduler(tid) != SCHED_IDLE) continue;  // or already gone (-1)
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto after_name = line.rfind(')');  // "tid (name) S ...": the name may hold spaces
    out.push_back({cpus_of(tid), after_name + 2 < line.size() ? line[after_name + 2] : '?'});
  }
  return out;
}

TEST(CoreHold, OneIdleSpinnerPinnedToEachCpuWhileHeldNoneAfter) {
  if (::sched_getscheduler(0) == SCHED_IDLE) GTEST_SKIP() << "the test itself runs at SCHED_IDLE";
  const std::vector<int> allowed = cpus_of(0);
  ASSERT_FALSE(allowed.empty());
  ASSERT_TRUE(idle_threads().empty());
  {
    CoreHold hold;
    EXPECT_EQ(hold.cpus(), allowed);
    const auto threads = idle_threads();
    ASSERT_EQ(threads.size(), allowed.size());
    std::vector<int> pinned;
    for (const auto& thread : threads) {
      ASSERT_EQ(thread.cpus.size(), 1u) << "a spinner not pinned to one CPU";
      pinned.push_back(thread.cpus[0]);
      EXPECT_EQ(thread.state, 'R') << "a spinner that sleeps holds no CPU (CPU " << thread.cpus[0] << ")";
    }
    std::sort(pinned.begin(), pinned.end());
    EXPECT_EQ(pinned, allowed);
    // The calling thread, whose affinity and policy the jobs it starts inherit, is untouched.
    EXPECT_EQ(cpus_of(0), allowed);
    EXPECT_NE(::sched_getscheduler(0), SCHED_IDLE);
  }
  EXPECT_TRUE(idle_threads().empty()) << "a spinner outlived the hold";
}

}  // namespace
}  // namespace ddpsim::experiment
