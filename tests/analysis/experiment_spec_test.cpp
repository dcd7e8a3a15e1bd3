// Spec parsing: values, defaults, what-if expansion, and one-line errors with file:line.
#include <gtest/gtest.h>

#include "spec.hpp"

namespace ddpsim::experiment {
namespace {

const char* kFullSpec = R"(
[experiment]
name = "sweep"
repetitions = 3

[workload]
model = "convnet"
iterations = 7
batch_size = 16
args = ["--hidden", "128"]

[grid]
world_sizes = [2, 3]
bucket_cap_mb = [0.25, 1, 50]
slowdown = ["", "1=2.0", ["0=1.5", "1=3"]]
timeout_s = 5

[predict]
replay_args = ["--allreduce", "ring-agg"]
world_sizes = [64, 1024]
timeouts_s = [0.5, 2]

[[predict.whatif]]
name = "cap5"
args = ["--bucket-cap-mb", "5"]
)";

TEST(ExperimentSpec, ParsesEveryTable) {
  const ExperimentSpec spec = parse_spec(kFullSpec, "sweep.toml");
  EXPECT_EQ(spec.name, "sweep");
  EXPECT_EQ(spec.repetitions, 3);
  EXPECT_EQ(spec.workload.model, "convnet");
  EXPECT_EQ(spec.workload.iterations, 7);
  EXPECT_EQ(spec.workload.batch_size, 16);
  EXPECT_EQ(spec.workload.args, (std::vector<std::string>{"--hidden", "128"}));
  EXPECT_EQ(spec.grid.world_sizes, (std::vector<int>{2, 3}));
  EXPECT_EQ(spec.grid.bucket_cap_mb, (std::vector<double>{0.25, 1.0, 50.0}));
  ASSERT_EQ(spec.grid.slowdown.size(), 3u);
  EXPECT_TRUE(spec.grid.slowdown[0].empty());
  EXPECT_EQ(spec.grid.slowdown[1], (SkewSetting{"1=2.0"}));
  EXPECT_EQ(spec.grid.slowdown[2], (SkewSetting{"0=1.5", "1=3"}));
  EXPECT_EQ(spec.grid.timeout_s, (std::vector<double>{5.0}));  // a scalar is a one-value axis
  EXPECT_EQ(spec.predict.replay_args, (std::vector<std::string>{"--allreduce", "ring-agg"}));

  ASSERT_EQ(spec.predict.what_ifs.size(), 5u);
  EXPECT_EQ(spec.predict.what_ifs[0].name, "w64");
  EXPECT_EQ(spec.predict.what_ifs[0].args, (std::vector<std::string>{"--world-size", "64"}));
  EXPECT_EQ(spec.predict.what_ifs[1].world_size, 1024);
  EXPECT_EQ(spec.predict.what_ifs[2].name, "timeout0.5");
  EXPECT_EQ(spec.predict.what_ifs[2].args, (std::vector<std::string>{"--timeout", "0.5"}));
  EXPECT_DOUBLE_EQ(spec.predict.what_ifs[3].timeout_s.value(), 2.0);
  EXPECT_EQ(spec.predict.what_ifs[4].name, "cap5");
  EXPECT_FALSE(spec.predict.what_ifs[4].world_size.has_value());
}

TEST(ExperimentSpec, DefaultsAndNameFromFile) {
  const ExperimentSpec spec = parse_spec("[workload]\nmodel = \"mlp\"\n", "dir/my-exp.toml");
  EXPECT_EQ(spec.name, "my-exp");
  EXPECT_EQ(spec.repetitions, 1);
  EXPECT_EQ(spec.grid.world_sizes, (std::vector<int>{2}));
  EXPECT_EQ(spec.grid.bucket_cap_mb, (std::vector<double>{25.0}));
  EXPECT_TRUE(spec.grid.timeout_s.empty());
  EXPECT_TRUE(spec.predict.enabled);
  EXPECT_TRUE(spec.predict.what_ifs.empty());
}

// The first line of the error; the whole message must be one line.
std::string error_of(const std::string& text) {
  try {
    parse_spec(text, "bad.toml");
  } catch (const SpecError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

TEST(ExperimentSpecErrors, SyntaxErrorNamesFileLineAndColumn) {
  const auto message = error_of("[workload]\nmodel = \"mlp\"\niterations = = 3\n");
  EXPECT_EQ(message.rfind("bad.toml:3:", 0), 0u) << message;
}

TEST(ExperimentSpecErrors, UnknownKeyNamesLineKeyAndAlternatives) {
  const auto message = error_of("[workload]\nmodel = \"mlp\"\n\n[grid]\nbucket_cap = [1, 2]\n");
  EXPECT_EQ(message.rfind("bad.toml:5: unknown key 'bucket_cap' in [grid]", 0), 0u) << message;
  EXPECT_NE(message.find("bucket_cap_mb"), std::string::npos) << message;
}

TEST(ExperimentSpecErrors, UnknownTable) {
  const auto message = error_of("[workload]\n[grdi]\nworld_sizes = [2]\n");
  EXPECT_NE(message.find("unknown key 'grdi' in [top level]"), std::string::npos) << message;
}

TEST(ExperimentSpecErrors, WrongTypeNamesExpectedAndGot) {
  EXPECT_EQ(error_of("[workload]\nbatch_size = \"32\"\n"),
            "bad.toml:2: [workload] batch_size: expected an integer, got a string");
  EXPECT_EQ(error_of("[workload]\n[grid]\nbucket_cap_mb = [1, \"big\"]\n"),
            "bad.toml:3: [grid] bucket_cap_mb: expected a number, got a string");
  EXPECT_EQ(error_of("[workload]\n[grid]\nslowdown = [2.0]\n"),
            "bad.toml:3: [grid] slowdown: expected a string like \"1=2.0\" (or an array of "
            "them), got a number");
  EXPECT_EQ(error_of("workload = 3\n"),
            "bad.toml:1: [top level] workload: expected a table [workload], got an integer");
}

TEST(ExperimentSpecErrors, OutOfRangeValues) {
  EXPECT_EQ(error_of("[workload]\n[grid]\nworld_sizes = [2, 0]\n"),
            "bad.toml:3: [grid] world_sizes: expected an integer >= 1, got 0");
  EXPECT_EQ(error_of("[workload]\n[grid]\nbucket_cap_mb = -1\n"),
            "bad.toml:3: [grid] bucket_cap_mb: expected a number > 0, got -1");
  EXPECT_EQ(error_of("[experiment]\nrepetitions = 0\n[workload]\n"),
            "bad.toml:2: [experiment] repetitions: expected an integer >= 1, got 0");
  EXPECT_NE(error_of("[workload]\n[grid]\nworld_sizes = []\n").find("expected at least one value"),
            std::string::npos);
}

TEST(ExperimentSpecErrors, MissingWorkloadAndDuplicateWhatIf) {
  EXPECT_EQ(error_of("[grid]\nworld_sizes = [2]\n"),
            "bad.toml: missing table [workload] (the training job to run)");
  EXPECT_EQ(error_of("[workload]\n[predict]\nworld_sizes = [4]\n[[predict.whatif]]\nname = \"w4\"\n"),
            "bad.toml: [predict] what-if 'w4' is defined twice");
}

TEST(ExperimentSpecErrors, MissingFile) {
  try {
    parse_spec_file("/nonexistent/spec.toml");
    FAIL() << "no error";
  } catch (const SpecError& error) {
    EXPECT_STREQ(error.what(), "/nonexistent/spec.toml: cannot open the spec file");
  }
}

}  // namespace
}  // namespace ddpsim::experiment
