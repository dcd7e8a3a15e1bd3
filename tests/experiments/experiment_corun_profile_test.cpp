// The co-run profile ([predict] corun_profile): corun_bench.sh's rounds pooled into
// --effective-cores, and the command that measures one round.
#include <gtest/gtest.h>

#include "corun_profile.hpp"
#include "temp_dir.hpp"

namespace ddpsim::experiment {
namespace {

std::string error_of(const std::vector<std::string>& files, int copies) {
  try {
    pool_corun_rounds(files, copies);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

class CorunProfileTest : public ::testing::Test {
 protected:
  std::string file(const std::string& name, const std::string& text) const { return scratch_.write(name, text); }
  const test_support::TempDir scratch_;
};

TEST_F(CorunProfileTest, PoolsRoundsAsMediansOfAloneAndTogether) {
  // Rounds: alone 0.10, 0.12, 0.30 -> median 0.12; together (each round's copies' median)
  // 0.16, 0.20, 0.40 -> median 0.20: 2 x 0.12 / 0.20 = 1.2 (the rounds' own: 1.25, 1.2, 1.5).
  const auto a = file("a.json", R"({"copies": 2, "rounds": [{"alone_s": 0.10, "together_s": [0.15, 0.17]},
                                                             {"alone_s": 0.12, "together_s": [0.20, 0.20]}]})");
  const auto b = file("b.json", R"({"copies": 2, "rounds": [{"alone_s": 0.30, "together_s": [0.40, 0.40]}]})");
  const auto profile = pool_corun_rounds({a, scratch_.str() + "/missing.json", b}, 2);
  ASSERT_TRUE(profile);
  EXPECT_EQ(profile->copies, 2);
  EXPECT_EQ(profile->rounds, 3);
  EXPECT_DOUBLE_EQ(profile->effective_cores, 1.2);
  EXPECT_DOUBLE_EQ(profile->round_low, 1.2);
  EXPECT_DOUBLE_EQ(profile->round_high, 1.5);
  EXPECT_EQ(effective_cores_args({*profile}), (std::vector<std::string>{"--effective-cores", "2=1.2000"}));
  EXPECT_EQ(describe_profiles({*profile}), "2 ranks: 1.200 effective cores (3 rounds, 1.200..1.500)");
  // None measured: no profile, not an error (the caller says what is missing).
  EXPECT_FALSE(pool_corun_rounds({scratch_.str() + "/missing.json"}, 2));
}

TEST_F(CorunProfileTest, FasterTogetherThanAloneIsClampedToKCores) {
  const auto a = file("a.json", R"({"copies": 2, "rounds": [{"alone_s": 0.2, "together_s": [0.1, 0.1]}]})");
  EXPECT_DOUBLE_EQ(pool_corun_rounds({a}, 2)->effective_cores, 2.0);
}

TEST_F(CorunProfileTest, FilesThatAreNotRoundsAreOneLineErrors) {
  const auto text = file("text.json", "not json");
  EXPECT_EQ(error_of({text}, 2), text + ": expected corun_bench.sh's JSON, got text that is not JSON");
  const auto empty = file("empty.json", R"({"copies": 2, "rounds": []})");
  EXPECT_EQ(error_of({empty}, 2), empty + ": expected corun_bench.sh's JSON with a non-empty \"rounds\" array");
  const auto other = file("other.json", R"({"copies": 4, "rounds": [{"alone_s": 1, "together_s": [1, 1, 1, 1]}]})");
  EXPECT_EQ(error_of({other}, 2), other + ": expected a profile of 2 co-located ranks (\"copies\"), got 4");
  const auto short_round = file("short.json", R"({"copies": 2, "rounds": [{"alone_s": 1, "together_s": [1]}]})");
  EXPECT_EQ(error_of({short_round}, 2),
            short_round + ": expected each round to hold \"alone_s\" and 2 \"together_s\"");
  const auto zero = file("zero.json", R"({"copies": 2, "rounds": [{"alone_s": 0, "together_s": [1, 1]}]})");
  EXPECT_EQ(error_of({zero}, 2), zero + ": expected iteration times in seconds > 0 in \"rounds\", got 0");
}

TEST_F(CorunProfileTest, OneRoundRunsTheWorkloadAsOneRankJobs) {
  ExperimentSpec spec;
  spec.workload.model = "mlp";
  spec.workload.iterations = 30;
  spec.workload.batch_size = 2048;
  spec.workload.args = {"--width", "256"};
  EXPECT_EQ(corun_command(spec, "/b", "/s/corun_bench.sh", "/r/corun-4-rep1.json", 4),
            (Command{"/s/corun_bench.sh", "--bin-dir", "/b", "--out", "/r/corun-4-rep1.json", "--copies", "4",
                     "--rounds", "1", "--", "--model", "mlp", "--batch-size", "2048", "--threads", "1", "--seed",
                     "1", "--optimizer", "sgd", "--lr", "0.01", "--width", "256", "--iterations", "30"}));
}

// Only predictions of another layout (ranks or hosts) take the profile, after world_size_args.
TEST(CorunProfile, OnlyPredictionsThatChangeTheLayoutTakeIt) {
  ExperimentSpec spec;
  spec.predict.world_size_args = {"--independent-copies"};
  const ProfileArgs profile = {{"--effective-cores", "2=1.5"}, {}, {}};
  Point baseline;
  baseline.id = "w2";
  baseline.world_size = 2;
  Point cap = baseline;
  cap.bucket_cap_mb = 1;
  EXPECT_EQ(cross_prediction(spec, baseline, cap, profile).args, (std::vector<std::string>{"--bucket-cap-mb", "1"}));
  Point four = baseline;
  four.world_size = 4;
  EXPECT_EQ(cross_prediction(spec, baseline, four, profile).args,
            (std::vector<std::string>{"--world-size", "4", "--independent-copies", "--effective-cores", "2=1.5"}));
  Point hosts = baseline;
  hosts.hosts = 2;
  EXPECT_EQ(cross_prediction(spec, baseline, hosts, profile).args,
            (std::vector<std::string>{"--independent-copies", "--effective-cores", "2=1.5"}));
  // The resume profile's cost goes to every cross prediction, after the layout's flags.
  const ProfileArgs both = {{"--effective-cores", "2=1.5"}, {"--sleep-resume-cost", "0.0002"}, {}};
  EXPECT_EQ(cross_prediction(spec, baseline, cap, both).args,
            (std::vector<std::string>{"--bucket-cap-mb", "1", "--sleep-resume-cost", "0.0002"}));
  // The machine profile goes to every cross prediction too, after the resume cost.
  const ProfileArgs all = {{"--effective-cores", "2=1.5"}, {"--sleep-resume-cost", "0.0002"}, {"--machine", "m.json"}};
  EXPECT_EQ(cross_prediction(spec, baseline, cap, all).args,
            (std::vector<std::string>{"--bucket-cap-mb", "1", "--sleep-resume-cost", "0.0002", "--machine", "m.json"}));
  EXPECT_EQ(cross_prediction(spec, baseline, four, both).args,
            (std::vector<std::string>{"--world-size", "4", "--independent-copies", "--effective-cores", "2=1.5",
                                      "--sleep-resume-cost", "0.0002"}));
}

}  // namespace
}  // namespace ddpsim::experiment
