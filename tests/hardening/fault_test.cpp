// Issue #19: faults mid-run.
//   - ddp-experiment killed (SIGKILL) during a job and during a replay: `run` again resumes,
//     no finished run is run again and no finished row is lost; also when the kill cut
//     summary.csv in the middle of a row.
//   - a trace folder on a filesystem that fills up (a 16 KiB tmpfs mounted by the test; root
//     only, skipped elsewhere): ddp-train stops with one line naming the file, every iteration
//     written before stays readable; ddp-trace export leaves no half-written file.
//   - rank 0 killed while it writes a checkpoint: the previous checkpoint still loads.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ddpsim/trace/io.hpp"
#include "run_process.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

using ddpsim::launch::testing::within;
using ddpsim::launch::testing::lines_of;
using ddpsim::launch::testing::run_process;
using ddpsim::launch::testing::RunOptions;
using ddpsim::trace::testing::read_text;
using ddpsim::trace::testing::TempDir;
using ddpsim::trace::testing::write_text;

std::vector<std::string> file_lines(const std::string& path) {
  return fs::exists(path) ? lines_of(read_text(path)) : std::vector<std::string>{};
}

// ---------------------------------------------------------------------------------------------
// Stand-in tools with the real command lines (as in tests/experiments/experiment_runner_test.cpp);
// the real ddp-experiment runs them. A file `hang-launch` (or `hang-replay`) holding N makes
// the N-th launch (replay) write `hanging` and sleep, so the test can kill ddp-experiment there.
const char* kLaunch = R"SH(#!/bin/bash
here="$(dirname "$0")"; dir=""; prev=""
for a in "$@"; do [ "$prev" = "--trace-dir" ] && dir="$a"; prev="$a"; done
echo "$dir" >> "$here/launch.log"
mkdir -p "$dir"; echo measured > "$dir/source"
if [ -f "$here/hang-launch" ] && [ "$(wc -l < "$here/launch.log")" -eq "$(cat "$here/hang-launch")" ]; then
  echo $$ > "$here/hanging"; exec sleep 60 </dev/null >/dev/null 2>&1
fi
)SH";
const char* kTrace = R"SH(#!/bin/bash
dir="$2"
[ -f "$dir/source" ] || { echo "ddp-trace: $dir: expected a trace directory" >&2; exit 2; }
t=0.5; grep -q predicted "$dir/source" && t=0.4
echo "{\"world_size\": 2, \"median_iteration_s\": $t, \"iterations\": [{}, {}], \"failures\": []}"
)SH";
const char* kSim = R"SH(#!/bin/bash
here="$(dirname "$0")"
case "$1" in
  calibrate) echo '{}' > "$4" ;;
  replay) echo "$4" >> "$here/replay.log"
          if [ -f "$here/hang-replay" ] && [ "$(wc -l < "$here/replay.log")" -eq "$(cat "$here/hang-replay")" ]; then
            echo $$ > "$here/hanging"; exec sleep 60 </dev/null >/dev/null 2>&1
          fi
          mkdir -p "$4"; echo predicted > "$4/source"
          # ddp-experiment reads the replay's report (--json FILE), as from the real ddp-sim.
          [ "$5" = "--json" ] && echo '{"predicted": {"world_size": 2, "median_iteration_s": 0.4, "iterations": [{}, {}], "failures": []}}' > "$6" ;;
esac
)SH";
// 2 points x 2 repetitions, each run replayed as measured and at W = 8: 4 runs, 8 rows.
const char* kSpec = R"(
[experiment]
name = "caps"
repetitions = 2
[workload]
model = "mlp"
[grid]
bucket_cap_mb = [1, 5]
[predict]
world_sizes = [8]
)";

class ExperimentKilled : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = tmp_ / "bin";
    fs::create_directories(bin_);
    for (const auto& [name, text] : {std::pair{"ddp-launch", kLaunch}, {"ddp-trace", kTrace}, {"ddp-sim", kSim}}) {
      write_text(bin_ + "/" + name, text);
      ::chmod((bin_ + "/" + name).c_str(), 0755);
    }
    write_text(tmp_ / "caps.toml", kSpec);
    summary_ = tmp_ / "results/caps/summary.csv";
  }

  // Runs ddp-experiment; with `kill_when_hanging`, SIGKILLs it (and the hanging stand-in) as
  // soon as a stand-in hangs.
  ddpsim::launch::testing::ProcessResult run(bool kill_when_hanging, const std::string& flag = "") {
    RunOptions options;
    options.timeout = std::chrono::seconds(60);
    const std::string hanging = bin_ + "/hanging";
    if (kill_when_hanging) {
      options.on_poll = [hanging, done = false](pid_t pid) mutable {
        if (done || !fs::exists(hanging)) return;
        const std::string text = read_text(hanging);
        if (text.empty() || text.back() != '\n') return;  // not written whole yet
        ::kill(pid, SIGKILL);
        ::kill(std::stoi(text), SIGKILL);
        done = true;
      };
    }
    std::vector<std::string> argv = {DDP_EXPERIMENT_BIN, "run", tmp_ / "caps.toml", "--out", tmp_ / "results",
                                     "--bin-dir", bin_};
    if (!flag.empty()) argv.push_back(flag);
    auto result = run_process(argv, options);
    fs::remove(hanging);
    return result;
  }

  // Rows of summary.csv but the header.
  std::vector<std::string> rows() const {
    auto lines = file_lines(summary_);
    if (!lines.empty()) lines.erase(lines.begin());
    return lines;
  }

  void expect_resumes_to_all_ok(const std::vector<std::string>& rows_before, std::size_t launches_before,
                                std::size_t runs_done) {
    const auto second = run(false);
    EXPECT_EQ(second.exit_code(), 0) << second.err;
    const auto after = rows();
    ASSERT_EQ(after.size(), 8u) << read_text(summary_);
    for (const auto& row : after) EXPECT_NE(row.find(",ok,"), std::string::npos) << row;
    // No finished row lost or changed: the rows before the kill come first, as they were.
    for (std::size_t i = 0; i < rows_before.size(); ++i) EXPECT_EQ(after[i], rows_before[i]);
    // No finished run measured again: one launch per run that was not finished.
    EXPECT_EQ(file_lines(bin_ + "/launch.log").size(), launches_before + (4 - runs_done));
  }

  TempDir tmp_;
  std::string bin_, summary_;
};

TEST_F(ExperimentKilled, DuringAJobThenRunResumes) {
  write_text(bin_ + "/hang-launch", "3\n");  // the third run's job
  const auto first = run(true);
  ASSERT_EQ(first.term_signal(), SIGKILL) << first.err;
  const auto before = rows();
  ASSERT_EQ(before.size(), 4u) << "two runs of two rows each were finished";
  fs::remove(bin_ + "/hang-launch");
  expect_resumes_to_all_ok(before, 3, 2);
}

TEST_F(ExperimentKilled, DuringAReplayThenRunResumes) {
  write_text(bin_ + "/hang-replay", "3\n");  // the second run's first replay
  const auto first = run(true);
  ASSERT_EQ(first.term_signal(), SIGKILL) << first.err;
  const auto before = rows();
  ASSERT_EQ(before.size(), 2u) << "one run was finished";
  fs::remove(bin_ + "/hang-replay");
  expect_resumes_to_all_ok(before, 2, 1);
}

TEST_F(ExperimentKilled, WhileAppendingARowThenRunResumes) {
  write_text(bin_ + "/hang-launch", "3\n");
  ASSERT_EQ(run(true).term_signal(), SIGKILL);
  fs::remove(bin_ + "/hang-launch");
  // As if the kill had come in the middle of writing the second run's first row.
  auto before = rows();
  ASSERT_EQ(before.size(), 4u);
  const std::string text = read_text(summary_);
  const std::size_t cut = text.find(before[2]) + before[2].size() / 2;
  fs::resize_file(summary_, cut);
  before.resize(2);
  expect_resumes_to_all_ok(before, 3, 1);
}

// Killed while predicting again (--repredict): every run's measured row is still there, so a
// plain run predicts what is missing without measuring anything again.
TEST_F(ExperimentKilled, DuringARepredictThenRunResumes) {
  ASSERT_EQ(run(false).exit_code(), 0);
  ASSERT_EQ(rows().size(), 8u);
  const std::size_t replays = file_lines(bin_ + "/replay.log").size();
  write_text(bin_ + "/hang-replay", std::to_string(replays + 3) + "\n");  // the second run's first
  ASSERT_EQ(run(true, "--repredict").term_signal(), SIGKILL);
  fs::remove(bin_ + "/hang-replay");
  int measured = 0;
  for (const auto& row : rows()) measured += row.find(",,reconstruction,") != std::string::npos;
  EXPECT_EQ(measured, 4) << read_text(summary_);
  const auto second = run(false);
  EXPECT_EQ(second.exit_code(), 0) << second.err;
  const auto after = rows();
  ASSERT_EQ(after.size(), 8u) << read_text(summary_);
  for (const auto& row : after) EXPECT_NE(row.find(",ok,"), std::string::npos) << row;
  EXPECT_EQ(file_lines(bin_ + "/launch.log").size(), 4u);  // nothing measured again
}

// ---------------------------------------------------------------------------------------------
// A small tmpfs, unmounted at the end; skipped where mounting is not allowed.
class SmallFilesystem {
 public:
  explicit SmallFilesystem(const std::string& dir, const std::string& size) : dir_(dir) {
    fs::create_directories(dir_);
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~SmallFilesystem() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  std::string dir_;
  bool mounted_ = false;
};

#ifdef DDP_TRAIN_BIN
TEST(DiskFull, TrainingStopsOnOneLineAndKeepsEveryWrittenIteration) {
  TempDir tmp;
  SmallFilesystem small(tmp / "small", "16k");
  if (!small.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  const std::string trace_dir = tmp / "small/trace";
  const auto result = run_process({DDP_TRAIN_BIN, "--quiet", "--model", "mlp", "--width", "8", "--depth",
                                   "1", "--dataset-size", "64", "--batch-size", "4", "--iterations", "2000",
                                   "--trace-dir", trace_dir},
                                  within(60));
  EXPECT_EQ(result.exit_code(), 1) << result.err;
  ASSERT_EQ(lines_of(result.err).size(), 1u) << result.err;
  EXPECT_NE(result.err.find(trace_dir + "/rank-0.events.csv:0: expected room to write the trace, got No "
                                        "space left on device"),
            std::string::npos)
      << result.err;
  // What was written reads back: whole iterations, at most one cut line at the end.
  const auto trace = ddpsim::trace::read_trace(trace_dir);
  const auto complete = trace.ranks.at(0).complete_iterations();
  EXPECT_GE(complete.size(), 5u);
  EXPECT_LT(complete.size(), 2000u);
  for (std::size_t i = 0; i < complete.size(); ++i) EXPECT_EQ(complete[i], static_cast<std::int64_t>(i));
  EXPECT_FALSE(fs::exists(trace_dir + "/.rank-0.meta.json.tmp"));
}
#endif

TEST(DiskFull, ExportLeavesNoHalfWrittenFile) {
  TempDir tmp;
  SmallFilesystem small(tmp / "small", "8k");
  if (!small.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  const std::string trace_dir = tmp / "trace";
  ddpsim::trace::write_trace(trace_dir, ddpsim::trace::testing::example_trace(2, 40));
  const std::string out = tmp / "small/trace.json";
  const auto result = run_process({DDP_TRACE_BIN, "export", "--chrome", out, trace_dir}, {});
  EXPECT_EQ(result.exit_code(), 2) << result.err;
  ASSERT_EQ(lines_of(result.err).size(), 1u) << result.err;
  EXPECT_NE(result.err.find(out + ":0: expected a writable output file (--chrome), got No space left"),
            std::string::npos)
      << result.err;
  EXPECT_TRUE(fs::is_empty(tmp / "small")) << "a partial file was left";
}

// ---------------------------------------------------------------------------------------------
#ifdef DDP_TRAIN_BIN
// Rank 0 (of a 1-rank job) SIGKILLed while .checkpoint.pt.tmp is being written, a checkpoint
// being there already: that checkpoint still loads and the job resumes from it.
TEST(CheckpointKilled, WhileWritingLeavesThePreviousOneLoadable) {
  TempDir tmp;
  const std::string ckpt = tmp / "ckpt";
  const std::string temp = ckpt + "/.checkpoint.pt.tmp";
  const std::string file = ckpt + "/checkpoint.pt";
  bool killed_mid_write = false;
  // A checkpoint of ~4 M parameters (plus momentum) takes tens of ms to write: the poll (every
  // 10 ms) sees its temporary file most times; a few attempts make it certain.
  for (int attempt = 0; attempt < 10 && !killed_mid_write; ++attempt) {
    fs::remove_all(ckpt);
    RunOptions options;
    options.timeout = std::chrono::seconds(60);
    options.on_poll = [&, done = false](pid_t pid) mutable {
      if (done || !fs::exists(file) || !fs::exists(temp)) return;
      ::kill(pid, SIGKILL);
      done = true;
    };
    const auto result = run_process({DDP_TRAIN_BIN, "--quiet", "--no-trace", "--model", "mlp", "--width", "1024",
                                     "--depth", "3", "--dataset-size", "256", "--batch-size", "8",
                                     "--iterations", "300", "--checkpoint-dir", ckpt, "--checkpoint-every", "1"},
                                    options);
    killed_mid_write = result.term_signal() == SIGKILL && fs::exists(temp);
  }
  ASSERT_TRUE(killed_mid_write) << "never caught a checkpoint being written";
  ASSERT_TRUE(fs::is_regular_file(file));
  const auto resumed = run_process({DDP_TRAIN_BIN, "--quiet", "--no-trace", "--model", "mlp", "--width", "1024",
                                    "--depth", "3", "--dataset-size", "256", "--batch-size", "8",
                                    "--iterations", "300", "--checkpoint-dir", ckpt, "--resume"},
                                   within(60));
  EXPECT_EQ(resumed.exit_code(), 0) << resumed.err;
  EXPECT_EQ(resumed.err, "");
}
#endif

}  // namespace
