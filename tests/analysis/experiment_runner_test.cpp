// The runner end to end against stand-in tools: small shell scripts with the real tools'
// command-line interfaces, run as real processes writing real files. They record how they
// were called, so the tests check order, resume and failure handling.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "results.hpp"
#include "runner.hpp"
#include "spec.hpp"

namespace fs = std::filesystem;

namespace ddpsim::experiment {
namespace {

// ddp-launch: records the trace dir; fails if a file `fail-match` names part of it (exit 3,
// and with `fail-traced`, leaves a failure the trace explains, as a real timeout does).
const char* kFakeLaunch = R"SH(#!/bin/bash
here="$(dirname "$0")"; dir=""; prev=""
for a in "$@"; do [ "$prev" = "--trace-dir" ] && dir="$a"; prev="$a"; done
echo "$dir" >> "$here/launch.log"
mkdir -p "$dir"; echo measured > "$dir/source"
if [ -f "$here/fail-match" ] && [[ "$dir" == *"$(cat "$here/fail-match")"* ]]; then
  [ -f "$here/fail-traced" ] && touch "$dir/failure"
  echo "ddp-train: rank 1: boom" >&2; exit 3
fi
)SH";

// ddp-trace summary DIR --json: 0.5 s/it measured, 0.4 s/it predicted.
const char* kFakeTrace = R"SH(#!/bin/bash
dir="$2"
[ -f "$dir/source" ] || { echo "ddp-trace: $dir: expected a trace directory" >&2; exit 2; }
t=0.5; grep -q predicted "$dir/source" && t=0.4
f='[]'; [ -f "$dir/failure" ] && f='["rank 0 iteration 5 bucket 0: timeout: Timed out, waiting"]'
echo "{\"world_size\": 2, \"median_iteration_s\": $t, \"iterations\": [{}, {}], \"failures\": $f}"
)SH";

// ddp-sim calibrate TRACE --json FILE | replay TRACE --out DIR ...
const char* kFakeSim = R"SH(#!/bin/bash
here="$(dirname "$0")"
echo "$*" >> "$here/sim.log"
case "$1" in
  calibrate) echo '{}' > "$4" ;;
  replay) [ -f "$here/sim-fail" ] && { echo "ddp-sim: replay broke" >&2; exit 2; }
          mkdir -p "$4"; echo predicted > "$4/source"; [ -f "$2/failure" ] && touch "$4/failure" ;;
esac
exit 0
)SH";

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ddp-experiment-test-XXXXXX";
    root_ = ::mkdtemp(pattern);
    bin_ = root_ + "/bin";
    fs::create_directories(bin_);
    write_script("ddp-launch", kFakeLaunch);
    write_script("ddp-trace", kFakeTrace);
    write_script("ddp-sim", kFakeSim);
    options_.out_root = root_ + "/results";
    options_.bin_dir = bin_;
  }
  void TearDown() override { fs::remove_all(root_); }

  void write_script(const std::string& name, const char* text) {
    write(bin_ + "/" + name, text);
    ::chmod((bin_ + "/" + name).c_str(), 0755);
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  std::vector<std::string> lines(const std::string& path) const {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::vector<std::string> launched() const {
    std::vector<std::string> names;
    for (const auto& dir : lines(bin_ + "/launch.log")) names.push_back(fs::path(dir).filename());
    return names;
  }
  int run(const ExperimentSpec& spec) {
    std::ostringstream out, err;
    const int status = run_experiment(spec, options_, out, err);
    stderr_ = err.str();
    return status;
  }

  std::string root_, bin_, stderr_;
  RunOptions options_;
};

const char* kSpec = R"(
[experiment]
name = "caps"
repetitions = 2
[workload]
model = "mlp"
batch_size = 32
[grid]
bucket_cap_mb = [1, 5]
[predict]
world_sizes = [8]
)";

TEST_F(RunnerTest, RunsInterleavedWritesRowsAndResumes) {
  const auto spec = parse_spec(kSpec, root_ + "/caps.toml");
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched(), (std::vector<std::string>{"cap1-rep0", "cap5-rep0", "cap1-rep1", "cap5-rep1"}));

  const auto rows = read_summary(root_ + "/results/caps/summary.csv");
  ASSERT_EQ(rows.size(), 8u);  // per run: the measured configuration + the W=8 what-if
  const Row& base = rows[0];
  EXPECT_EQ(base.at("point"), "cap1");
  EXPECT_EQ(base.at("variant"), "");
  EXPECT_EQ(base.at("status"), "ok");
  EXPECT_DOUBLE_EQ(std::stod(base.at("measured_iter_s")), 0.5);
  EXPECT_DOUBLE_EQ(std::stod(base.at("predicted_iter_s")), 0.4);
  EXPECT_NEAR(std::stod(base.at("error_pct")), 100.0 * (0.4 - 0.5) / 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(std::stod(base.at("measured_samples_per_s")), 2 * 32 / 0.5);
  EXPECT_EQ(base.at("trace_dir"), "traces/cap1-rep0");
  EXPECT_EQ(base.at("measured_failed"), "0");
  const Row& what_if = rows[1];
  EXPECT_EQ(what_if.at("variant"), "w8");
  EXPECT_EQ(what_if.at("predicted_world_size"), "8");
  EXPECT_EQ(what_if.at("measured_iter_s"), "");  // nothing measured at W=8
  EXPECT_EQ(what_if.at("error_pct"), "");
  EXPECT_DOUBLE_EQ(std::stod(what_if.at("predicted_samples_per_s")), 8 * 32 / 0.4);
  EXPECT_TRUE(fs::exists(root_ + "/results/caps/predictions/cap1-rep0-w8/source"));
  EXPECT_TRUE(fs::exists(root_ + "/results/caps/calibration/cap1-rep0.json"));
  const auto sim_calls = lines(bin_ + "/sim.log");
  EXPECT_EQ(sim_calls.size(), 4u * 3u);  // calibrate, replay, replay --world-size 8
  EXPECT_NE(sim_calls[2].find("--world-size 8"), std::string::npos) << sim_calls[2];

  std::ifstream provenance(root_ + "/results/caps/provenance.json");
  std::stringstream text;
  text << provenance.rdbuf();
  EXPECT_NE(text.str().find("\"spec_text\""), std::string::npos);
  EXPECT_NE(text.str().find("\"git_sha\""), std::string::npos);
  EXPECT_NE(text.str().find("\"packages\""), std::string::npos);
  EXPECT_NE(text.str().find("\"date_utc\""), std::string::npos);
  EXPECT_NE(text.str().find("\"host\""), std::string::npos);

  // Second run: everything is finished, nothing is launched again.
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched().size(), 4u);
  EXPECT_EQ(read_summary(root_ + "/results/caps/summary.csv").size(), 8u);
}

TEST_F(RunnerTest, BrokenRunIsRecordedAsErrorAndRetriedOnResume) {
  const auto spec = parse_spec(kSpec, root_ + "/caps.toml");
  write(bin_ + "/fail-match", "cap5-rep0");
  EXPECT_EQ(run(spec), 1);
  auto rows = read_summary(root_ + "/results/caps/summary.csv");
  ASSERT_EQ(rows.size(), 7u);  // the broken run has one row and no predictions
  EXPECT_EQ(rows[2].at("point"), "cap5");
  EXPECT_EQ(rows[2].at("status"), "error");
  EXPECT_EQ(rows[2].at("job_exit"), "3");
  EXPECT_NE(rows[2].at("message").find("ddp-train: rank 1: boom"), std::string::npos)
      << rows[2].at("message");

  fs::remove(bin_ + "/fail-match");
  ASSERT_EQ(run(spec), 0) << stderr_;
  const auto names = launched();
  ASSERT_EQ(names.size(), 5u);
  EXPECT_EQ(names.back(), "cap5-rep0");
  rows = read_summary(root_ + "/results/caps/summary.csv");
  ASSERT_EQ(rows.size(), 8u);
  for (const auto& row : rows) EXPECT_EQ(row.at("status"), "ok");
}

TEST_F(RunnerTest, FailedPredictionsAreRedoneWithoutMeasuringAgain) {
  const auto spec = parse_spec(kSpec, root_ + "/caps.toml");
  write(bin_ + "/sim-fail", "");
  EXPECT_EQ(run(spec), 1);
  auto rows = read_summary(root_ + "/results/caps/summary.csv");
  ASSERT_EQ(rows.size(), 8u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("status"), "prediction_error");
    EXPECT_EQ(row.at("predicted_iter_s"), "");
    EXPECT_NE(row.at("message").find("ddp-sim: replay broke"), std::string::npos) << row.at("message");
  }
  EXPECT_DOUBLE_EQ(std::stod(rows[0].at("measured_iter_s")), 0.5);  // the measurement stays

  fs::remove(bin_ + "/sim-fail");
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched().size(), 4u);  // no job ran again
  rows = read_summary(root_ + "/results/caps/summary.csv");
  ASSERT_EQ(rows.size(), 8u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("status"), "ok");
    EXPECT_EQ(row.at("message"), "");
    EXPECT_DOUBLE_EQ(std::stod(row.at("predicted_iter_s")), 0.4);
    if (row.at("variant").empty()) {
      EXPECT_DOUBLE_EQ(std::stod(row.at("measured_iter_s")), 0.5);
      EXPECT_NEAR(std::stod(row.at("error_pct")), -20.0, 1e-9);
      EXPECT_EQ(row.at("job_exit"), "0");
    }
  }
}

TEST_F(RunnerTest, OneRankPointsAreMeasuredButNotPredicted) {
  const auto spec = parse_spec(
      "[workload]\nmodel = \"mlp\"\n[grid]\nworld_sizes = [1, 2]\n", root_ + "/w.toml");
  ASSERT_EQ(run(spec), 0) << stderr_;
  const auto rows = read_summary(root_ + "/results/w/summary.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("world_size"), "1");
  EXPECT_EQ(rows[0].at("status"), "ok");
  EXPECT_EQ(rows[0].at("predicted_iter_s"), "");
  EXPECT_NE(rows[0].at("message").find("min_world_size"), std::string::npos);
  EXPECT_DOUBLE_EQ(std::stod(rows[0].at("measured_samples_per_s")), 1 * 32 / 0.5);
  EXPECT_DOUBLE_EQ(std::stod(rows[1].at("predicted_iter_s")), 0.4);
  EXPECT_EQ(lines(bin_ + "/sim.log").size(), 2u);  // calibrate + replay, for W=2 only
}

TEST_F(RunnerTest, FailureTheTraceExplainsIsAnOutcome) {
  const auto spec = parse_spec(kSpec, root_ + "/caps.toml");
  write(bin_ + "/fail-match", "cap1-rep1");
  write(bin_ + "/fail-traced", "");
  ASSERT_EQ(run(spec), 0) << stderr_;
  const auto rows = read_summary(root_ + "/results/caps/summary.csv");
  int failed = 0;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("status"), "ok");
    if (row.at("point") == "cap1" && row.at("rep") == "1" && row.at("variant").empty()) {
      ++failed;
      EXPECT_EQ(row.at("measured_failed"), "1");
      EXPECT_EQ(row.at("measured_failure"), "rank 0 iteration 5 bucket 0: timeout: Timed out, waiting");
      EXPECT_EQ(row.at("predicted_failed"), "1");
      EXPECT_EQ(row.at("job_exit"), "3");
    } else if (row.at("variant").empty()) {
      EXPECT_EQ(row.at("measured_failed"), "0");
    }
  }
  EXPECT_EQ(failed, 1);
}

TEST_F(RunnerTest, DryRunPrintsCommandsAndWritesNothing) {
  auto spec = parse_spec(kSpec, root_ + "/caps.toml");
  options_.dry_run = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_experiment(spec, options_, out, err), 0);
  const std::string text = out.str();
  EXPECT_NE(text.find("# caps: 2 points x 2 repetitions = 4 runs, 4 to do"), std::string::npos) << text;
  EXPECT_NE(text.find(bin_ + "/ddp-launch --nproc-per-node 2 --master-port 0 -- " + bin_ +
                      "/ddp-train --model mlp"), std::string::npos) << text;
  EXPECT_NE(text.find("replay " + root_ + "/results/caps/traces/cap5-rep1 --out " + root_ +
                      "/results/caps/predictions/cap5-rep1-w8 --world-size 8"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(root_ + "/results"));
  EXPECT_FALSE(fs::exists(bin_ + "/launch.log"));
}

TEST_F(RunnerTest, RefusesToResumeWithAnotherSpec) {
  ASSERT_EQ(run(parse_spec(kSpec, root_ + "/caps.toml")), 0) << stderr_;
  const auto changed = parse_spec(std::string(kSpec) + "\n[limits]\njob_timeout_s = 5\n",
                                  root_ + "/caps.toml");
  try {
    run(changed);
    FAIL() << "resumed into results of another spec";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("came from a different spec"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace ddpsim::experiment
