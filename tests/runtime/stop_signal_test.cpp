// runtime/src/stop_signal.cpp's injected sleeps: at least as long as asked, and precise (the
// thread's timer slack cut from Linux's 50 us to 1 ns, so that `--slowdown F`'s many short
// sleeps do not each overshoot by up to the default slack). Torch-free: built from the one
// source file.
#include <gtest/gtest.h>

#include <sys/prctl.h>

#include <chrono>
#include <thread>

#include "stop_signal.hpp"

namespace ddpsim::runtime {
namespace {

TEST(InjectedSleep, SleepsAtLeastAsLongAsAskedWithATimerSlackOf1ns) {
  long before = -1, after = -1;
  std::int64_t slept = 0;
  std::thread thread([&] {  // a fresh thread: Linux's default slack, inherited from this one
    before = ::prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
    slept = sleep_unless_stopped(2'000'000);
    after = ::prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
  });
  thread.join();
  EXPECT_GE(slept, 2'000'000);
  EXPECT_GT(before, 1) << "the test expects a default slack to cut";
  EXPECT_EQ(after, 1);
}

TEST(InjectedSleep, ZeroIsNoSleep) { EXPECT_LT(sleep_unless_stopped(0), 1'000'000); }

}  // namespace
}  // namespace ddpsim::runtime
