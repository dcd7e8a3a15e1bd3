// ddp-machine-profile: launched as a job is (ddp-launch, 2 ranks over loopback), it writes a
// profile that reads back with its ladder and co-location; bad flags and a collective that fails
// under it are one line on stderr.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "launched_job.hpp"

namespace ddpsim::runtime::testing {
namespace {

const std::string kTool = DDP_MACHINE_PROFILE_PATH;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int count_lines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  return lines;
}

struct ShellRun {
  int status = -1;
  std::string err;
};

// `script` through sh, its stderr in DIR/err.txt.
ShellRun run_shell(const TempDir& dir, const std::string& script) {
  const std::string err = dir / "err.txt";
  const int raw = std::system(("( " + script + " ) 2>" + shell_quote(err) + " >/dev/null").c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_text(err)};
}

// The tool as every rank of a job launches it, writing `out`, with a small ladder and `flags`.
std::string small_profile_worker(const TempDir& dir, const std::string& out, const std::string& flags) {
  return shell_quote(kTool) + " --out " + shell_quote(out) + " --init " + shell_quote("file://" + (dir / "store")) +
         " --sizes 4K,16K,64K,256K,512K,1M,2M,4M --warmup 1 " + flags;
}

TEST(MachineProfileTool, TwoRanksOnLoopbackWriteAProfileThatReadsBack) {
  TempDir dir;
  const std::string out = dir / "machine.json";
  const JobResult job = launch(small_profile_worker(dir, out, "--overlap-size 256K,1M,2M --repeats 3"), dir, 2, "profile");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  EXPECT_LT(job.seconds, 30) << job.output;
  EXPECT_NE(job.output.find("wrote " + out), std::string::npos) << job.output;
  EXPECT_NE(job.output.find("overlap: the 1 MiB all-reduce at x"), std::string::npos) << job.output;
  EXPECT_NE(job.output.find("sleep resume: "), std::string::npos) << job.output;
  // The summary names the time the effective cores divide by: the slowest rank's.
  EXPECT_NE(job.output.find("ms until the last of 2 rank(s) per host at once ended: "), std::string::npos) << job.output;
  const trace::MachineProfile profile = trace::read_machine_profile(out);
  EXPECT_EQ(profile.world_size, 2);
  EXPECT_EQ(profile.backend, "gloo");
  EXPECT_EQ(profile.device, "cpu");
  EXPECT_EQ(profile.launcher, "torchrun");  // ddp-launch speaks torchrun's variables
  EXPECT_EQ(profile.hosts.size(), 1u);
  EXPECT_EQ(profile.ranks_per_host, 2);
  EXPECT_FALSE(profile.torch_version.empty());
  EXPECT_FALSE(profile.created_utc.empty());
  ASSERT_GE(profile.allreduce.steps.size(), 8u);
  EXPECT_EQ(profile.allreduce.steps.front().bytes, 4096);
  EXPECT_EQ(profile.allreduce.steps.back().bytes, 4 << 20);
  EXPECT_EQ(profile.allreduce.in_flight, 2);
  for (const trace::LadderStep& step : profile.allreduce.steps) {
    EXPECT_EQ(step.one.samples, 9);  // 3 rounds per repeat
    EXPECT_EQ(step.together.samples, 9);
    EXPECT_GT(step.one.median_s, 0);
    EXPECT_GT(step.together.median_s, 0);
  }
  // The fastest 4 MiB all-reduce is slower than the fastest 4 KiB one, whatever the machine. Not the
  // medians: of 9 samples, the 4 KiB median can fall on milliseconds in which the machine stalled
  // the ranks, longer than a 4 MiB all-reduce; a stall only ever adds time, so the minima keep order.
  EXPECT_GT(profile.allreduce.steps.back().one.min_s, profile.allreduce.steps.front().one.min_s);
  EXPECT_GT(profile.allreduce.in_flight_gain, 0);
  EXPECT_LE(profile.allreduce.in_flight_gain, 2);
  EXPECT_EQ(profile.compute.alone.samples, 6);  // 2 ranks x 3 repeats
  EXPECT_EQ(profile.compute.together.samples, 6);
  EXPECT_GT(profile.compute.effective_cores, 0);
  EXPECT_LE(profile.compute.effective_cores, 2);
  EXPECT_EQ(profile.version, trace::kMachineProfileVersion);
  ASSERT_TRUE(profile.overlap.has_value());
  EXPECT_EQ(profile.overlap->bytes, 1 << 20);
  EXPECT_EQ(profile.overlap->allreduce_busy.samples, 9);  // the slowest rank's, 3 rounds per repeat
  EXPECT_EQ(profile.overlap->compute_busy.samples, 18);   // every rank's
  EXPECT_EQ(profile.overlap->compute_quiet.samples, 18);
  EXPECT_GT(profile.overlap->allreduce_fraction, 0);
  EXPECT_LE(profile.overlap->allreduce_fraction, 1);
  EXPECT_GT(profile.overlap->compute_fraction, 0);
  EXPECT_LE(profile.overlap->compute_fraction, 1);
  // Every --overlap-size in order; the middle one is the overlap's own.
  ASSERT_EQ(profile.overlap->by_size.size(), 3u);
  EXPECT_EQ(profile.overlap->by_size[0].bytes, 256 << 10);
  EXPECT_EQ(profile.overlap->by_size[1].bytes, 1 << 20);
  EXPECT_EQ(profile.overlap->by_size[1].allreduce_busy.median_s, profile.overlap->allreduce_busy.median_s);
  EXPECT_EQ(profile.overlap->by_size[2].bytes, 2 << 20);
  EXPECT_EQ(profile.overlap->by_size[2].allreduce_busy.samples, 9);
  EXPECT_NE(job.output.find("overlap by size (the all-reduce's speed while the ranks compute): 0.25 MiB x"),
            std::string::npos)
      << job.output;
  ASSERT_TRUE(profile.sleep.has_value());
  EXPECT_EQ(profile.sleep->slept.samples, 2 * 3 * 5);  // 2 ranks x 3 repeats x 5 sleeps
  EXPECT_GE(profile.sleep->slept.median_s, profile.sleep->requested_s);  // a sleep never ends early
  EXPECT_GE(profile.sleep->resume_cost_s, 0);
  EXPECT_TRUE(profile.compute.by_ranks.empty());  // two ranks a host: the top-level fields say it all
}

// Three ranks on one host: co-location at 2 ranks at once too, which a replay of a 2-rank trace
// at 3 ranks needs (its compute is stretched by s(3) / s(2)).
TEST(MachineProfileTool, ThreeRanksAHostTimeCoLocationAtTwoAndThree) {
  TempDir dir;
  const std::string out = dir / "machine.json";
  const JobResult job = launch(small_profile_worker(dir, out, "--overlap-size 1M --repeats 2"), dir, 3, "profile");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  EXPECT_NE(job.output.find("effective cores by ranks a host at once: 2="), std::string::npos) << job.output;
  const trace::MachineProfile profile = trace::read_machine_profile(out);
  EXPECT_EQ(profile.ranks_per_host, 3);
  ASSERT_EQ(profile.compute.by_ranks.size(), 2u);
  EXPECT_EQ(profile.compute.by_ranks[0].ranks, 2);
  EXPECT_EQ(profile.compute.by_ranks[0].together.samples, 2 * 2);  // the 2 computing ranks x 2 repeats
  EXPECT_GT(profile.compute.by_ranks[0].effective_cores, 0);
  EXPECT_LE(profile.compute.by_ranks[0].effective_cores, 2);
  EXPECT_EQ(profile.compute.by_ranks[1].ranks, 3);
  EXPECT_EQ(profile.compute.by_ranks[1].together.samples, 3 * 2);
  EXPECT_EQ(profile.compute.by_ranks[1].effective_cores, profile.compute.effective_cores);
  EXPECT_EQ(profile.compute.alone.samples, 3 * 2);
  // The host's throughput: its ranks' work over the time until the last of them ended.
  for (const trace::ColocationStep& step : profile.compute.by_ranks) {
    ASSERT_TRUE(step.slowest.has_value()) << step.ranks;
    EXPECT_EQ(step.slowest->samples, 2) << step.ranks;  // one host x 2 repeats
    EXPECT_GE(step.slowest->max_s, step.together.max_s) << step.ranks;
    EXPECT_DOUBLE_EQ(step.effective_cores,
                     std::min<double>(step.ranks * profile.compute.alone.median_s / step.slowest->median_s, step.ranks));
  }
}

TEST(MachineProfileTool, BadFlagsAreOneLine) {
  TempDir dir;
  const std::string out = shell_quote(dir / "m.json");
  const std::string tool = shell_quote(kTool);
  const std::pair<std::string, std::string> rows[] = {
      {"--sizes 3", "ddp-machine-profile: --sizes: expected sizes in bytes (4096, or 4K, 1M, 1G), each a multiple of 4 "
                    "and above the one before, got '3'"},
      {"--sizes 8K,4K", "ddp-machine-profile: --sizes: expected each size above the one before, got 4096 after 8192"},
      {"--sizes 4K,,8K", "ddp-machine-profile: --sizes: expected sizes in bytes"},
      {"--sizes 1X", "ddp-machine-profile: --sizes: expected sizes in bytes"},
      {"--overlap-size 3", "ddp-machine-profile: --overlap-size: expected sizes in bytes (4096, or 4K, 1M, 1G), each a "
                           "multiple of 4 and above the one before, got '3'"},
      {"--overlap-size 4M,1M", "ddp-machine-profile: --overlap-size: expected each size above the one before, got "
                               "1048576 after 4194304"},
      {"--in-flight 1", "ddp-machine-profile: --in-flight: expected an integer in [2, 64], got '1'"},
      {"--repeats 0", "ddp-machine-profile: --repeats: expected an integer in [1, 100000], got '0'"},
      {"--repeats many", "ddp-machine-profile: --repeats: expected an integer in [1, 100000], got 'many'"},
      {"--warmup -1", "ddp-machine-profile: --warmup: expected an integer in [0, 100000], got '-1'"},
      {"--threads 0", "ddp-machine-profile: --threads: expected an integer in [1, 1024], got '0'"},
      {"--timeout 0", "ddp-machine-profile: --timeout: expected an integer in [1, 86400], got '0'"},
      {"--backend mpi", "ddp-machine-profile: --backend: expected gloo or nccl, got 'mpi'"},
      {"--device tpu", "ddp-machine-profile: --device: expected auto, cpu or cuda, got 'tpu'"},
      {"--backend nccl --device cpu", "ddp-machine-profile: --device cpu: expected cuda (or auto) with --backend nccl"},
      {"--init foo://x", "ddp-machine-profile: --init "},
  };
  for (const auto& [flags, error] : rows) {
    SCOPED_TRACE(flags);
    // As rank 0 of 2, so that the flags are what is refused, not the lone process.
    const ShellRun run = run_shell(dir, "RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 " + tool + " --out " + out +
                                       " " + flags);
    EXPECT_EQ(run.status, 2) << run.err;
    EXPECT_EQ(count_lines(run.err), 1) << run.err;
    EXPECT_EQ(run.err.rfind(error, 0), 0u) << run.err;
  }
  const ShellRun no_out = run_shell(dir, tool);
  EXPECT_EQ(no_out.status, 2);
  EXPECT_EQ(count_lines(no_out.err), 1) << no_out.err;
  EXPECT_NE(no_out.err.find("--out"), std::string::npos) << no_out.err;
  const ShellRun bad_out = run_shell(dir, "RANK=0 WORLD_SIZE=2 " + tool + " --out " + shell_quote(dir / "no/such/m.json"));
  EXPECT_EQ(bad_out.status, 2);
  EXPECT_EQ(bad_out.err, "ddp-machine-profile: --out " + (dir / "no/such/m.json") +
                             ": expected a file in an existing directory\n");
  const ShellRun alone = run_shell(dir, tool + " --out " + out);
  EXPECT_EQ(alone.status, 2);
  EXPECT_EQ(count_lines(alone.err), 1) << alone.err;
  EXPECT_EQ(alone.err.rfind("ddp-machine-profile: expected at least 2 ranks to all-reduce between, got 1", 0), 0u)
      << alone.err;
}

TEST(MachineProfileTool, APeerThatDiesFailsTheCollectiveInOneLine) {
  TempDir dir;
  const std::string common = " --out " + shell_quote(dir / "m.json") + " --init " +
                             shell_quote("file://" + (dir / "store")) +
                             " --sizes 16M --repeats 100000 --warmup 0 --timeout 20 --quiet";
  const std::string env = "WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 ";
  // Rank 1 is killed once both are measuring; rank 0 must say which collective failed, and exit 1.
  const ShellRun run = run_shell(dir, env + "RANK=1 LOCAL_RANK=1 " + shell_quote(kTool) + common + " 2>/dev/null & peer=$!; " +
                                     env + "RANK=0 LOCAL_RANK=0 " + shell_quote(kTool) + common + " & me=$!; " +
                                     "sleep 4; kill -9 $peer; wait $me");
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(count_lines(run.err), 1) << run.err;
  EXPECT_EQ(run.err.rfind("ddp-machine-profile: rank 0: ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find(" failed: "), std::string::npos) << run.err;
  EXPECT_FALSE(std::ifstream(dir / "m.json").good());
}

}  // namespace
}  // namespace ddpsim::runtime::testing
