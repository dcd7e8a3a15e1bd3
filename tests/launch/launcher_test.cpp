// ddp-launch with real worker processes (/bin/sh scripts): environment, output prefixing,
// failure propagation, signal forwarding, and command-line errors.
#include <gtest/gtest.h>
#include <signal.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "run_process.hpp"

namespace {

using ddpsim::launch::testing::lines_of;
using ddpsim::launch::testing::ProcessResult;
using ddpsim::launch::testing::run_process;
using ddpsim::launch::testing::RunOptions;

std::vector<std::string> launch_args(std::vector<std::string> flags, const std::string& script) {
  std::vector<std::string> argv{DDP_LAUNCH_PATH};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--", "/bin/sh", "-c", script});
  return argv;
}

ProcessResult launch(std::vector<std::string> flags, const std::string& script, const RunOptions& options = {}) {
  return run_process(launch_args(std::move(flags), script), options);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

TEST(Launcher, SetsTorchrunVariablesPerRank) {
  const ProcessResult result = launch(
      {"--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "3", "--master-addr", "10.1.2.3", "--master-port",
       "12345"},
      "echo \"RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE "
      "GROUP_RANK=$GROUP_RANK GROUP_WORLD_SIZE=$GROUP_WORLD_SIZE MASTER=$MASTER_ADDR:$MASTER_PORT\"");
  ASSERT_EQ(result.exit_code(), 0) << result.err;
  std::vector<std::string> lines = lines_of(result.out);
  std::sort(lines.begin(), lines.end());
  ASSERT_EQ(lines.size(), 3u) << result.out;
  for (int local_rank = 0; local_rank < 3; ++local_rank) {
    const int rank = 3 + local_rank;  // node 1 of 2, three workers per node
    EXPECT_EQ(lines[static_cast<std::size_t>(local_rank)],
              "[rank " + std::to_string(rank) + "] RANK=" + std::to_string(rank) +
                  " LOCAL_RANK=" + std::to_string(local_rank) +
                  " WORLD_SIZE=6 LOCAL_WORLD_SIZE=3 GROUP_RANK=1 GROUP_WORLD_SIZE=2 MASTER=10.1.2.3:12345");
  }
  EXPECT_EQ(result.err, "");
}

TEST(Launcher, PicksOneFreePortForAllRanksOnOneNode) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--nproc-per-node", "2", "--master-port", "0"},
        std::vector<std::string>{"--nproc-per-node", "2"}}) {
    const ProcessResult result = launch(flags, "echo \"$MASTER_ADDR $MASTER_PORT\"");
    ASSERT_EQ(result.exit_code(), 0) << result.err;
    const std::vector<std::string> lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 2u);
    const std::string port0 = lines[0].substr(lines[0].rfind(' ') + 1);
    const std::string port1 = lines[1].substr(lines[1].rfind(' ') + 1);
    EXPECT_EQ(port0, port1);
    EXPECT_GT(std::stoi(port0), 0);
    EXPECT_LE(std::stoi(port0), 65535);
    EXPECT_TRUE(contains(lines[0], "] 127.0.0.1 "));
  }
}

TEST(Launcher, PrefixesEveryLineAndKeepsPartialLines) {
  // "par" and "tial" arrive in separate writes; the line without a final newline still counts.
  const ProcessResult result = launch({"--nproc-per-node", "2"},
                                      "printf 'one\\ntwo\\n'; printf 'err-line\\n' >&2; printf 'par'; sleep 0.2; "
                                      "printf 'tial'");
  ASSERT_EQ(result.exit_code(), 0) << result.err;
  for (const std::string& line : lines_of(result.out)) EXPECT_EQ(line.rfind("[rank ", 0), 0u) << line;
  for (const std::string rank : {"0", "1"}) {
    const std::string prefix = "[rank " + rank + "] ";
    EXPECT_TRUE(contains(result.out, prefix + "one\n" + prefix + "two\n")) << result.out;
    EXPECT_TRUE(contains(result.out, prefix + "partial\n")) << result.out;
    EXPECT_TRUE(contains(result.err, prefix + "err-line\n")) << result.err;
  }
  EXPECT_FALSE(contains(result.out, "err-line"));
  EXPECT_EQ(lines_of(result.out).size(), 6u);
  EXPECT_EQ(result.out.back(), '\n');
}

TEST(Launcher, WorkerExitingNonZeroStopsTheOthers) {
  // Ranks 0 and 2 would sleep a minute; rank 1's failure must end them within seconds.
  const ProcessResult result = launch({"--nproc-per-node", "3"},
                                      "if [ \"$RANK\" = 1 ]; then sleep 0.3; echo last-words; exit 3; fi; sleep 60");
  EXPECT_EQ(result.exit_code(), 1);
  EXPECT_LT(result.elapsed.count(), 10.0);
  EXPECT_TRUE(contains(result.out, "[rank 1] last-words\n"));
  EXPECT_TRUE(contains(result.err, "ddp-launch: rank 1 (pid ")) << result.err;
  EXPECT_TRUE(contains(result.err, ") exited with status 3; stopped the other workers\n")) << result.err;
  EXPECT_EQ(lines_of(result.err).size(), 1u) << result.err;
}

TEST(Launcher, WorkerIgnoringSigtermIsKilledAfterTheGracePeriod) {
  // Rank 0 ignores SIGTERM (and so does its sleep): only the SIGKILL after 1 s can end it.
  const ProcessResult result =
      launch({"--nproc-per-node", "2", "--grace-period", "1"},
             "if [ \"$RANK\" = 1 ]; then sleep 0.2; exit 5; fi; trap '' TERM; sleep 60");
  EXPECT_EQ(result.exit_code(), 1);
  EXPECT_GE(result.elapsed.count(), 1.0);
  EXPECT_LT(result.elapsed.count(), 10.0);
  EXPECT_TRUE(contains(result.err, "rank 1 (pid ")) << result.err;
  EXPECT_TRUE(contains(result.err, "exited with status 5")) << result.err;
}

TEST(Launcher, WorkerKilledBySignalIsNamed) {
  const ProcessResult result =
      launch({"--nproc-per-node", "2"}, "if [ \"$RANK\" = 1 ]; then sleep 0.2; kill -9 $$; fi; sleep 60");
  EXPECT_EQ(result.exit_code(), 1);
  EXPECT_LT(result.elapsed.count(), 10.0);
  EXPECT_TRUE(contains(result.err, "ddp-launch: rank 1 (pid ")) << result.err;
  EXPECT_TRUE(contains(result.err, "died with signal 9 (SIGKILL); stopped the other workers")) << result.err;
}

TEST(Launcher, ExitsZeroOnlyWhenEveryWorkerDoes) {
  EXPECT_EQ(launch({"--nproc-per-node", "3"}, "exit 0").exit_code(), 0);
  // The last rank fails after the others finished successfully: still a failure.
  const ProcessResult result =
      launch({"--nproc-per-node", "3"}, "if [ \"$RANK\" = 2 ]; then sleep 0.3; exit 9; fi; exit 0");
  EXPECT_EQ(result.exit_code(), 1);
  EXPECT_TRUE(contains(result.err, "rank 2 (pid ")) << result.err;
  EXPECT_TRUE(contains(result.err, "exited with status 9\n")) << result.err;  // nobody left to stop
}

TEST(Launcher, ForwardsSigtermToTheWorkers) {
  RunOptions options;
  bool sent = false;
  options.on_stdout = [&sent](const std::string& out, pid_t launcher) {
    if (!sent && count_of(out, "ready\n") == 2) {
      kill(launcher, SIGTERM);
      sent = true;
    }
  };
  const ProcessResult result =
      launch({"--nproc-per-node", "2"},
             "trap 'echo got-term; exit 0' TERM; echo ready; while :; do sleep 0.1; done", options);
  ASSERT_TRUE(sent) << result.out << result.err;
  EXPECT_EQ(result.term_signal(), SIGTERM) << result.err;  // ends the way its workers were told to
  EXPECT_TRUE(contains(result.out, "[rank 0] got-term\n")) << result.out;
  EXPECT_TRUE(contains(result.out, "[rank 1] got-term\n")) << result.out;
  EXPECT_TRUE(contains(result.err, "ddp-launch: received SIGTERM; forwarding it to 2 running workers")) << result.err;
  EXPECT_LT(result.elapsed.count(), 10.0);
}

TEST(Launcher, ForwardsSigintAndKillsStubbornWorkersAfterTheGracePeriod) {
  RunOptions options;
  bool sent = false;
  options.on_stdout = [&sent](const std::string& out, pid_t launcher) {
    if (!sent && count_of(out, "ready\n") == 2) {
      kill(launcher, SIGINT);
      sent = true;
    }
  };
  // Rank 0 reports SIGINT and exits; rank 1 ignores it and must be killed.
  const ProcessResult result = launch({"--nproc-per-node", "2", "--grace-period", "0.5"},
                                      "if [ \"$RANK\" = 0 ]; then trap 'echo got-int; exit 0' INT; else trap '' "
                                      "INT; fi; echo ready; while :; do sleep 0.1; done",
                                      options);
  ASSERT_TRUE(sent);
  EXPECT_EQ(result.term_signal(), SIGINT);
  EXPECT_TRUE(contains(result.out, "[rank 0] got-int\n")) << result.out;
  EXPECT_GE(result.elapsed.count(), 0.5);
  EXPECT_LT(result.elapsed.count(), 10.0);
}

TEST(Launcher, WorkersDetectTheirPlaceFromItsVariables) {
  // End to end with the detection ddp-train uses; SLURM variables in the launcher's
  // environment must not confuse the workers.
  const ProcessResult result = run_process({"/usr/bin/env", "SLURM_PROCID=7", "SLURM_NTASKS=9", DDP_LAUNCH_PATH,
                                            "--nproc-per-node", "2", "--master-port", "23456", "--", DDP_ENV_PATH});
  ASSERT_EQ(result.exit_code(), 0) << result.err;
  EXPECT_TRUE(contains(result.out, "[rank 0] rank 0/2 (local 0/2, node 0) master 127.0.0.1:23456 from torchrun\n"))
      << result.out;
  EXPECT_TRUE(contains(result.out, "[rank 1] rank 1/2 (local 1/2, node 0) master 127.0.0.1:23456 from torchrun\n"))
      << result.out;
}

TEST(DdpEnv, ReadsAnSrunEnvironmentAndRejectsMalformedOnes) {
  // What srun exports to task 5 of 8 (2 nodes x 4) on the second node.
  const ProcessResult srun_task = run_process(
      {"/usr/bin/env", "-i", "SLURM_PROCID=5", "SLURM_NTASKS=8", "SLURM_LOCALID=1", "SLURM_NODEID=1",
       "SLURM_STEP_TASKS_PER_NODE=4(x2)", "SLURM_STEP_NODELIST=cn[0012-0013]", "MASTER_PORT=31000", DDP_ENV_PATH});
  ASSERT_EQ(srun_task.exit_code(), 0) << srun_task.err;
  EXPECT_EQ(srun_task.out, "rank 5/8 (local 1/4, node 1) master cn0012:31000 from slurm\n");

  const ProcessResult malformed = run_process({"/usr/bin/env", "-i", "RANK=abc", "WORLD_SIZE=2", DDP_ENV_PATH});
  EXPECT_EQ(malformed.exit_code(), 2);
  EXPECT_EQ(malformed.err, "ddp-env: RANK=abc: expected an integer\n");
}

// True once `pid` has ended (gone, or a zombie its new parent has not reaped yet).
bool has_ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, command, state;
  if (!(stat >> pid_field >> command >> state)) return true;
  return state == "Z" || state == "X";
}

TEST(Launcher, WorkersDieWithAKilledLauncher) {
  // SIGKILL cannot be forwarded: the workers must not outlive the launcher (PR_SET_PDEATHSIG).
  RunOptions options;
  options.on_stdout = [](const std::string& out, pid_t launcher) {
    if (count_of(out, "pid ") == 2) kill(launcher, SIGKILL);
  };
  const ProcessResult result = launch({"--nproc-per-node", "2"}, "echo pid $$; exec sleep 60", options);
  ASSERT_EQ(result.term_signal(), SIGKILL);
  std::vector<pid_t> workers;
  for (const std::string& line : lines_of(result.out)) workers.push_back(std::stoi(line.substr(line.rfind(' ') + 1)));
  ASSERT_EQ(workers.size(), 2u) << result.out;
  for (const pid_t worker : workers) {
    for (int tries = 0; tries < 100 && !has_ended(worker); ++tries) usleep(20000);
    EXPECT_TRUE(has_ended(worker)) << "worker " << worker << " outlived the launcher";
  }
  EXPECT_LT(result.elapsed.count(), 10.0);
}

struct BadCommandLine {
  std::string name;
  std::vector<std::string> args;
  std::string expected_in_error;
};

class LauncherUsage : public ::testing::TestWithParam<BadCommandLine> {};

TEST_P(LauncherUsage, RejectsWithOneLineAndStatus2) {
  std::vector<std::string> argv{DDP_LAUNCH_PATH};
  argv.insert(argv.end(), GetParam().args.begin(), GetParam().args.end());
  const ProcessResult result = run_process(argv);
  EXPECT_EQ(result.exit_code(), 2) << result.err;
  EXPECT_EQ(result.out, "");
  ASSERT_EQ(lines_of(result.err).size(), 1u) << result.err;
  EXPECT_EQ(result.err.rfind("ddp-launch: ", 0), 0u) << result.err;
  EXPECT_TRUE(contains(result.err, GetParam().expected_in_error)) << result.err;
}

INSTANTIATE_TEST_SUITE_P(
    BadFlags, LauncherUsage,
    ::testing::Values(BadCommandLine{"NprocNotANumber", {"--nproc-per-node", "abc", "--", "true"}, "--nproc-per-node"},
                      BadCommandLine{"NprocZero", {"--nproc-per-node", "0", "--", "true"}, "--nproc-per-node"},
                      BadCommandLine{"UnknownOption", {"--bogus", "--", "true"}, "--bogus"},
                      BadCommandLine{"NoProgram", {"--nproc-per-node", "2"}, "no program"},
                      BadCommandLine{"NodeRankOutOfRange", {"--nnodes", "2", "--node-rank", "2", "--", "true"},
                                     "--node-rank 2"},
                      BadCommandLine{"FreePortOnSeveralNodes", {"--nnodes", "2", "--master-port", "0", "--", "true"},
                                     "--master-port 0"},
                      BadCommandLine{"PortOutOfRange", {"--master-port", "70000", "--", "true"}, "--master-port"},
                      BadCommandLine{"MissingProgram", {"--", "/nonexistent/worker"},
                                     "cannot run '/nonexistent/worker'"}),
    [](const ::testing::TestParamInfo<BadCommandLine>& info) { return info.param.name; });

}  // namespace
