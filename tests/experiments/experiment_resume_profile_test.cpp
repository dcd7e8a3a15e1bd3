// The resume profile ([predict] resume_profile): sleep_resume_cost.py's pairs pooled into the
// --sleep-resume-cost the cross predictions are charged, and the command that measures a pair.
#include <gtest/gtest.h>

#include "resume_profile.hpp"
#include "spec.hpp"
#include "temp_dir.hpp"

namespace ddpsim::experiment {
namespace {

std::string error_of(const std::vector<std::string>& files) {
  try {
    pool_resume_pairs(files, 0.5);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

class ResumeProfileTest : public ::testing::Test {
 protected:
  std::string file(const std::string& name, const std::string& text) const { return scratch_.write(name, text); }
  const test_support::TempDir scratch_;
};

TEST_F(ResumeProfileTest, PoolsEveryPairOfEveryFileAndChargesTheFractionOfTheirMedian) {
  // Pairs 0.2, 0.6 and 0.3: median 0.3 ms, half of it charged: 0.15 ms = 0.00015 s.
  const auto a = file("a.json", R"({"pairs": [{"resume_cost_ms": 0.2}, {"resume_cost_ms": 0.6}]})");
  const auto b = file("b.json", R"({"pairs": [{"resume_cost_ms": 0.3, "rep": 0}]})");
  const auto profile = pool_resume_pairs({a, scratch_.str() + "/missing.json", b}, 0.5);
  ASSERT_TRUE(profile);
  EXPECT_EQ(profile->pairs, 3);
  EXPECT_DOUBLE_EQ(profile->resume_cost_ms, 0.3);
  EXPECT_DOUBLE_EQ(profile->pair_low_ms, 0.2);
  EXPECT_DOUBLE_EQ(profile->pair_high_ms, 0.6);
  EXPECT_DOUBLE_EQ(profile->charged_s(), 0.00015);
  EXPECT_EQ(sleep_resume_cost_args(*profile), (std::vector<std::string>{"--sleep-resume-cost", "0.0001500"}));
  EXPECT_EQ(describe_resume(*profile),
            "resume cost 0.300 ms per sleep (3 pairs, 0.200..0.600), charged x0.5: 0.150 ms");
  // None measured: no profile, not an error (the caller says what is missing).
  EXPECT_FALSE(pool_resume_pairs({scratch_.str() + "/missing.json"}, 0.5));
}

TEST_F(ResumeProfileTest, AMedianBelowZeroChargesNothing) {
  const auto a = file("a.json", R"({"pairs": [{"resume_cost_ms": -0.1}, {"resume_cost_ms": 0.05}, {"resume_cost_ms": -0.2}]})");
  const auto profile = pool_resume_pairs({a}, 1.0);
  ASSERT_TRUE(profile);
  EXPECT_DOUBLE_EQ(profile->resume_cost_ms, -0.1);
  EXPECT_EQ(profile->charged_s(), 0.0);
  EXPECT_EQ(sleep_resume_cost_args(*profile), (std::vector<std::string>{"--sleep-resume-cost", "0.0000000"}));
}

TEST_F(ResumeProfileTest, FilesThatAreNotPairsAreOneLineErrors) {
  const auto text = file("text.json", "not json");
  EXPECT_EQ(error_of({text}), text + ": expected sleep_resume_cost.py's JSON, got text that is not JSON");
  const auto empty = file("empty.json", R"({"pairs": []})");
  EXPECT_EQ(error_of({empty}), empty + ": expected sleep_resume_cost.py's JSON with a non-empty \"pairs\" array");
  const auto missing = file("missing-cost.json", R"({"pairs": [{"rep": 0}]})");
  EXPECT_EQ(error_of({missing}), missing + ": expected each pair to hold a finite \"resume_cost_ms\", got {\"rep\":0}");
  const auto text_cost = file("text-cost.json", R"({"pairs": [{"resume_cost_ms": "0.2"}]})");
  EXPECT_EQ(error_of({text_cost}),
            text_cost + ": expected each pair to hold a finite \"resume_cost_ms\", got {\"resume_cost_ms\":\"0.2\"}");
}

TEST(ResumeCommand, RunsOneLoneRankPairOfTheWorkload) {
  const auto spec = parse_spec(R"(
[experiment]
name = "slow"
[workload]
model = "mlp"
iterations = 5
batch_size = 64
args = ["--width", "1024"]
[grid]
slowdown = ["", "1=2"]
[predict]
baseline = { slowdown = "" }
resume_profile = 0.5
)", "slow.toml");
  EXPECT_EQ(resume_command(spec, "/b", "/s/sleep_resume_cost.py", "/r/p.json"),
            (Command{"/s/sleep_resume_cost.py", "--bin-dir", "/b", "--out", "/r/p.json", "--repetitions", "1",
                     "--iterations", "8", "--", "--model", "mlp", "--batch-size", "64", "--threads", "1", "--seed",
                     "1", "--optimizer", "sgd", "--lr", "0.01", "--width", "1024"}));
}

}  // namespace
}  // namespace ddpsim::experiment
