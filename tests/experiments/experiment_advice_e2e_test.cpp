// [advice] specs end to end with the real tools: ddp-sim advise's JSON read by the runner
// (advice_read.cpp's field names against advise's), a timeout check on a tiny 2-rank MLP with
// evaluation and checkpoints (baseline, one followed run with the advised --timeout, one hung
// rank), and a straggler check of one run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "advice_check.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

namespace ddpsim::experiment {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// advice.csv's rows by run name (no field these specs write holds a comma or a quote but the
// failure message, which is last but two and read up to the next column's start).
std::map<std::string, std::map<std::string, std::string>> rows_by_run(const std::string& path) {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::istringstream text(read_text(path));
  std::string line;
  std::getline(text, line);
  while (std::getline(text, line)) {
    std::map<std::string, std::string> row;
    size_t at = 0;
    for (const auto& column : advice_columns()) {
      std::string field;
      if (at < line.size() && line[at] == '"') {  // RFC 4180
        for (++at; at < line.size(); ++at) {
          if (line[at] == '"' && at + 1 < line.size() && line[at + 1] == '"') { field += '"'; ++at; }
          else if (line[at] == '"') { ++at; break; }
          else field += line[at];
        }
      } else {
        const size_t end = std::min(line.find(',', at), line.size());
        field = line.substr(at, end - at);
        at = end;
      }
      ++at;  // the comma
      row[column] = field;
    }
    out[row["run"]] = row;
  }
  return out;
}

int run_spec(const std::string& root, const std::string& spec, std::string& log_text) {
  std::ofstream(root + "/spec.toml") << spec;
  const std::string log = root + "/run.log";
  const ProcessResult result =
      run_process({DDPSIM_BIN_DIR "/ddp-experiment", "run", root + "/spec.toml", "--out", root + "/results"}, log, log, 150);
  log_text = read_text(log);
  return result.exit_code;
}

TEST(ExperimentAdviceEndToEnd, TimeoutFollowedAndAHangDetected) {
  const test_support::TempDir scratch;
  std::string log;
  ASSERT_EQ(run_spec(scratch.str(), R"(
[experiment]
name = "adv"
repetitions = 1
[workload]
model = "mlp"
iterations = 12
batch_size = 8
args = ["--width", "512", "--depth", "6", "--dataset-size", "600", "--eval-every", "6", "--checkpoint-every", "4",
        "--checkpoint-dir", "{results}/checkpoints"]
[advice]
kind = "timeout"
follow_factor = 2
hang_iteration = 3
hang_stall_factor = 3
[limits]
job_timeout_s = 60
tool_timeout_s = 60
)", log), 0) << log;
  const auto rows = rows_by_run(scratch.str() + "/results/adv/advice.csv");
  ASSERT_EQ(rows.size(), 3u) << log;
  const auto& base = rows.at("base-rep0");
  EXPECT_EQ(base.at("status"), "ok") << base.at("failure");
  ASSERT_FALSE(base.at("advised_timeout_s").empty()) << log;
  const double timeout = std::stod(base.at("advised_timeout_s"));
  EXPECT_GT(timeout, 0);
  ASSERT_FALSE(base.at("advised_detect_s").empty());
  EXPECT_GE(std::stod(base.at("advised_detect_s")), timeout);
  EXPECT_FALSE(base.at("replayed_detect_s").empty());
  EXPECT_EQ(base.at("own_cap_mb"), "25");             // advise's bucket answer read too
  EXPECT_FALSE(base.at("compared_cap_mb").empty());
  EXPECT_FALSE(base.at("predicted_gain_lo").empty());
  EXPECT_TRUE(std::filesystem::exists(scratch.str() + "/results/adv/checkpoints/checkpoint.pt"));
  const auto& follow = rows.at("follow-rep0-0");
  EXPECT_EQ(follow.at("iterations"), "24");
  EXPECT_EQ(follow.at("timeout_s"), base.at("advised_timeout_s"));
  EXPECT_TRUE(follow.at("status") == "ok" || follow.at("status") == "failed") << follow.at("failure");
  // The hung rank stalls 3 x the timeout: the job fails while it is still stalled, about the
  // timeout after the stall began (rank 0 may have been waiting a little before it did).
  const auto& hang = rows.at("hang-rep0-0");
  EXPECT_EQ(hang.at("status"), "failed") << hang.at("failure");
  EXPECT_EQ(hang.at("delay"), "1=" + std::to_string(hang_stall_ms(timeout, 3)) + "@3");
  ASSERT_FALSE(hang.at("measured_detect_s").empty()) << hang.at("failure");
  EXPECT_GT(std::stod(hang.at("measured_detect_s")), timeout * 0.5);
  EXPECT_LT(std::stod(hang.at("measured_detect_s")), timeout * 3);
}

TEST(ExperimentAdviceEndToEnd, StragglersNamedFromOneRun) {
  const test_support::TempDir scratch;
  std::string log;
  ASSERT_EQ(run_spec(scratch.str(), R"(
[experiment]
name = "adv"
[workload]
model = "mlp"
iterations = 10
batch_size = 16
args = ["--width", "128", "--depth", "2"]
[grid]
slowdown = ["1=3"]
[advice]
kind = "stragglers"
advise_args = ["--bucket-caps", "25"]
[limits]
job_timeout_s = 60
tool_timeout_s = 60
)", log), 0) << log;
  const auto rows = rows_by_run(scratch.str() + "/results/adv/advice.csv");
  ASSERT_EQ(rows.size(), 1u) << log;
  const auto& row = rows.begin()->second;
  EXPECT_EQ(row.at("status"), "ok") << row.at("failure");  // error when advise's JSON names no stragglers field
  EXPECT_EQ(row.at("slowed_ranks"), "1");
  EXPECT_FALSE(row.at("advice_json").empty());
}

}  // namespace
}  // namespace ddpsim::experiment
