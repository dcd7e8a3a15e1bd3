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

// [predict] baseline, world_size_args, [grid] delay_dist / hosts and [launch] (issue #16).
const char* kBaselineSpec = R"(
[workload]
[grid]
bucket_cap_mb = [0.25, 25]
slowdown = ["", "1=2"]
delay_dist = ["", "1=exp:20"]
[launch]
testbed_rate = "200mbit"
hosts = 2
[predict]
baseline = { bucket_cap_mb = 25, slowdown = "", delay_dist = "" }
world_size_args = ["--platform", "two-level"]
)";

TEST(ExperimentSpec, ParsesBaselineLaunchAndNewAxes) {
  const ExperimentSpec spec = parse_spec(kBaselineSpec, "b.toml");
  EXPECT_TRUE(spec.predict.baseline.enabled);
  EXPECT_EQ(spec.predict.baseline.bucket_cap_mb, 25.0);
  EXPECT_EQ(spec.predict.baseline.world_size, 2);  // the grid's only world size
  EXPECT_EQ(spec.predict.baseline.hosts, 2);
  EXPECT_EQ(spec.predict.world_size_args, (std::vector<std::string>{"--platform", "two-level"}));
  EXPECT_EQ(spec.grid.delay_dist[1], (SkewSetting{"1=exp:20"}));
  EXPECT_EQ(spec.grid.hosts, (std::vector<int>{2}));
  EXPECT_EQ(spec.launch.testbed_rate, "200mbit");
  EXPECT_TRUE(spec.launch.testbed());
}

std::string with_predict(const std::string& predict, const std::string& grid = "bucket_cap_mb = [1, 25]\n") {
  return "[workload]\n[grid]\n" + grid + "[predict]\n" + predict;
}

TEST(ExperimentSpecErrors, BaselineMustBeAnUnskewedGridPoint) {
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = 5 }\n")),
            "bad.toml:5: [predict.baseline] bucket_cap_mb: expected one of the [grid] values (1, 25), got 5");
  EXPECT_EQ(error_of(with_predict("baseline = { world_sizes = 2 }\n")),
            "bad.toml:5: [predict] baseline: expected a value for [grid] bucket_cap_mb (it has 2 values), got none");
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = 1, hosts = 2 }\n")),
            "bad.toml:5: [predict.baseline] hosts: expected one of the [grid] values (none: the axis is not in [grid]), got 2");
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = \"1\" }\n")),
            "bad.toml:5: [predict.baseline] bucket_cap_mb: expected a number, got a string");
  EXPECT_EQ(error_of(with_predict("baseline = { cap = 1 }\n")).rfind(
                "bad.toml:5: unknown key 'cap' in [predict.baseline] (expected one of: world_sizes, ", 0),
            0u);
  EXPECT_EQ(error_of(with_predict("baseline = 25\n")),
            "bad.toml:5: [predict] baseline: expected an inline table like { bucket_cap_mb = 25 }, got an integer");
  // Skew: a replay can add it, never remove it.
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = 1, slowdown = \"1=2\" }\n",
                                  "bucket_cap_mb = [1, 25]\nslowdown = [\"\", \"1=2\"]\n")),
            "bad.toml:6: [predict.baseline] slowdown: expected \"\" (no skew: a replay cannot remove skew), got \"1=2\"");
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = 1 }\n",
                                  "bucket_cap_mb = [1, 25]\ndelay = \"1=500@5\"\n")),
            "bad.toml:6: [predict] baseline: expected a point without skew (a replay cannot remove skew), got [grid] delay = \"1=500@5\"");
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = 1 }\n",
                                  "bucket_cap_mb = [1, 25]\ndelay_dist = [\"\", \"1=exp:5\"]\n")),
            "bad.toml:6: [predict] baseline: expected a value for [grid] delay_dist (it has 2 values), got none");
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = 1, delay_dist = \"\" }\n",
                                  "bucket_cap_mb = [1, 25]\ndelay_dist = [\"1=exp:9\", \"1=exp:5\"]\n")),
            "bad.toml:6: [predict.baseline] delay_dist: expected \"\" among the [grid] delay_dist values, got none");
  EXPECT_EQ(error_of(with_predict("world_size_args = \"--cores 2\"\n")),
            "bad.toml:5: [predict] world_size_args: expected an array of strings, got a string");
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = 1 }\n[[predict.whatif]]\nname = \"from-x\"\n")),
            "bad.toml: [predict] what-if 'from-x': expected a name not starting with 'from-' (the "
            "predictions from the baseline are named so)");
}

// [predict] corun_profile: the effective cores of world-size predictions measured in the sitting.
TEST(ExperimentSpec, CorunProfileIsSortedAndNeedsABaseline) {
  const std::string grid = "world_sizes = [2, 4]\n";
  const ExperimentSpec spec =
      parse_spec(with_predict("baseline = { world_sizes = 2 }\ncorun_profile = [4, 2]\n", grid), "p.toml");
  EXPECT_EQ(spec.predict.corun_profile, (std::vector<int>{2, 4}));
  EXPECT_TRUE(parse_spec(with_predict("baseline = { world_sizes = 2 }\n", grid), "p.toml").predict.corun_profile.empty());
  EXPECT_EQ(error_of(with_predict("baseline = { world_sizes = 2 }\ncorun_profile = [1]\n", grid)),
            "bad.toml:6: [predict] corun_profile: expected an integer >= 2, got 1");
  EXPECT_EQ(error_of(with_predict("baseline = { world_sizes = 2 }\ncorun_profile = [2, 2]\n", grid)),
            "bad.toml:6: [predict] corun_profile: expected distinct numbers of co-located ranks, got one twice");
  EXPECT_EQ(error_of(with_predict("corun_profile = 2\n", grid)),
            "bad.toml:5: [predict] corun_profile: expected a [predict] baseline (the profile serves the "
            "predictions from it that change the world size), got none");
  // Measured cores and given ones would be two answers to one question.
  EXPECT_EQ(error_of(with_predict("baseline = { world_sizes = 2 }\nworld_size_args = [\"--cores\", \"2\"]\n"
                                  "corun_profile = [2, 4]\n", grid)),
            "bad.toml:7: [predict] corun_profile: expected no --cores in world_size_args (the profile "
            "measures the effective cores), got one");
  EXPECT_EQ(error_of(with_predict("baseline = { world_sizes = 2 }\nworld_size_args = [\"--effective-cores=4=1.9\"]\n"
                                  "corun_profile = [4]\n", grid)),
            "bad.toml:7: [predict] corun_profile: expected no --effective-cores in world_size_args (the "
            "profile measures the effective cores), got one");
}

// [predict] resume_profile: the fraction of the resume cost measured in the sitting that the
// cross predictions are charged.
TEST(ExperimentSpec, ResumeProfileIsAFractionAndNeedsABaselineAndNoGivenCost) {
  const std::string grid = "slowdown = [\"\", \"1=2\"]\n";
  EXPECT_EQ(parse_spec(with_predict("baseline = { slowdown = \"\" }\nresume_profile = 0.5\n", grid), "p.toml")
                .predict.resume_profile, 0.5);
  EXPECT_EQ(parse_spec(with_predict("baseline = { slowdown = \"\" }\n", grid), "p.toml").predict.resume_profile, 0.0);
  EXPECT_EQ(error_of(with_predict("baseline = { slowdown = \"\" }\nresume_profile = 0\n", grid)),
            "bad.toml:6: [predict] resume_profile: expected a number > 0, got 0");
  EXPECT_EQ(error_of(with_predict("baseline = { slowdown = \"\" }\nresume_profile = 2\n", grid)),
            "bad.toml:6: [predict] resume_profile: expected the fraction of the measured resume cost to "
            "charge, in (0, 1], got 2");
  EXPECT_EQ(error_of(with_predict("resume_profile = 0.5\n", grid)),
            "bad.toml:5: [predict] resume_profile: expected a [predict] baseline (the profile serves the "
            "predictions from it), got none");
  // A measured cost and a given one would be two answers to one question.
  EXPECT_EQ(error_of(with_predict("baseline = { slowdown = \"\" }\nreplay_args = [\"--sleep-resume-cost=0.0001\"]\n"
                                  "resume_profile = 0.5\n", grid)),
            "bad.toml:7: [predict] resume_profile: expected no --sleep-resume-cost in replay_args (the "
            "profile measures it), got one");
}

TEST(ExperimentSpec, FirstBucketCapCanFollowTheCap) {
  const ExperimentSpec spec = parse_spec(
      "[workload]\n[grid]\nbucket_cap_mb = [0.25, 25]\nfirst_bucket_cap_mb = \"bucket_cap_mb\"\n", "f.toml");
  EXPECT_TRUE(spec.grid.first_bucket_cap_follows);
  EXPECT_EQ(error_of("[workload]\n[grid]\nfirst_bucket_cap_mb = \"same\"\n"),
            "bad.toml:3: [grid] first_bucket_cap_mb: expected a number, an array of numbers or "
            "\"bucket_cap_mb\" (the same cap as the other buckets), got \"same\"");
}

TEST(ExperimentSpecErrors, LaunchOnTheTestbed) {
  EXPECT_EQ(error_of("[workload]\n[launch]\ntestbed_rate = \"fast\"\nhosts = 2\n"),
            "bad.toml:3: [launch] testbed_rate: expected a rate in tc units like \"200mbit\", got \"fast\"");
  EXPECT_EQ(error_of("[workload]\n[launch]\ntestbed_rate = \"200mbit\"\n"),
            "bad.toml: [launch] hosts: expected a number of hosts (or a [grid] hosts axis) with "
            "testbed_rate, got none");
  EXPECT_EQ(error_of("[workload]\n[launch]\nhosts = 2\n"),
            "bad.toml: [launch] testbed_rate: expected a rate (several hosts run on "
            "scripts/testbed.sh), got none");
  EXPECT_EQ(error_of("[workload]\n[grid]\nworld_sizes = [2, 3]\n[launch]\ntestbed_rate = \"1gbit\"\nhosts = 2\n"),
            "bad.toml: [grid] world_sizes: expected a multiple of hosts = 2 (ranks per host = "
            "world size / hosts), got 3");
  EXPECT_EQ(error_of("[workload]\n[grid]\nhosts = [1, 2]\n[launch]\ntestbed_rate = \"1gbit\"\nhosts = 2\n"),
            "bad.toml:6: [launch] hosts: expected hosts in one place, got [grid] hosts too");
  EXPECT_EQ(error_of("[workload]\n[launch]\ntestbed_rate = \"1gbit\"\nhosts = 0\n"),
            "bad.toml:4: [launch] hosts: expected an integer >= 1, got 0");
  EXPECT_EQ(error_of("[workload]\n[launch]\nrate = \"1gbit\"\n").rfind(
                "bad.toml:3: unknown key 'rate' in [launch]", 0),
            0u);
}

TEST(ExperimentSpec, HoldCoresIsOffUnlessTheSpecAsks) {
  EXPECT_FALSE(parse_spec("[workload]\n", "h.toml").launch.hold_cores);
  const ExperimentSpec held = parse_spec("[workload]\n[launch]\nhold_cores = true\n", "h.toml");
  EXPECT_TRUE(held.launch.hold_cores);
  EXPECT_FALSE(held.launch.testbed());  // holding the cores is no testbed
  EXPECT_EQ(error_of("[workload]\n[launch]\nhold_cores = 1\n"),
            "bad.toml:3: [launch] hold_cores: expected a boolean, got an integer");
}

// Issue #19, found by fuzz_experiment_spec (tests/experiments/fuzz_experiment_spec.cpp; its
// corpus keeps each input that failed).
TEST(ExperimentSpecErrors, AtMostAHundredThousandRuns) {
  EXPECT_EQ(parse_spec("[experiment]\nrepetitions = 100000\n[workload]\n", "ok.toml").repetitions,
            100000);
  // repetitions = 1000000000 was accepted; ddp-experiment --dry-run then grew past 20 GB.
  EXPECT_EQ(error_of("[experiment]\nrepetitions = 1000000000\n[workload]\n"),
            "bad.toml: [experiment] repetitions x [grid] points: expected at most 100000 runs, got "
            "1000000000 x 1 = 1000000000");
  // 2 x 5 x 2 x 2 x 2 x 2 x 2 points (every axis) x 400 repetitions = 128,000 runs.
  EXPECT_EQ(error_of("[experiment]\nrepetitions = 400\n[workload]\n[grid]\n"
                     "world_sizes = [2, 4]\nbucket_cap_mb = [1, 2, 3, 4, 5]\n"
                     "first_bucket_cap_mb = [1, 2]\nslowdown = [\"\", \"1=2\"]\n"
                     "delay = [\"\", \"1=5\"]\ndelay_dist = [\"\", \"1=exp:5\"]\n"
                     "timeout_s = [1, 2]\n"),
            "bad.toml: [experiment] repetitions x [grid] points: expected at most 100000 runs, got "
            "400 x 320 = 128000");
}

TEST(ExperimentSpecErrors, NonAsciiOnlyInComments) {
  // toml++ 3.3.0 reaches __builtin_unreachable() on most non-ASCII characters it asks "is this
  // whitespace?" about: they are refused before it sees them, but in comments.
  const auto spec = parse_spec("\xEF\xBB\xBF# caf\xC3\xA9\n[experiment] # \xE3\x81\x82\n"
                               "description = \"caf\\u00e9 # not a comment\"\n[workload]\n",
                               "ok.toml");
  EXPECT_EQ(spec.description, "caf\xC3\xA9 # not a comment");
  const std::string refused = ": expected ASCII characters outside comments (in a \"string\", "
                              "write others as \\uXXXX), got the byte ";
  EXPECT_EQ(error_of("[workload]\nmodel=\xC9\xBC\n"), "bad.toml:2" + refused + "0xC9");
  EXPECT_EQ(error_of("[workload]\n\"\xC3\xA9\" = 1\n"), "bad.toml:2" + refused + "0xC3");
  EXPECT_EQ(error_of("[workload]\nmodel = \"a # \xC3\xA9\"\n"), "bad.toml:2" + refused + "0xC3");
  EXPECT_EQ(error_of("[experiment]\ndescription = \"\"\"a \\\n  \xC3\xA9\"\"\"\n[workload]\n"),
            "bad.toml:3" + refused + "0xC3");
  // An escaped quote before two quotes does not close a """string""": the next line is still in
  // it, not a comment, and its backslash makes toml++ ask about the character after it.
  EXPECT_EQ(error_of("[experiment]\ndescription = \"\"\"a\\\"\"\"\n#\\\xC3\xA9\"\"\"\n[workload]\n"),
            "bad.toml:3" + refused + "0xC3");
}

TEST(ExperimentSpecErrors, EveryMessageIsOneLine) {
  // A line break in a quoted value, and in the text toml++ quotes in a parse error.
  EXPECT_EQ(error_of("[workload]\n[launch]\ntestbed_rate = \"1\\nbit\"\n"),
            "bad.toml:3: [launch] testbed_rate: expected a rate in tc units like \"200mbit\", got "
            "\"1?bit\"");
  EXPECT_EQ(error_of("[workload]\nlr = n\n").rfind("bad.toml:2:", 0), 0u);
  // Malformed table headers (toml++ asserts a precondition they break, marzer/tomlplusplus#301).
  EXPECT_EQ(error_of("[workload]\n[\n").rfind("bad.toml:2:", 0), 0u);
  EXPECT_EQ(error_of("[[[1]]]\n").rfind("bad.toml:1:", 0), 0u);
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

namespace ddpsim::experiment {
namespace {

// [predict] machine_profile: the sitting's machine, measured launched as the baseline's job.
TEST(ExperimentSpec, MachineProfileNeedsABaselineAndNoGivenMachine) {
  EXPECT_TRUE(parse_spec(with_predict("baseline = { bucket_cap_mb = 25 }\nmachine_profile = true\n"), "p.toml")
                  .predict.machine_profile);
  EXPECT_FALSE(parse_spec(with_predict("baseline = { bucket_cap_mb = 25 }\n"), "p.toml").predict.machine_profile);
  EXPECT_EQ(error_of(with_predict("machine_profile = true\n")),
            "bad.toml:5: [predict] machine_profile: expected a [predict] baseline (the profile is measured "
            "launched as the baseline's job), got none");
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = 25 }\nreplay_args = [\"--machine\", \"m.json\"]\n"
                                  "machine_profile = true\n")),
            "bad.toml:7: [predict] machine_profile: expected no --machine in replay_args (the sitting "
            "measures it), got one");
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = 25 }\nmachine_profile = 1\n")),
            "bad.toml:6: [predict] machine_profile: expected a boolean, got an integer");
}

// [predict] network: the replays' network from the trace's fit (the default) or from the
// sitting's machine profile, which must then be measured.
TEST(ExperimentSpec, NetworkIsTheTracesOrTheMeasuredMachines) {
  const std::string base = "baseline = { bucket_cap_mb = 25 }\nmachine_profile = true\n";
  EXPECT_EQ(parse_spec(with_predict(base), "p.toml").predict.network, "trace");
  EXPECT_EQ(parse_spec(with_predict(base + "network = \"machine\"\n"), "p.toml").predict.network, "machine");
  EXPECT_EQ(parse_spec(with_predict(base + "network = \"trace\"\n"), "p.toml").predict.network, "trace");
  EXPECT_EQ(error_of(with_predict(base + "network = \"profile\"\n")),
            "bad.toml:7: [predict] network: expected \"trace\" or \"machine\", got \"profile\"");
  EXPECT_EQ(error_of(with_predict("baseline = { bucket_cap_mb = 25 }\nnetwork = \"machine\"\n")),
            "bad.toml:6: [predict] network: expected machine_profile = true beside \"machine\" (the profile "
            "measured in the sitting is the network), got none");
  EXPECT_EQ(error_of(with_predict(base + "network = true\n")),
            "bad.toml:7: [predict] network: expected a string, got a boolean");
}

}  // namespace
}  // namespace ddpsim::experiment
