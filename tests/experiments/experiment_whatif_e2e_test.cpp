// ddp-experiment end to end with the real tools (issue #16): a 2-rank loopback job at two bucket
// caps, the 1 MiB point predicted from the 25 MiB baseline's trace, twice. Checks the rows a
// what-if table is made of: kind = prediction, measured and predicted times, the bootstrap
// interval, and that interval widened by the spread of the baseline's two runs (the runner
// passes the other repetition's trace to ddp-sim replay --repeats, which must accept it as a
// run of the same configuration).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "process.hpp"
#include "results.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace ddpsim::experiment {
namespace {

const char* kSpec = R"(
[experiment]
name = "whatif-e2e"
repetitions = 2
[workload]
model = "mlp"
iterations = 5
batch_size = 8
args = ["--width", "128", "--depth", "2"]
[grid]
world_sizes = 2
bucket_cap_mb = [0.05, 25]
delay_dist = ["", "1=exp:5"]
[predict]
baseline = { bucket_cap_mb = 25, delay_dist = "" }
replay_args = ["--compute", "per-iteration", "--runs", "11", "--seed", "7", "--bootstrap"]
[limits]
job_timeout_s = 60
tool_timeout_s = 60
)";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ExperimentWhatIfEndToEnd, PredictionRowsFromTheBaselineTrace) {
  const test_support::TempDir scratch;  // removed also when an assertion below ends the test
  const std::string root = scratch.str();
  std::ofstream(root + "/spec.toml") << kSpec;
  const std::string log = root + "/run.log";
  const ProcessResult result =
      run_process({DDPSIM_BIN_DIR "/ddp-experiment", "run", root + "/spec.toml", "--out", root + "/results"},
                  log, log, 120);
  ASSERT_TRUE(result.ok()) << "exit " << result.exit_code << ": " << read_text(log);

  const auto rows = read_summary(root + "/results/whatif-e2e/summary.csv");
  // 4 measured points (each reconstructed), 3 predicted from the baseline, per repetition.
  ASSERT_EQ(rows.size(), 14u) << read_text(log);
  int predictions = 0, reconstructions = 0;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("status"), "ok") << row.at("point") << ": " << row.at("message");
    EXPECT_FALSE(row.at("measured_iter_s").empty()) << row.at("point");
    EXPECT_FALSE(row.at("predicted_iter_s").empty()) << row.at("point");
    EXPECT_FALSE(row.at("error_pct").empty()) << row.at("point");
    EXPECT_FALSE(row.at("predicted_lo_s").empty()) << row.at("point");
    EXPECT_LE(std::stod(row.at("predicted_lo_s")), std::stod(row.at("predicted_hi_s")));
    EXPECT_TRUE(row.at("inside") == "0" || row.at("inside") == "1");
    if (row.at("kind") == "prediction") {
      ++predictions;
      EXPECT_EQ(row.at("variant"), "from-cap25_ddistnone");
      EXPECT_NE(row.at("point"), "cap25_ddistnone");
      const std::string rep = row.at("rep");
      EXPECT_EQ(row.at("replayed_trace"), "traces/cap25_ddistnone-rep" + rep);
      EXPECT_EQ(row.at("trace_dir"), "traces/" + row.at("point") + "-rep" + rep);
      ASSERT_FALSE(row.at("run_to_run_lo_s").empty()) << row.at("point") << " rep " << rep;
      EXPECT_LE(std::stod(row.at("run_to_run_lo_s")), std::stod(row.at("predicted_lo_s")));
      EXPECT_GE(std::stod(row.at("run_to_run_hi_s")), std::stod(row.at("predicted_hi_s")));
      EXPECT_TRUE(row.at("inside_run_to_run") == "0" || row.at("inside_run_to_run") == "1");
      EXPECT_TRUE(fs::is_directory(root + "/results/whatif-e2e/" + row.at("predicted_dir")));
    } else {
      EXPECT_EQ(row.at("kind"), "reconstruction");
      EXPECT_EQ(row.at("variant"), "");
      EXPECT_EQ(row.at("replayed_trace"), row.at("trace_dir"));
      EXPECT_EQ(row.at("run_to_run_lo_s"), "");  // a reconstruction is compared with its own run
      ++reconstructions;
    }
    // The stalled points compare whole distributions too.
    EXPECT_EQ(row.at("ks_distance").empty(), row.at("delay_dist").empty()) << row.at("point");
  }
  EXPECT_EQ(predictions, 6);
  EXPECT_EQ(reconstructions, 8);
}

}  // namespace
}  // namespace ddpsim::experiment
