// Splitting a worker's output stream into prefixed lines.
#include "ddpsim/launch/line_prefixer.hpp"

#include <gtest/gtest.h>

#include "ddpsim/launch/supervisor.hpp"

#include <signal.h>
#include <sys/wait.h>

namespace {

using ddpsim::launch::LinePrefixer;

TEST(LinePrefixer, PrefixesCompleteLines) {
  LinePrefixer prefixer("[rank 2] ");
  EXPECT_EQ(prefixer.feed("a\nb\n"), "[rank 2] a\n[rank 2] b\n");
  EXPECT_EQ(prefixer.finish(), "");
}

TEST(LinePrefixer, KeepsPartialLinesAcrossChunks) {
  LinePrefixer prefixer("[rank 0] ");
  EXPECT_EQ(prefixer.feed("hel"), "");
  EXPECT_EQ(prefixer.feed("lo\nwor"), "[rank 0] hello\n");
  EXPECT_EQ(prefixer.feed("ld"), "");
  EXPECT_EQ(prefixer.finish(), "[rank 0] world\n");
  EXPECT_EQ(prefixer.finish(), "");
}

TEST(LinePrefixer, KeepsEmptyLines) {
  LinePrefixer prefixer("> ");
  EXPECT_EQ(prefixer.feed("\n\nx\n"), "> \n> \n> x\n");
}

TEST(LinePrefixer, SplitsOverlongPartialLines) {
  LinePrefixer prefixer("p ", 4);
  EXPECT_EQ(prefixer.feed("abcdefghij"), "p abcd\np efgh\n");
  EXPECT_EQ(prefixer.feed("\n"), "p ij\n");
}

TEST(WaitStatus, DescribesExitsAndSignals) {
  // Real statuses from real children rather than hand-built bit patterns.
  const auto status_of = [](int how) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (how < 0) raise(-how);
      _exit(how);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  };
  EXPECT_EQ(ddpsim::launch::describe_wait_status(status_of(3)), "exited with status 3");
  EXPECT_EQ(ddpsim::launch::describe_wait_status(status_of(-SIGKILL)), "died with signal 9 (SIGKILL)");
  EXPECT_EQ(ddpsim::launch::signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(ddpsim::launch::signal_name(SIGRTMIN + 1), "signal " + std::to_string(SIGRTMIN + 1));
}

}  // namespace
