// The runner end to end against stand-in tools: small shell scripts with the real tools'
// command-line interfaces, run as real processes writing real files. They record how they
// were called, so the tests check order, resume and failure handling.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "results.hpp"
#include "runner.hpp"
#include "spec.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace ddpsim::experiment {
namespace {

// ddp-launch: records the trace dir; fails if a file `fail-match` names part of it (exit 3,
// and with `fail-traced`, leaves a failure the trace explains, as a real timeout does); with
// `break-summary`, turns the experiment's summary.csv into a directory (a write failure).
const char* kFakeLaunch = R"SH(#!/bin/bash
here="$(dirname "$0")"; dir=""; prev=""
for a in "$@"; do [ "$prev" = "--trace-dir" ] && dir="$a"; prev="$a"; done
echo "$dir" >> "$here/launch.log"
mkdir -p "$dir"; echo measured > "$dir/source"
if [ -f "$here/break-summary" ]; then  # the results file becomes unwritable mid-run
  s="$(dirname "$(dirname "$dir")")/summary.csv"; rm -f "$s"; mkdir -p "$s"
fi
if [ -f "$here/count-idle" ]; then  # [launch] hold_cores: the runner's SCHED_IDLE threads; ours
  n=0
  for t in /proc/$PPID/task/*; do chrt -p "${t##*/}" 2>/dev/null | grep -q SCHED_IDLE && n=$((n + 1)); done
  echo "$n $(chrt -p $$ | sed -n '1s/.*: //p')" >> "$here/idle.log"
fi
if [ -f "$here/fail-match" ] && [[ "$dir" == *"$(cat "$here/fail-match")"* ]]; then
  [ -f "$here/fail-traced" ] && touch "$dir/failure"
  echo "ddp-train: rank 1: boom" >&2; exit 3
fi
)SH";

// ddp-trace summary DIR --json: 0.5 s/it measured (0.3 s/it on a predicted trace, which the
// runner must not summarise: the replay's report says 0.4).
const char* kFakeTrace = R"SH(#!/bin/bash
dir="$2"
[ -f "$dir/source" ] || { echo "ddp-trace: $dir: expected a trace directory" >&2; exit 2; }
t=0.5; grep -q predicted "$dir/source" && t=0.3
f='[]'; [ -f "$dir/failure" ] && f='["rank 0 iteration 5 bucket 0: timeout: Timed out, waiting"]'
echo "{\"world_size\": 2, \"median_iteration_s\": $t, \"iterations\": [{}, {}], \"failures\": $f}"
)SH";

// ddp-sim calibrate TRACE --json FILE | replay TRACE --out DIR ... (with `calibrate-fail`,
// calibrate writes no fit and fails, as on a trace without all-reduces)
const char* kFakeSim = R"SH(#!/bin/bash
here="$(dirname "$0")"
echo "$*" >> "$here/sim.log"
case "$1" in
  calibrate) [ -f "$here/calibrate-fail" ] && { echo "ddp-sim: no fit" >&2; exit 2; }
             echo '{}' > "$4" ;;
  replay) [ -f "$here/sim-fail" ] && { echo "ddp-sim: replay broke" >&2; exit 2; }
          mkdir -p "$4"; echo predicted > "$4/source"; f='[]'
          [ -f "$2/failure" ] && { touch "$4/failure"; f='["rank 0 iteration 5 bucket 0: timeout: predicted"]'; }
          # The report holds the predicted trace's summary: 0.4 s/it. (Its own ddp-trace summary
          # would say 0.3 s/it, so a runner that summarised the trace again is caught.)
          # With `pooled`, it also lists 21 Monte Carlo runs' iteration times, whose median is 0.6.
          # Given --repeats, its interval widened by their run-to-run spread is [0.25, 0.55].
          d='{}'; [ -f "$here/pooled" ] && d='{"runs": 21, "iteration_times_s": [0.2, 0.6, 0.7]}'
          r=''; [[ " $* " == *" --repeats "* ]] && r=', "run_to_run_interval": {"median_iteration_s": [0.25, 0.55]}'
          [ "$5" = "--json" ] && echo "{\"predicted\": {\"world_size\": 2, \"median_iteration_s\": 0.4,
            \"iterations\": [{}, {}], \"failures\": $f}, \"interval\": {\"median_iteration_s\": [0.3, 0.45]},
            \"distribution\": $d $r}" > "$6" ;;
esac
exit 0
)SH";

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = scratch_.str();
    bin_ = root_ + "/bin";
    fs::create_directories(bin_);
    write_script("ddp-launch", kFakeLaunch);
    write_script("ddp-trace", kFakeTrace);
    write_script("ddp-sim", kFakeSim);
    options_.out_root = root_ + "/results";
    options_.bin_dir = bin_;
  }

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

  const test_support::TempDir scratch_;  // removed with the fixture, also when a test fails
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
  // Interleaved, the order rotated per repetition.
  EXPECT_EQ(launched(), (std::vector<std::string>{"cap1-rep0", "cap5-rep0", "cap5-rep1", "cap1-rep1"}));

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
  // Both replays of a trace reuse the one fit calibrate wrote for it (issue #14).
  const std::string fit = " --calibration " + root_ + "/results/caps/calibration/cap1-rep0.json";
  EXPECT_EQ(sim_calls[0].rfind("calibrate ", 0), 0u) << sim_calls[0];
  EXPECT_NE(sim_calls[1].find(fit), std::string::npos) << sim_calls[1];
  EXPECT_NE(sim_calls[2].find(fit), std::string::npos) << sim_calls[2];

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

TEST_F(RunnerTest, HoldCoresKeepsOneIdleSpinnerPerCpuWhileTheJobsRun) {
  cpu_set_t allowed;
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const int cpus = CPU_COUNT(&allowed);
  write(bin_ + "/count-idle", "");
  ASSERT_EQ(run(parse_spec(kSpec, root_ + "/caps.toml")), 0) << stderr_;
  EXPECT_EQ(stderr_.find("idle priority"), std::string::npos) << stderr_;
  options_.out_root = root_ + "/held";
  ASSERT_EQ(run(parse_spec(std::string(kSpec) + "[launch]\nhold_cores = true\n", root_ + "/caps.toml")), 0)
      << stderr_;
  EXPECT_NE(stderr_.find("caps: holding " + std::to_string(cpus) + " CPUs at idle priority"), std::string::npos)
      << stderr_;
  // Each job saw the runner's spinners (none without hold_cores) and ran at normal priority itself.
  const std::string none = "0 SCHED_OTHER", held = std::to_string(cpus) + " SCHED_OTHER";
  EXPECT_EQ(lines(bin_ + "/idle.log"), (std::vector<std::string>{none, none, none, none, held, held, held, held}));
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

// A results file that cannot be written once the run is under way is a failure (exit 1, one
// line naming the file), not a usage error (2).
TEST_F(RunnerTest, ResultsThatCannotBeWrittenMidRunExitOne) {
  const auto spec = parse_spec(kSpec, root_ + "/caps.toml");
  write(bin_ + "/break-summary", "");
  EXPECT_EQ(run(spec), 1);
  EXPECT_NE(stderr_.find("summary.csv"), std::string::npos) << stderr_;
  EXPECT_NE(stderr_.find("ddp-experiment: "), std::string::npos) << stderr_;
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
                      "/results/caps/predictions/cap5-rep1-w8 --json " + root_ +
                      "/results/caps/logs/cap5-rep1.replay-w8.json --calibration " + root_ +
                      "/results/caps/calibration/cap5-rep1.json --world-size 8"),
            std::string::npos) << text;
  // The predicted columns come from the replay's report: its trace is not summarised again.
  EXPECT_EQ(text.find("summary " + root_ + "/results/caps/predictions/"), std::string::npos) << text;
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

// Cross-configuration predictions (issue #16): each point predicted from the same
// repetition's baseline trace, as soon as both are measured; resumed without measuring again.
const char* kPredictSpec = R"(
[experiment]
name = "whatif"
repetitions = 2
[workload]
model = "mlp"
batch_size = 32
[grid]
bucket_cap_mb = [1, 25]
[predict]
baseline = { bucket_cap_mb = 25 }
)";

const Row* find_row(const std::vector<Row>& rows, const std::string& point, int rep,
                    const std::string& variant) {
  for (const auto& row : rows)
    if (row.at("point") == point && row.at("rep") == std::to_string(rep) && row.at("variant") == variant)
      return &row;
  return nullptr;
}

TEST_F(RunnerTest, PredictsEveryPointFromTheSameRepetitionsBaseline) {
  const auto spec = parse_spec(kPredictSpec, root_ + "/whatif.toml");
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched(), (std::vector<std::string>{"cap1-rep0", "cap25-rep0", "cap25-rep1", "cap1-rep1"}));
  const auto rows = read_summary(root_ + "/results/whatif/summary.csv");
  ASSERT_EQ(rows.size(), 6u);  // 4 measured + reconstructed, 2 predicted
  for (int rep = 0; rep < 2; ++rep) {
    const Row* own = find_row(rows, "cap1", rep, "");
    const Row* predicted = find_row(rows, "cap1", rep, "from-cap25");
    ASSERT_TRUE(own && predicted) << rep;
    EXPECT_EQ(own->at("kind"), "reconstruction");
    EXPECT_EQ(find_row(rows, "cap25", rep, "")->at("kind"), "reconstruction");
    EXPECT_EQ(find_row(rows, "cap25", rep, "from-cap25"), nullptr);  // never from itself
    EXPECT_EQ(predicted->at("kind"), "prediction");
    EXPECT_EQ(predicted->at("status"), "ok");
    EXPECT_EQ(predicted->at("bucket_cap_mb"), "1");
    EXPECT_DOUBLE_EQ(std::stod(predicted->at("measured_iter_s")), 0.5);
    EXPECT_DOUBLE_EQ(std::stod(predicted->at("predicted_iter_s")), 0.4);
    EXPECT_NEAR(std::stod(predicted->at("error_pct")), -20.0, 1e-9);
    EXPECT_DOUBLE_EQ(std::stod(predicted->at("predicted_lo_s")), 0.3);
    EXPECT_DOUBLE_EQ(std::stod(predicted->at("predicted_hi_s")), 0.45);
    EXPECT_EQ(predicted->at("inside"), "0");  // 0.5 measured is above the interval
    // ... and inside the interval widened by the other repetition's baseline (--repeats)
    EXPECT_DOUBLE_EQ(std::stod(predicted->at("run_to_run_lo_s")), 0.25);
    EXPECT_DOUBLE_EQ(std::stod(predicted->at("run_to_run_hi_s")), 0.55);
    EXPECT_EQ(predicted->at("inside_run_to_run"), "1");
    EXPECT_EQ(own->at("run_to_run_lo_s"), "");  // a reconstruction is its own run: no repeats
    EXPECT_EQ(predicted->at("trace_dir"), "traces/cap1-rep" + std::to_string(rep));
    EXPECT_EQ(predicted->at("replayed_trace"), "traces/cap25-rep" + std::to_string(rep));
    EXPECT_EQ(predicted->at("predicted_dir"), "predictions/cap1-rep" + std::to_string(rep) + "-from-cap25");
  }
  // The replay of the baseline's trace asks for the point's cap, naming the baseline's other
  // repetition as --repeats. Predictions wait for every repetition of the baseline: the rep-0
  // one comes after cap25-rep1 is measured (and calibrated), the rep-1 one follows cap1 at once.
  std::vector<std::string> cross;
  size_t last_baseline = 0, first_cross = 0;
  const auto calls = lines(bin_ + "/sim.log");
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].find("calibrate " + root_ + "/results/whatif/traces/cap25-rep1") == 0) last_baseline = i;
    if (calls[i].find("--bucket-cap-mb") == std::string::npos) continue;
    if (cross.empty()) first_cross = i;
    cross.push_back(calls[i]);
  }
  ASSERT_EQ(cross.size(), 2u);
  EXPECT_LT(last_baseline, first_cross);
  const std::string traces = root_ + "/results/whatif/traces/";
  EXPECT_NE(cross[0].find("replay " + traces + "cap25-rep0 --out " + root_ +
                          "/results/whatif/predictions/cap1-rep0-from-cap25"), std::string::npos) << cross[0];
  EXPECT_NE(cross[0].find(" --repeats " + traces + "cap25-rep1 "), std::string::npos) << cross[0];
  EXPECT_NE(cross[0].find(" --bucket-cap-mb 1"), std::string::npos) << cross[0];
  EXPECT_NE(cross[1].find("traces/cap25-rep1 "), std::string::npos) << cross[1];
  EXPECT_NE(cross[1].find(" --repeats " + traces + "cap25-rep0 "), std::string::npos) << cross[1];
}

// A what-if of random stalls is predicted by every Monte Carlo run's iterations (0.6 s, the
// median of the pooled times), not by the first run's trace (0.4 s); other rows keep 0.4 s.
TEST_F(RunnerTest, RandomStallWhatIfIsTheMedianOfEveryRunsIterations) {
  write(bin_ + "/pooled", "");
  const auto spec = parse_spec(R"(
[experiment]
name = "stall"
repetitions = 1
[workload]
model = "mlp"
batch_size = 32
[grid]
delay_dist = ["", "1=exp:5"]
[predict]
baseline = { delay_dist = "" }
)", root_ + "/stall.toml");
  ASSERT_EQ(run(spec), 0) << stderr_;
  const auto rows = read_summary(root_ + "/results/stall/summary.csv");
  const Row* predicted = nullptr;
  for (const Row& row : rows) {
    if (row.at("kind") == "prediction") predicted = &row;
    if (row.at("kind") == "reconstruction") {
      EXPECT_DOUBLE_EQ(std::stod(row.at("predicted_iter_s")), 0.4);
    }
  }
  ASSERT_NE(predicted, nullptr);
  EXPECT_DOUBLE_EQ(std::stod(predicted->at("predicted_iter_s")), 0.6);
  EXPECT_NEAR(std::stod(predicted->at("error_pct")), 20.0, 1e-9);  // against 0.5 measured
  EXPECT_NEAR(std::stod(predicted->at("predicted_samples_per_s")), 2 * 32 / 0.6, 1e-3);  // 6 digits
}

// Without a fit (calibrate failed) the replays calibrate for themselves: no --calibration, and
// no stale fit of an earlier attempt either.
TEST_F(RunnerTest, ReplaysWithoutAFitWhenCalibrateFails) {
  const auto spec = parse_spec(kPredictSpec, root_ + "/whatif.toml");
  fs::create_directories(root_ + "/results/whatif/calibration");
  write(root_ + "/results/whatif/calibration/cap25-rep0.json", "{} stale");
  write(bin_ + "/calibrate-fail", "");
  ASSERT_EQ(run(spec), 0) << stderr_;
  size_t replays = 0;
  for (const auto& call : lines(bin_ + "/sim.log")) {
    if (call.rfind("replay ", 0) != 0) continue;
    ++replays;
    EXPECT_EQ(call.find("--calibration"), std::string::npos) << call;
  }
  EXPECT_EQ(replays, 6u);  // 4 reconstructions, 2 predictions from cap25
  EXPECT_FALSE(fs::exists(root_ + "/results/whatif/calibration/cap25-rep0.json"));
  for (const auto& row : read_summary(root_ + "/results/whatif/summary.csv")) EXPECT_EQ(row.at("status"), "ok");
}

TEST_F(RunnerTest, MissingBaselineMeasurementPredictsAfterItIsMeasuredOnResume) {
  const auto spec = parse_spec(kPredictSpec, root_ + "/whatif.toml");
  write(bin_ + "/fail-match", "cap25-rep0");
  EXPECT_EQ(run(spec), 1);
  auto rows = read_summary(root_ + "/results/whatif/summary.csv");
  EXPECT_EQ(find_row(rows, "cap1", 0, "from-cap25"), nullptr);  // no baseline, no prediction
  EXPECT_NE(find_row(rows, "cap1", 1, "from-cap25"), nullptr);

  fs::remove(bin_ + "/fail-match");
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched().size(), 5u);  // only the baseline of rep 0 measured again
  EXPECT_EQ(launched().back(), "cap25-rep0");
  rows = read_summary(root_ + "/results/whatif/summary.csv");
  ASSERT_EQ(rows.size(), 6u);
  const Row* predicted = find_row(rows, "cap1", 0, "from-cap25");
  ASSERT_NE(predicted, nullptr);
  EXPECT_EQ(predicted->at("status"), "ok");
  for (const auto& row : rows) EXPECT_EQ(row.at("status"), "ok");

  // A prediction row lost (the runner stopped between the baseline and the prediction):
  // the next run only predicts it.
  std::vector<Row> without;
  for (const auto& row : rows)
    if (!(row.at("point") == "cap1" && row.at("rep") == "1" && row.at("variant") == "from-cap25"))
      without.push_back(row);
  rewrite_summary(root_ + "/results/whatif/summary.csv", without);
  const size_t sim_calls = lines(bin_ + "/sim.log").size();
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched().size(), 5u);
  EXPECT_EQ(lines(bin_ + "/sim.log").size(), sim_calls + 1);  // one replay, no calibration
  EXPECT_NE(find_row(read_summary(root_ + "/results/whatif/summary.csv"), "cap1", 1, "from-cap25"),
            nullptr);
}

// --repredict (issue #16): a model compared with another on the same measurements. Every
// prediction is made again with the new [predict]; no job runs again; a spec that changes
// anything outside [predict] is refused.
// [predict] pool_baselines: each cross prediction replays its repetition's baseline with the
// other repetitions' (its --repeats) as one run (--pool); a reconstruction, which has no
// repeats, is replayed alone.
TEST_F(RunnerTest, PoolBaselinesPoolsTheCrossPredictionsOnly) {
  ASSERT_EQ(run(parse_spec(std::string(kPredictSpec) + "pool_baselines = true\n", root_ + "/whatif.toml")), 0)
      << stderr_;
  int cross = 0, alone = 0;
  for (const std::string& call : lines(bin_ + "/sim.log")) {
    if (call.rfind("replay ", 0) != 0) continue;
    const bool pooled = call.find(" --pool") != std::string::npos;
    if (call.find("--bucket-cap-mb") != std::string::npos) {
      ++cross;
      EXPECT_TRUE(pooled) << call;
      EXPECT_NE(call.find(" --repeats "), std::string::npos) << call;
    } else {
      ++alone;
      EXPECT_FALSE(pooled) << call;
    }
  }
  EXPECT_EQ(cross, 2);
  EXPECT_EQ(alone, 4);
}

TEST_F(RunnerTest, RepredictRedoesEveryPredictionWithAnotherPredictAndMeasuresNothing) {
  ASSERT_EQ(run(parse_spec(kPredictSpec, root_ + "/whatif.toml")), 0) << stderr_;
  const auto before = read_summary(root_ + "/results/whatif/summary.csv");
  const size_t sim_calls = lines(bin_ + "/sim.log").size();
  const auto median = parse_spec(std::string(kPredictSpec) + "replay_args = [\"--compute\", \"median\"]\n",
                                 root_ + "/whatif.toml");
  options_.repredict = true;
  ASSERT_EQ(run(median), 0) << stderr_;
  EXPECT_EQ(launched().size(), 4u);  // nothing measured again

  const auto calls = lines(bin_ + "/sim.log");
  int replays = 0;
  for (size_t i = sim_calls; i < calls.size(); ++i) {
    if (calls[i].rfind("replay ", 0) != 0) continue;
    ++replays;
    EXPECT_NE(calls[i].find("--compute median"), std::string::npos) << calls[i];
  }
  EXPECT_EQ(replays, 6);  // 4 reconstructions + 2 predictions from the baseline
  const auto rows = read_summary(root_ + "/results/whatif/summary.csv");
  ASSERT_EQ(rows.size(), before.size());
  for (const auto& old : before) {
    const Row* row = find_row(rows, old.at("point"), std::stoi(old.at("rep")), old.at("variant"));
    ASSERT_NE(row, nullptr) << old.at("point") << old.at("rep") << old.at("variant");
    EXPECT_EQ(row->at("status"), "ok");
    EXPECT_EQ(row->at("measured_iter_s"), old.at("measured_iter_s"));
    EXPECT_EQ(row->at("kind"), old.at("kind"));
  }

  const auto other_grid = parse_spec(
      std::string(kPredictSpec).replace(std::string(kPredictSpec).find("[1, 25]"), 7, "[1, 5, 25]"),
      root_ + "/whatif.toml");
  try {
    run(other_grid);
    FAIL() << "re-predicted results of another grid";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("differs outside [predict]"), std::string::npos) << error.what();
  }
  EXPECT_EQ(launched().size(), 4u);
}

// A re-prediction that fails (or is interrupted) keeps every measurement in summary.csv, so a
// later run predicts again without measuring again.
TEST_F(RunnerTest, RepredictThatFailsLosesNoMeasurement) {
  const auto spec = parse_spec(kPredictSpec, root_ + "/whatif.toml");
  ASSERT_EQ(run(spec), 0) << stderr_;
  write(bin_ + "/sim-fail", "");
  options_.repredict = true;
  EXPECT_EQ(run(spec), 1);
  auto rows = read_summary(root_ + "/results/whatif/summary.csv");
  for (const char* point : {"cap1", "cap25"}) {
    for (int rep = 0; rep < 2; ++rep) {
      const Row* measured = find_row(rows, point, rep, "");
      ASSERT_NE(measured, nullptr) << point << rep;
      EXPECT_EQ(measured->at("status"), "prediction_error");
      EXPECT_DOUBLE_EQ(std::stod(measured->at("measured_iter_s")), 0.5);
    }
  }

  fs::remove(bin_ + "/sim-fail");
  options_.repredict = false;
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched().size(), 4u);
  rows = read_summary(root_ + "/results/whatif/summary.csv");
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& row : rows) EXPECT_EQ(row.at("status"), "ok");
}

TEST_F(RunnerTest, DryRunPrintsEachPredictionWhereItBecomesDue) {
  auto spec = parse_spec(kPredictSpec, root_ + "/whatif.toml");
  options_.dry_run = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_experiment(spec, options_, out, err), 0);
  const std::string text = out.str();
  const auto at = [&](const std::string& what) { return text.find(what); };
  ASSERT_NE(at("# cap1-rep0 predicted from cap25-rep0"), std::string::npos) << text;
  // After every repetition of the baseline (cap25-rep1 is the last), not before.
  EXPECT_LT(at("# cap25-rep1\n"), at("# cap1-rep0 predicted from cap25-rep0"));
  EXPECT_LT(at("# cap1-rep1\n"), at("# cap1-rep1 predicted from cap25-rep1"));
  EXPECT_NE(at("replay " + root_ + "/results/whatif/traces/cap25-rep1 --out " + root_ +
               "/results/whatif/predictions/cap1-rep1-from-cap25 --json " + root_ +
               "/results/whatif/logs/cap1-rep1.replay-from-cap25.json --repeats " + root_ +
               "/results/whatif/traces/cap25-rep0 --calibration " + root_ +
               "/results/whatif/calibration/cap25-rep1.json --bucket-cap-mb 1\n"),
            std::string::npos) << text;
  EXPECT_FALSE(fs::exists(root_ + "/results"));
}

// corun_bench.sh --bin-dir B --out JSON --copies K ...: records "corun-K-repR" (its --out) in
// launch.log, as a run, and writes one round in which K ranks get 0.4 K + 0.2 effective cores
// (alone 0.1 s). With `corun-fail`, fails and writes nothing.
const char* kFakeCorun = R"SH(#!/bin/bash
here="$(dirname "$(dirname "$0")")/bin"
[ "$1" = "--bin-dir" ] || { echo "corun: expected --bin-dir first" >&2; exit 2; }
out="$4"; k="$6"
basename "$out" .json >> "$here/launch.log"
[ -f "$here/corun-fail" ] && { echo "corun_bench.sh: a 1-rank run failed" >&2; exit 1; }
t=$(python3 -c "print(0.1 * $k / ($k * 0.4 + 0.2))")  # K x 0.1 / t = 0.4 K + 0.2 effective cores
ts=$(python3 -c "print(', '.join(['$t'] * $k))")
echo "{\"copies\": $k, \"rounds\": [{\"alone_s\": 0.1, \"together_s\": [$ts]}]}" > "$out"
)SH";

const char* kWorldSpec = R"(
[experiment]
name = "world"
repetitions = 2
[workload]
model = "mlp"
batch_size = 32
[grid]
world_sizes = [2, 4]
[predict]
baseline = { world_sizes = 2 }
world_size_args = ["--independent-copies"]
corun_profile = [4, 2]
)";

class CorunRunnerTest : public RunnerTest {
 protected:
  void SetUp() override {
    RunnerTest::SetUp();
    fs::create_directories(root_ + "/scripts");
    options_.corun_script = root_ + "/scripts/corun_bench.sh";
    write(options_.corun_script, kFakeCorun);
    ::chmod(options_.corun_script.c_str(), 0755);
  }
  // The replays sim.log recorded, those predicting 4 ranks from 2 marked.
  std::vector<std::string> cross_replays() const {
    std::vector<std::string> out;
    for (const auto& call : lines(bin_ + "/sim.log"))
      if (call.rfind("replay ", 0) == 0 && call.find("--world-size 4") != std::string::npos) out.push_back(call);
    return out;
  }
};

TEST_F(CorunRunnerTest, ProfilesEachRepetitionBeforeItsRunsAndGivesTheWorldSizePredictionsThePool) {
  const auto spec = parse_spec(kWorldSpec, root_ + "/world.toml");
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched(), (std::vector<std::string>{"corun-2-rep0", "corun-4-rep0", "w2-rep0", "w4-rep0",
                                                  "corun-2-rep1", "corun-4-rep1", "w4-rep1", "w2-rep1"}));
  // 0.4 K + 0.2 effective cores: 1.0 at 2 ranks, 1.8 at 4; only the 2 -> 4 predictions get them.
  const auto replays = cross_replays();
  ASSERT_EQ(replays.size(), 2u);
  for (const auto& call : replays)
    EXPECT_NE(call.find("--independent-copies --effective-cores 2=1.0000 --effective-cores 4=1.8000"),
              std::string::npos) << call;
  for (const auto& call : lines(bin_ + "/sim.log")) {
    if (call.find("--world-size") == std::string::npos) {
      EXPECT_EQ(call.find("--effective-cores"), std::string::npos) << call;
    }
  }
  EXPECT_TRUE(fs::exists(root_ + "/results/world/profile/effective-cores.json"));
  EXPECT_NE(stderr_.find("co-run profile: 2 ranks: 1.000 effective cores (2 rounds, 1.000..1.000); 4 ranks: 1.800"),
            std::string::npos) << stderr_;
  for (const auto& row : read_summary(root_ + "/results/world/summary.csv")) EXPECT_EQ(row.at("status"), "ok");

  // Done: a rerun measures no profile again, and neither does --repredict.
  ASSERT_EQ(run(spec), 0) << stderr_;
  options_.repredict = true;
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched().size(), 8u);
  EXPECT_EQ(cross_replays().size(), 4u);
}

TEST_F(CorunRunnerTest, AFailedProfileFailsOnlyTheWorldSizePredictionsAndIsRetried) {
  write(bin_ + "/corun-fail", "");
  const auto spec = parse_spec(kWorldSpec, root_ + "/world.toml");
  EXPECT_EQ(run(spec), 1) << stderr_;
  EXPECT_NE(stderr_.find("profile of repetition 0: ERROR co-run profile of 2 ranks: exit 1: corun_bench.sh: a 1-rank run failed"),
            std::string::npos) << stderr_;
  int failed = 0;
  for (const auto& row : read_summary(root_ + "/results/world/summary.csv")) {
    if (row.at("kind") != "prediction") {
      EXPECT_EQ(row.at("status"), "ok") << row.at("point");
      continue;
    }
    ++failed;
    EXPECT_EQ(row.at("status"), "prediction_error");
    EXPECT_EQ(row.at("message"), "no co-run profile of 2 ranks: expected " + root_ +
                                     "/results/world/profile/corun-2-rep0.json or another repetition's (a "
                                     "rerun without --repredict measures it)");
  }
  EXPECT_EQ(failed, 2);
  EXPECT_TRUE(cross_replays().empty());  // nothing replayed without the profile

  // A rerun measures the profile (before the repetition's predictions are made again) and predicts.
  fs::remove(bin_ + "/corun-fail");
  EXPECT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(cross_replays().size(), 2u);
  for (const auto& row : read_summary(root_ + "/results/world/summary.csv")) EXPECT_EQ(row.at("status"), "ok");
}

TEST_F(CorunRunnerTest, DryRunPrintsTheProfileRoundsAndWhereTheirValuesGo) {
  auto spec = parse_spec(kWorldSpec, root_ + "/world.toml");
  options_.dry_run = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_experiment(spec, options_, out, err), 0);
  const std::string text = out.str();
  const auto at = [&](const std::string& what) { return text.find(what); };
  ASSERT_NE(at("# co-run profile of 4 ranks, repetition 1\n" + options_.corun_script + " --bin-dir " + bin_ +
               " --out " + root_ + "/results/world/profile/corun-4-rep1.json --copies 4 --rounds 1 -- --model mlp"),
            std::string::npos) << text;
  EXPECT_LT(at("# co-run profile of 2 ranks, repetition 1"), at("# w4-rep1\n"));
  EXPECT_GT(at("# co-run profile of 2 ranks, repetition 1"), at("# w4-rep0\n"));
  EXPECT_NE(at("--independent-copies --effective-cores 2=PROFILE --effective-cores 4=PROFILE\n"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(root_ + "/results"));
  EXPECT_FALSE(fs::exists(bin_ + "/launch.log"));
}

// sleep_resume_cost.py --bin-dir B --out JSON ...: records "resume-repR" (its --out) in
// launch.log, as a run, and writes one pair of 0.4 ms per sleep. With `resume-fail`, fails and
// writes nothing.
const char* kFakeResume = R"SH(#!/bin/bash
here="$(dirname "$(dirname "$0")")/bin"
[ "$1" = "--bin-dir" ] || { echo "resume: expected --bin-dir first" >&2; exit 2; }
out="$4"
basename "$out" .json >> "$here/launch.log"
[ -f "$here/resume-fail" ] && { echo "sleep_resume_cost.py: the run exited 1" >&2; exit 1; }
echo '{"pairs": [{"rep": 0, "resume_cost_ms": 0.4}]}' > "$out"
)SH";

const char* kSlowSpec = R"(
[experiment]
name = "slow"
repetitions = 2
[workload]
model = "mlp"
batch_size = 32
[grid]
slowdown = ["", "1=2"]
[predict]
baseline = { slowdown = "" }
resume_profile = 0.5
)";

class ResumeRunnerTest : public RunnerTest {
 protected:
  void SetUp() override {
    RunnerTest::SetUp();
    fs::create_directories(root_ + "/scripts");
    options_.resume_script = root_ + "/scripts/sleep_resume_cost.py";
    write(options_.resume_script, kFakeResume);
    ::chmod(options_.resume_script.c_str(), 0755);
  }
  // The replays sim.log recorded that predict the slowed point from the unslowed one.
  std::vector<std::string> cross_replays() const {
    std::vector<std::string> out;
    for (const auto& call : lines(bin_ + "/sim.log"))
      if (call.rfind("replay ", 0) == 0 && call.find("--slowdown 1=2") != std::string::npos) out.push_back(call);
    return out;
  }
};

TEST_F(ResumeRunnerTest, MeasuresAPairBeforeEachRepetitionAndChargesTheCrossPredictionsTheFraction) {
  const auto spec = parse_spec(kSlowSpec, root_ + "/slow.toml");
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched(), (std::vector<std::string>{"resume-rep0", "slownone-rep0", "slow1-2-rep0", "resume-rep1",
                                                  "slow1-2-rep1", "slownone-rep1"}));
  // Two pairs of 0.4 ms, half charged: 0.2 ms, to the cross predictions only.
  const auto replays = cross_replays();
  ASSERT_EQ(replays.size(), 2u);
  for (const auto& call : replays)
    EXPECT_NE(call.find("--slowdown 1=2 --sleep-resume-cost 0.0002000"), std::string::npos) << call;
  size_t charged = 0;
  for (const auto& call : lines(bin_ + "/sim.log")) charged += call.find("--sleep-resume-cost") != std::string::npos;
  EXPECT_EQ(charged, 2u);
  EXPECT_TRUE(fs::exists(root_ + "/results/slow/profile/sleep-resume-cost.json"));
  EXPECT_NE(stderr_.find("resume profile: resume cost 0.400 ms per sleep (2 pairs, 0.400..0.400), charged x0.5: 0.200 ms"),
            std::string::npos) << stderr_;
  for (const auto& row : read_summary(root_ + "/results/slow/summary.csv")) EXPECT_EQ(row.at("status"), "ok");

  // Done: a rerun measures no pair again, and neither does --repredict.
  ASSERT_EQ(run(spec), 0) << stderr_;
  options_.repredict = true;
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched().size(), 6u);
  EXPECT_EQ(cross_replays().size(), 4u);
}

TEST_F(ResumeRunnerTest, AFailedPairFailsOnlyTheCrossPredictionsAndIsRetried) {
  write(bin_ + "/resume-fail", "");
  const auto spec = parse_spec(kSlowSpec, root_ + "/slow.toml");
  EXPECT_EQ(run(spec), 1) << stderr_;
  EXPECT_NE(stderr_.find("profile of repetition 0: ERROR resume profile: exit 1: sleep_resume_cost.py: the run exited 1"),
            std::string::npos) << stderr_;
  int failed = 0;
  for (const auto& row : read_summary(root_ + "/results/slow/summary.csv")) {
    if (row.at("kind") != "prediction") {
      EXPECT_EQ(row.at("status"), "ok") << row.at("point");
      continue;
    }
    ++failed;
    EXPECT_EQ(row.at("status"), "prediction_error");
    EXPECT_EQ(row.at("message"), "no resume profile: expected " + root_ +
                                     "/results/slow/profile/resume-rep0.json or another repetition's (a rerun "
                                     "without --repredict measures it)");
  }
  EXPECT_EQ(failed, 2);
  EXPECT_TRUE(cross_replays().empty());

  fs::remove(bin_ + "/resume-fail");
  EXPECT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(cross_replays().size(), 2u);
  for (const auto& row : read_summary(root_ + "/results/slow/summary.csv")) EXPECT_EQ(row.at("status"), "ok");
}

TEST_F(ResumeRunnerTest, DryRunPrintsThePairsAndWhereTheirValueGoes) {
  auto spec = parse_spec(kSlowSpec, root_ + "/slow.toml");
  options_.dry_run = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_experiment(spec, options_, out, err), 0);
  const std::string text = out.str();
  const auto at = [&](const std::string& what) { return text.find(what); };
  ASSERT_NE(at("# resume profile, repetition 1\n" + options_.resume_script + " --bin-dir " + bin_ + " --out " +
               root_ + "/results/slow/profile/resume-rep1.json --repetitions 1 --iterations"),
            std::string::npos) << text;
  EXPECT_LT(at("# resume profile, repetition 1"), at("# slow1-2-rep1\n"));
  EXPECT_GT(at("# resume profile, repetition 1"), at("# slownone-rep0\n"));
  EXPECT_NE(at("--slowdown 1=2 --sleep-resume-cost PROFILE\n"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(root_ + "/results"));
  EXPECT_FALSE(fs::exists(bin_ + "/launch.log"));
}

// One machine profile round, one order: the run and --dry-run both take the resume pair first,
// then the co-run rounds (MachineProfile::due_jobs).
TEST_F(ResumeRunnerTest, TheRunAndTheDryRunTakeTheRoundInOneOrder) {
  options_.corun_script = root_ + "/scripts/corun_bench.sh";
  write(options_.corun_script, kFakeCorun);
  ::chmod(options_.corun_script.c_str(), 0755);
  const std::string text = std::string(kSlowSpec) + "corun_profile = [2]\n";
  const auto spec = parse_spec(text, root_ + "/slow.toml");

  options_.dry_run = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_experiment(spec, options_, out, err), 0) << err.str();
  const std::string dry = out.str();
  ASSERT_NE(dry.find("# co-run profile of 2 ranks, repetition 0\n"), std::string::npos) << dry;
  EXPECT_LT(dry.find("# resume profile, repetition 0\n"), dry.find("# co-run profile of 2 ranks, repetition 0\n"));
  EXPECT_LT(dry.find("# co-run profile of 2 ranks, repetition 0\n"), dry.find("# slownone-rep0\n"));

  options_.dry_run = false;
  ASSERT_EQ(run(spec), 0) << stderr_;
  EXPECT_EQ(launched(), (std::vector<std::string>{"resume-rep0", "corun-2-rep0", "slownone-rep0", "slow1-2-rep0",
                                                  "resume-rep1", "corun-2-rep1", "slow1-2-rep1", "slownone-rep1"}));
}

}  // namespace
}  // namespace ddpsim::experiment

namespace ddpsim::experiment {
namespace {

// Two caps, each repetition's 5 MiB run predicted from its 25 MiB trace on the machine measured
// in the sitting.
const std::string kCapsOnTheMachine = R"(
[experiment]
name = "caps"
repetitions = 2
[workload]
model = "mlp"
[grid]
bucket_cap_mb = [25, 5]
[predict]
baseline = { bucket_cap_mb = 25 }
machine_profile = true
)";

// [predict] machine_profile: ddp-machine-profile runs once, launched as the baseline's job,
// before the first repetition's runs; every cross prediction gets --machine with its file and
// keeps the baseline trace's fit (--calibration) for the network.
TEST_F(RunnerTest, MachineProfileRunsOnceAsTheBaselinesJobAndEveryPredictionTakesIt) {
  const auto spec = parse_spec(kCapsOnTheMachine, root_ + "/caps.toml");
  options_.dry_run = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_experiment(spec, options_, out, err), 0) << err.str();
  const std::string text = out.str();
  const std::string machine = root_ + "/results/caps/profile/machine.json";
  const std::string profile = "# machine profile, repetition 0\n" + bin_ + "/ddp-launch --nproc-per-node 2 --master-port 0 -- " +
                              bin_ + "/ddp-machine-profile --out " + machine + " --threads 1 --quiet\n";
  const auto at = text.find(profile);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_EQ(text.find("# machine profile", at + 1), std::string::npos) << "measured once: " << text;
  EXPECT_LT(at, text.find("# cap25-rep0\n")) << text;
  std::size_t predictions = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(bin_ + "/ddp-sim replay", 0) != 0 || line.find("-from-cap25") == std::string::npos) continue;
    ++predictions;
    EXPECT_NE(line.find("--machine " + machine), std::string::npos) << line;
    EXPECT_NE(line.find("--calibration " + root_ + "/results/caps/calibration/cap25-rep"), std::string::npos) << line;
  }
  EXPECT_EQ(predictions, 2u) << text;
  // A run's own replay (a reconstruction) keeps its trace's fit and takes the profile too.
  const std::string own = bin_ + "/ddp-sim replay " + root_ + "/results/caps/traces/cap25-rep0 --out " + root_ +
                          "/results/caps/predictions/cap25-rep0 ";
  const auto own_at = text.find(own);
  ASSERT_NE(own_at, std::string::npos) << text;
  const std::string own_line = text.substr(own_at, text.find('\n', own_at) - own_at);
  EXPECT_NE(own_line.find("--calibration " + root_ + "/results/caps/calibration/cap25-rep0.json"), std::string::npos)
      << own_line;
  EXPECT_NE(own_line.find("--machine " + machine), std::string::npos) << own_line;
  EXPECT_FALSE(fs::exists(root_ + "/results"));
}

// [predict] network = "machine": every replay, the cross predictions and the runs' own, takes
// the profile's network: --machine and no --calibration.
TEST_F(RunnerTest, NetworkFromTheMachineHandsNoCalibration) {
  const auto spec = parse_spec(kCapsOnTheMachine + "network = \"machine\"\n", root_ + "/caps.toml");
  options_.dry_run = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_experiment(spec, options_, out, err), 0) << err.str();
  const std::string text = out.str();
  std::size_t replays = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(bin_ + "/ddp-sim replay", 0) != 0) continue;
    ++replays;
    EXPECT_NE(line.find("--machine " + root_ + "/results/caps/profile/machine.json"), std::string::npos) << line;
    EXPECT_EQ(line.find("--calibration"), std::string::npos) << line;
  }
  EXPECT_EQ(replays, 6u) << text;  // per repetition: each run's own replay and the prediction of cap 5
}

// A world-size spec measures the machine as the largest job it predicts: a 1-rank baseline has no
// all-reduce to time, and a profile of K ranks a host also times every count below K.
TEST_F(RunnerTest, MachineProfileRunsAsTheLargestJobOfTheGrid) {
  std::string spec_text = kWorldSpec;  // 2 ranks predicting 4
  const std::string corun = "corun_profile = [4, 2]\n";
  ASSERT_NE(spec_text.find(corun), std::string::npos);
  spec_text.replace(spec_text.find(corun), corun.size(), "machine_profile = true\n");
  const auto spec = parse_spec(spec_text, root_ + "/world.toml");
  options_.dry_run = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_experiment(spec, options_, out, err), 0) << err.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("# machine profile, repetition 0\n" + bin_ + "/ddp-launch --nproc-per-node 4 --master-port 0 -- " +
                      bin_ + "/ddp-machine-profile --out "),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace ddpsim::experiment
