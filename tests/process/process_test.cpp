// Starting, waiting for and stopping children through ddpsim::process, with real programs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "ddpsim/process/fork_call.hpp"
#include "ddpsim/process/spawn.hpp"
#include "ddpsim/process/wait.hpp"

namespace {

namespace process = ddpsim::process;
using namespace std::chrono_literals;

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

process::Command shell(const std::string& script) {
  process::Command command;
  command.argv = {"sh", "-c", script};
  return command;
}

TEST(WaitStatus, DescribesExitsAndSignals) {
  // Real statuses from real children rather than hand-built bit patterns.
  const auto status_of = [](int how) {
    const pid_t pid = process::fork_call([how] {
      if (how < 0) ::raise(-how);
      return how;
    });
    return process::wait_for(pid);
  };
  EXPECT_EQ(process::describe_wait_status(status_of(3)), "exited with status 3");
  EXPECT_EQ(process::describe_wait_status(status_of(-SIGKILL)), "died with signal 9 (SIGKILL)");
  EXPECT_EQ(process::exit_code(status_of(3)), 3);
  EXPECT_EQ(process::exit_code(status_of(-SIGTERM)), 128 + SIGTERM);
  EXPECT_EQ(process::signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(process::signal_name(SIGRTMIN + 1), "signal " + std::to_string(SIGRTMIN + 1));
}

TEST(Spawn, PipesCarryBothStreamsAndTheEnvironmentIsAddedTo) {
  ::setenv("DDPSIM_PROCESS_TEST_KEPT", "kept", 1);
  process::Command command = shell("echo \"$DDPSIM_PROCESS_TEST_KEPT $ADDED\"; echo oops >&2; exit 4");
  command.env = {{"ADDED", "added"}};
  command.out = process::Output::pipe();
  command.err = process::Output::pipe();
  const process::Child child = process::spawn(command);
  EXPECT_EQ(read_all(child.stdout_fd), "kept added\n");
  EXPECT_EQ(read_all(child.stderr_fd), "oops\n");
  EXPECT_EQ(process::exit_code(process::wait_for(child.pid)), 4);
}

TEST(Spawn, StdinIsEmpty) {
  process::Command command = shell("cat; echo end");
  command.out = process::Output::pipe();
  const process::Child child = process::spawn(command);
  EXPECT_EQ(read_all(child.stdout_fd), "end\n");
  EXPECT_EQ(child.stderr_fd, -1);
  EXPECT_EQ(process::exit_code(process::wait_for(child.pid)), 0);
}

TEST(Spawn, OneFileForBothStreamsKeepsTheirOrderAndIsAppendedTo) {
  const std::string path = ::testing::TempDir() + "process-test-both.log";
  { std::ofstream(path) << "before\n"; }
  process::Command command = shell("echo 1; echo 2 >&2; echo 3");
  command.out = process::Output::append_to(path);
  command.err = process::Output::append_to(path);
  const process::Child child = process::spawn(command);
  EXPECT_EQ(process::exit_code(process::wait_for(child.pid)), 0);
  EXPECT_EQ(file_text(path), "before\n1\n2\n3\n");
  std::remove(path.c_str());
}

TEST(Spawn, AProgramThatCannotRunIsAnErrorNamingIt) {
  process::Command command;
  command.argv = {"/nonexistent/ddpsim-no-such-program"};
  try {
    process::spawn(command);
    FAIL() << "spawn did not throw";
  } catch (const process::SpawnError& error) {
    EXPECT_STREQ(error.what(), "cannot run '/nonexistent/ddpsim-no-such-program': No such file or directory");
  }
  // The failed child was reaped: no zombie is left for a later wait.
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
}

TEST(Spawn, AnOutputFileThatCannotBeOpenedIsAnErrorNamingIt) {
  process::Command command = shell("true");
  command.out = process::Output::append_to("/nonexistent/dir/out.log");
  EXPECT_THROW(
      {
        try {
          process::spawn(command);
        } catch (const process::SpawnError& error) {
          EXPECT_STREQ(error.what(), "cannot open /nonexistent/dir/out.log: No such file or directory");
          throw;
        }
      },
      process::SpawnError);
}

TEST(Spawn, SigpipeIsBackToDefaultInTheChild) {
  const auto previous = ::signal(SIGPIPE, SIG_IGN);
  process::Command command = shell("kill -PIPE $$; echo survived");
  command.out = process::Output::pipe();
  const process::Child child = process::spawn(command);
  const std::string out = read_all(child.stdout_fd);
  const int status = process::wait_for(child.pid);
  ::signal(SIGPIPE, previous);
  EXPECT_EQ(out, "");
  EXPECT_EQ(process::describe_wait_status(status), "died with signal 13 (SIGPIPE)");
}

TEST(StopGroup, StopsWhatTheChildStartedToo) {
  // The child starts a grandchild that ignores SIGTERM and reports its pid; stopping the
  // group must leave neither behind.
  process::Command command = shell("sh -c 'trap \"\" TERM; echo $$; exec sleep 30' & wait");
  command.out = process::Output::pipe();
  command.own_process_group = true;
  const process::Child child = process::spawn(command);
  std::string line;
  char c;
  while (::read(child.stdout_fd, &c, 1) == 1 && c != '\n') line += c;
  ::close(child.stdout_fd);
  const pid_t grandchild = std::stoi(line);
  const auto start = std::chrono::steady_clock::now();
  const int status = process::stop_group(child.pid, 2s);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);  // the leader went at TERM
  EXPECT_EQ(process::describe_wait_status(status), "died with signal 15 (SIGTERM)");
  // The grandchild ignored TERM; the KILL to the group got it. Poll: it is not our child.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ::kill(grandchild, 0) != 0 || file_text("/proc/" + line + "/stat").find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " still running";
}

TEST(WaitUntil, ReportsExitTimeoutAndStopRequest) {
  process::Command quick = shell("exit 7");
  quick.own_process_group = true;
  const process::Waited exited =
      process::wait_until(process::spawn(quick).pid, std::chrono::steady_clock::now() + 10s);
  EXPECT_EQ(exited.how, process::Waited::How::kExited);
  EXPECT_EQ(process::exit_code(exited.wait_status), 7);

  process::Command slow;
  slow.argv = {"sleep", "30"};
  slow.own_process_group = true;
  const auto start = std::chrono::steady_clock::now();
  const process::Waited timed_out = process::wait_until(process::spawn(slow).pid, start + 200ms);
  EXPECT_EQ(timed_out.how, process::Waited::How::kTimedOut);
  EXPECT_EQ(process::exit_code(timed_out.wait_status), 128 + SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);

  int polls = 0;
  const process::Waited stopped = process::wait_until(process::spawn(slow).pid, std::chrono::steady_clock::now() + 30s,
                                                      [&polls] { return ++polls == 3; });
  EXPECT_EQ(stopped.how, process::Waited::How::kStopRequested);
  EXPECT_EQ(polls, 3);
}

TEST(ForkCall, TheChildsReturnValueIsItsExitStatusAndAThrowIsOne) {
  EXPECT_EQ(process::exit_code(process::wait_for(process::fork_call([] { return 5; }))), 5);
  EXPECT_EQ(process::exit_code(process::wait_for(process::fork_call([]() -> int { throw std::runtime_error("x"); }))),
            1);
}

TEST(ForkCall, BufferedOutputIsWrittenOnce) {
  // Output buffered before the fork must not be written by the child as well.
  const std::string path = ::testing::TempDir() + "process-test-fork.log";
  std::FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("parent\n", file);  // stays in the buffer until the flush in fork_call
  const pid_t child = process::fork_call([file] {
    std::fputs("child\n", file);
    return 0;
  });
  EXPECT_EQ(process::exit_code(process::wait_for(child)), 0);
  std::fclose(file);
  EXPECT_EQ(file_text(path), "parent\nchild\n");
  std::remove(path.c_str());
}

}  // namespace
