// [advice] experiments: the spec table, reading ddp-sim advise's JSON, the checks' own
// measurements, and the runner end to end against stand-in tools (shell scripts with the real
// tools' command lines) that record how they were called.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "advice_check.hpp"
#include "advice_read.hpp"
#include "runner.hpp"
#include "spec.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace ddpsim::experiment {
namespace {

const std::string kHeader = R"(
[experiment]
name = "adv"
repetitions = 2
[workload]
iterations = 4
)";

std::string spec_error(const std::string& text) {
  try {
    parse_spec(kHeader + text, "adv.toml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(AdviceSpec, ParsesTheTimeoutCheck) {
  const auto spec = parse_spec(kHeader + R"(
[advice]
kind = "timeout"
follow_factor = 3
follow_runs = 2
hang_runs = 1
hang_rank = 1
hang_iteration = 2
hang_stall_factor = 4
advise_args = ["--bucket-caps", "25"]
)", "adv.toml");
  EXPECT_EQ(spec.advice.kind, "timeout");
  EXPECT_TRUE(spec.advice.enabled());
  EXPECT_EQ(spec.advice.follow_factor, 3);
  EXPECT_EQ(spec.advice.follow_runs, 2);
  EXPECT_EQ(spec.advice.hang_iteration, 2);
  EXPECT_DOUBLE_EQ(spec.advice.hang_stall_factor, 4);
  EXPECT_EQ(spec.advice.advise_args, (std::vector<std::string>{"--bucket-caps", "25"}));
  EXPECT_FALSE(parse_spec(kHeader, "adv.toml").advice.enabled());
}

TEST(AdviceSpec, RefusesWhatItCannotRunInOneLine) {
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"[advice]\nkind = \"speed\"\n", "adv.toml:8: [advice] kind: expected \"timeout\", \"bucket\" or \"stragglers\", got \"speed\""},
           {"[advice]\nfollow_runs = 1\n", "[advice] kind: expected \"timeout\", \"bucket\" or \"stragglers\", got none"},
           {"[advice]\nkind = \"bucket\"\nfollow_runs = 2\n", "[advice] follow_runs: expected only with kind = \"timeout\""},
           {"[advice]\nkind = \"timeout\"\nhang_rank = 2\n", "[advice] hang_rank: expected a rank below the world size 2, got 2"},
           {"[advice]\nkind = \"timeout\"\nhang_iteration = 4\n", "[advice] hang_iteration: expected an iteration below [workload] iterations = 4"},
           {"[advice]\nkind = \"timeout\"\nhang_stall_factor = 1\n", "[advice] hang_stall_factor: expected a number > 1"},
           {"[grid]\ntimeout_s = [1]\n[advice]\nkind = \"timeout\"\n", "expected no [grid] timeout_s (the advice sets it)"},
           {"[grid]\nslowdown = [\"\", \"1=2\"]\n[advice]\nkind = \"timeout\"\n", "expected one value of [grid] slowdown, got 2"},
           {"[grid]\nbucket_cap_mb = [1, 25]\n[advice]\nkind = \"stragglers\"\n", "expected one value of [grid] bucket_cap_mb"},
           {"[advice]\nkind = \"bucket\"\n[predict]\nenabled = true\n", "[predict]: expected none with [advice]"},
       }) {
    const std::string message = spec_error(text);
    EXPECT_NE(message.find(expected), std::string::npos) << text << " -> " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
  const std::string one_rep = R"(
[experiment]
repetitions = 1
[workload]
[advice]
kind = "bucket"
)";
  try {
    parse_spec(one_rep, "b.toml");
    FAIL() << "a bucket check of one repetition was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("expected [experiment] repetitions >= 2"), std::string::npos) << e.what();
  }
}

// The fields advise writes (simulator/src/advice/): a bucket answer over three caps, where 5 MiB
// is the advised change from the trace's 25.
const char* kAdviceJson = R"({
  "bucket": {"available": true, "keep": false, "recommended_bucket_cap_mb": 5.0,
    "own": {"bucket_cap_mb": 25.0, "buckets": 2, "median_iteration_s": 0.100, "interval_s": [0.095, 0.105]},
    "candidates": [
      {"bucket_cap_mb": 1.0, "buckets": 8, "median_iteration_s": 0.120, "interval_s": [0.110, 0.130]},
      {"bucket_cap_mb": 5.0, "buckets": 4, "median_iteration_s": 0.080, "interval_s": [0.076, 0.084]},
      {"bucket_cap_mb": 25.0, "buckets": 2, "median_iteration_s": 0.100, "interval_s": [0.095, 0.105]}]},
  "timeout": {"available": true, "timeout_s": 0.25, "time_to_detect_s": 0.3, "detection_time_s": 0.4, "hang_rank": 1},
  "stragglers": {"named": [3, 1]}
})";

TEST(ReadAdvice, ReadsTheAdvisedValues) {
  const auto a = read_advice(kAdviceJson, "a.json");
  EXPECT_DOUBLE_EQ(*a.timeout_s, 0.25);
  EXPECT_DOUBLE_EQ(*a.detect_s, 0.4);  // the bound advise states, not the replayed time
  EXPECT_DOUBLE_EQ(*a.replayed_detect_s, 0.3);
  EXPECT_EQ(*a.hang_rank, 1);
  EXPECT_EQ(*a.keep, false);
  EXPECT_DOUBLE_EQ(*a.own_cap_mb, 25);
  EXPECT_DOUBLE_EQ(*a.compared_cap_mb, 5);
  EXPECT_NEAR(*a.predicted_gain, 0.2, 1e-12);
  // Without advise's own interval: each end against the other cap's far end.
  EXPECT_NEAR(a.predicted_gain_interval->first, 1 - 0.084 / 0.095, 1e-12);
  EXPECT_NEAR(a.predicted_gain_interval->second, 1 - 0.076 / 0.105, 1e-12);
  EXPECT_EQ(*a.named_stragglers, (std::vector<int>{1, 3}));
}

TEST(ReadAdvice, KeepComparesTheFastestOtherLayoutAndTakesAdvisesOwnInterval) {
  std::string text = kAdviceJson;
  text.replace(text.find("\"keep\": false"), 13, "\"keep\": true");
  // A cap with the own layout (2 buckets) replays the same job: never the one compared.
  text.replace(text.find("{\"bucket_cap_mb\": 1.0, \"buckets\": 8, \"median_iteration_s\": 0.120"), 63,
               "{\"bucket_cap_mb\": 50.0, \"buckets\": 2, \"median_iteration_s\": 0.070");
  auto a = read_advice(text, "a.json");
  EXPECT_TRUE(*a.keep);
  EXPECT_DOUBLE_EQ(*a.compared_cap_mb, 5);
  // advise's paired interval is of "best" over "own": taken for the cap compared when it is best.
  std::string changed = kAdviceJson;
  changed.replace(changed.find("\"keep\""), 0, "\"gain\": 0.15, \"gain_interval\": [0.1, 0.3], \"best\": {\"bucket_cap_mb\": 5, "
                  "\"buckets\": 4, \"median_iteration_s\": 0.080, \"interval_s\": [0.076, 0.084]}, ");
  a = read_advice(changed, "a.json");
  EXPECT_DOUBLE_EQ(*a.predicted_gain, 0.15);  // advise's point, the median of the same pairs
  EXPECT_DOUBLE_EQ(a.predicted_gain_interval->first, 0.1);
  EXPECT_DOUBLE_EQ(a.predicted_gain_interval->second, 0.3);
  // A candidate's own paired gain wins: it is the compared cap's whether or not it is best.
  std::string per_candidate = kAdviceJson;
  const std::string five_interval = "\"interval_s\": [0.076, 0.084]}";
  per_candidate.replace(per_candidate.find(five_interval), five_interval.size(),
                        "\"interval_s\": [0.076, 0.084], \"gain\": 0.18, \"gain_interval\": [0.17, 0.22]}");
  a = read_advice(per_candidate, "a.json");
  EXPECT_DOUBLE_EQ(*a.predicted_gain, 0.18);
  EXPECT_DOUBLE_EQ(a.predicted_gain_interval->first, 0.17);
  EXPECT_DOUBLE_EQ(a.predicted_gain_interval->second, 0.22);
  // With advise --repeats, the interval runs are compared with is the one widened by their drift.
  std::string drifting = per_candidate;
  drifting.replace(drifting.find("\"gain_interval\": [0.17, 0.22]}"), 30,
                   "\"gain_interval\": [0.17, 0.22], \"drift_gain_interval\": [0.05, 0.3]}");
  a = read_advice(drifting, "a.json");
  EXPECT_DOUBLE_EQ(*a.predicted_gain, 0.18);
  EXPECT_DOUBLE_EQ(a.predicted_gain_interval->first, 0.05);
  EXPECT_DOUBLE_EQ(a.predicted_gain_interval->second, 0.3);
  changed.replace(changed.find("\"bucket_cap_mb\": 5, \"buckets\": 4, \"median_iteration_s\": 0.080"), 20, "\"bucket_cap_mb\": 1, ");
  a = read_advice(changed, "a.json");
  EXPECT_NEAR(a.predicted_gain_interval->first, 1 - 0.084 / 0.095, 1e-12);
}

TEST(ReadAdvice, UnavailableSectionsStayUnsetAndBadTextIsOneLine) {
  const auto a = read_advice(R"({"timeout": {"available": false, "timeout_s": 1}})", "a.json");
  EXPECT_FALSE(a.timeout_s);
  EXPECT_FALSE(a.compared_cap_mb);
  EXPECT_FALSE(a.named_stragglers);
  // advise without the stated bound: the replayed detection time stands for it.
  EXPECT_DOUBLE_EQ(*read_advice(R"({"timeout": {"timeout_s": 1, "time_to_detect_s": 2}})", "a.json").detect_s, 2);
  try {
    read_advice("timeout=1", "a.json");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "a.json: expected ddp-sim advise's JSON, got text that is not JSON");
  }
  EXPECT_THROW(read_advice("[1]", "a.json"), std::runtime_error);
  // nlohmann-json reports a number too large for a double as out_of_range, not as a parse error.
  try {
    read_advice(R"({"timeout": {"timeout_s": 1e400}})", "a.json");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "a.json: expected ddp-sim advise's JSON, got text that is not JSON");
  }
}

TEST(AdviceCheck, SlowedRanksAreTheFactorsAboveOne) {
  EXPECT_EQ(slowed_ranks({"3=1.5", "1=1.0", "0=2"}, 4), (std::vector<int>{0, 3}));
  EXPECT_EQ(slowed_ranks({"all=1.1"}, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(slowed_ranks({}, 4).empty());
  EXPECT_THROW(slowed_ranks({"1:2"}, 4), std::runtime_error);
  EXPECT_THROW(slowed_ranks({"x=2"}, 4), std::runtime_error);
  EXPECT_EQ(hang_stall_ms(0.2001, 5), 1001);
}

TEST(AdviceCheck, DetectionTimeIsTheFirstFailureAfterTheStall) {
  const test_support::TempDir dir;
  const std::string header = "rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message\n";
  std::ofstream(dir.str() + "/rank-0.events.csv")
      << header << "0,2,allreduce_begin,1000000000,0,,,,,\n0,2,failure,1400000000,0,,,,timeout,waited\n";
  std::ofstream(dir.str() + "/rank-1.events.csv")
      << header << "1,2,delay,1100000000,,,,,,\n1,2,failure,1900000000,,,,,peer_closed,x\n";
  EXPECT_NEAR(*detection_time_s(dir.str(), 2, 1), 0.3, 1e-9);
  EXPECT_FALSE(detection_time_s(dir.str(), 2, 0));  // rank 0 never stalled
  EXPECT_FALSE(detection_time_s(dir.str() + "/none", 2, 1));
}

TEST(AdviceCheck, RowsQuoteWhatCsvNeeds) {
  const std::string line = advice_row_line({{"experiment", "adv"}, {"failure", "rank 0: \"x\", y"}, {"rep", "1"}});
  EXPECT_EQ(line.substr(0, 4), "adv,");
  EXPECT_NE(line.find(",\"rank 0: \"\"x\"\", y\","), std::string::npos) << line;
  const std::string header = advice_header_line();
  EXPECT_EQ(std::count(header.begin(), header.end(), ','),
            static_cast<long>(advice_columns().size() - 1));
  EXPECT_EQ(rank_list({1, 3}), "1;3");
}

// ddp-launch: records its command line; the trace's median is 0.4 s at a cap other than 25, 0.5
// at 25; a job with --delay leaves a timeout in its trace and events 0.3 s apart (the stall,
// then rank 0's failure); a job whose command line holds the text of `fail-match` times out.
const char* kFakeLaunch = R"SH(#!/bin/bash
here="$(dirname "$0")"; dir=""; prev=""; cap=25; slow=""
if [[ " $* " == *"/ddp-machine-profile "* ]]; then
  echo "$*" >> "$here/machine.log"; [ -f "$here/machine-fails" ] && exit 3
  for a in "$@"; do [ "$prev" = "--out" ] && echo '{}' > "$a"; prev="$a"; done; exit 0
fi
for a in "$@"; do
  [ "$prev" = "--trace-dir" ] && dir="$a"; [ "$prev" = "--bucket-cap-mb" ] && cap="$a"
  [ "$prev" = "--slowdown" ] && slow="$slow $a"; prev="$a"
done
echo "$*" >> "$here/launch.log"
mkdir -p "$dir"; echo "$cap" > "$dir/cap"; echo "$slow" > "$dir/slow"
h="rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message"
if [[ " $* " == *" --delay "* ]] || { [ -f "$here/fail-match" ] && [[ "$*" == *"$(cat "$here/fail-match")"* ]]; }; then
  touch "$dir/failure"
  printf '%s\n1,2,delay,1000000000,,,,,,\n' "$h" > "$dir/rank-1.events.csv"
  printf '%s\n0,2,failure,1300000000,0,,,,timeout,t\n' "$h" > "$dir/rank-0.events.csv"
  exit 1
fi
)SH";

const char* kFakeTrace = R"SH(#!/bin/bash
dir="$2"; t=0.5; [ "$(cat "$dir/cap")" = 25 ] || t=0.4
f='[]'; [ -f "$dir/failure" ] && f='["rank 1 iteration 2 bucket 0: peer_closed: gone", "rank 0 iteration 2 bucket 0: timeout: waited"]'
echo "{\"world_size\": 2, \"median_iteration_s\": $t, \"iterations\": [{}, {}], \"failures\": $f}"
)SH";

// ddp-sim advise TRACE --json FILE: timeout 0.2 s (detected in 0.35 s), cap 25 -> 5, and the
// ranks the trace's --slowdown flags name with a factor of 1.5 or more.
const char* kFakeSim = R"SH(#!/bin/bash
here="$(dirname "$0")"; echo "$*" >> "$here/sim.log"
[ "$1" = advise ] || exit 2
named=$(for f in $(cat "$2/slow"); do awk -F= '$2 >= 1.5 {print $1}' <<< "$f"; done | paste -sd, -)
cat > "$4" <<EOF
{"timeout": {"timeout_s": 0.2, "time_to_detect_s": 0.35, "hang_rank": 1},
 "bucket": {"keep": false, "recommended_bucket_cap_mb": 5,
   "own": {"bucket_cap_mb": 25, "buckets": 2, "median_iteration_s": 0.5, "interval_s": [0.45, 0.55]},
   "candidates": [{"bucket_cap_mb": 5, "buckets": 4, "median_iteration_s": 0.4, "interval_s": [0.38, 0.42]}]},
 "stragglers": {"named": [$named]}}
EOF
)SH";

class AdviceRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = scratch_.str();
    bin_ = root_ + "/bin";
    fs::create_directories(bin_);
    for (const auto& [name, text] : {std::pair{"ddp-launch", kFakeLaunch}, {"ddp-trace", kFakeTrace}, {"ddp-sim", kFakeSim}}) {
      std::ofstream(bin_ + "/" + name) << text;
      ::chmod((bin_ + "/" + name).c_str(), 0755);
    }
    options_.out_root = root_ + "/results";
    options_.bin_dir = bin_;
  }
  int run(const std::string& text) {
    std::ostringstream out, err;
    const int status = run_experiment(parse_spec(text, root_ + "/adv.toml"), options_, out, err);
    stderr_ = err.str();
    return status;
  }
  std::vector<std::string> lines(const std::string& path) const {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  // advice.csv as rows of column -> text (no field of these tests holds a comma).
  std::vector<std::map<std::string, std::string>> rows() const {
    const auto text = lines(options_.out_root + "/adv/advice.csv");
    std::vector<std::map<std::string, std::string>> out;
    for (size_t i = 1; i < text.size(); ++i) {
      std::stringstream s(text[i]);
      std::map<std::string, std::string> row;
      for (const auto& column : advice_columns()) std::getline(s, row[column], ',');
      out.push_back(row);
    }
    return out;
  }

  const test_support::TempDir scratch_;
  std::string root_, bin_, stderr_;
  RunOptions options_;
};

TEST_F(AdviceRunnerTest, TimeoutFollowsTheAdvisedTimeoutAndMeasuresTheHang) {
  ASSERT_EQ(run(kHeader + R"(
[advice]
kind = "timeout"
follow_factor = 10
hang_iteration = 2
)"), 0) << stderr_;
  const auto launches = lines(bin_ + "/launch.log");
  ASSERT_EQ(launches.size(), 6u);  // 2 repetitions x (baseline, follow, hang)
  EXPECT_EQ(launches[0].find("--timeout"), std::string::npos);
  EXPECT_NE(launches[1].find("--iterations 40 "), std::string::npos) << launches[1];
  EXPECT_NE(launches[1].find("--timeout 0.2 "), std::string::npos) << launches[1];
  EXPECT_NE(launches[2].find("--timeout 0.2 --delay 1=1000@2 "), std::string::npos) << launches[2];
  const auto r = rows();
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].at("role"), "baseline");
  EXPECT_EQ(r[0].at("advised_timeout_s"), "0.2");
  EXPECT_EQ(r[1].at("role"), "follow");
  EXPECT_EQ(r[1].at("status"), "ok");
  EXPECT_EQ(r[2].at("role"), "hang");
  EXPECT_EQ(r[2].at("status"), "failed");
  EXPECT_EQ(r[2].at("failure"), "rank 0 iteration 2 bucket 0: timeout: waited");  // the timeout, not the peer
  EXPECT_NEAR(std::stod(r[2].at("measured_detect_s")), 0.3, 1e-9);
  EXPECT_EQ(r[2].at("advised_detect_s"), "0.35");
  // A false timeout on a followed run is an outcome (status failed), not a broken run.
  std::ofstream(bin_ + "/fail-match") << "--iterations 40";
  EXPECT_EQ(run(kHeader + "[advice]\nkind = \"timeout\"\n"), 0) << stderr_;
  EXPECT_EQ(rows().at(1).at("status"), "failed");
  EXPECT_EQ(rows().size(), 6u);  // started over: the first call's rows are gone
}

TEST_F(AdviceRunnerTest, BucketAlternatesTheOwnAndTheAdvisedCap) {
  ASSERT_EQ(run(kHeader + "[grid]\nbucket_cap_mb = [25]\n[advice]\nkind = \"bucket\"\n"), 0) << stderr_;
  const auto r = rows();
  ASSERT_EQ(r.size(), 5u);
  std::vector<std::string> order;
  for (const auto& row : r) order.push_back(row.at("role") + "@" + row.at("bucket_cap_mb"));
  EXPECT_EQ(order, (std::vector<std::string>{"baseline@25", "own@25", "other@5", "other@5", "own@25"}));
  EXPECT_EQ(r[2].at("median_iteration_s"), "0.4");
  EXPECT_EQ(r[2].at("compared_cap_mb"), "5");
  EXPECT_EQ(r[2].at("keep"), "false");
  EXPECT_NEAR(std::stod(r[2].at("predicted_gain")), 0.2, 1e-12);
}

// baseline_runs = 3: two plain runs of the own cap, then the advised baseline, whose advise
// gets the two as --repeats; the key belongs to the bucket check alone.
TEST_F(AdviceRunnerTest, BaselineRunsAreGivenToAdviseAsRepeats) {
  ASSERT_EQ(run(kHeader + "[grid]\nbucket_cap_mb = [25]\n[advice]\nkind = \"bucket\"\nbaseline_runs = 3\n"), 0) << stderr_;
  std::vector<std::string> order;
  for (const auto& row : rows()) order.push_back(row.at("role") + "@" + row.at("bucket_cap_mb"));
  EXPECT_EQ(order, (std::vector<std::string>{"baseline_repeat@25", "baseline_repeat@25", "baseline@25", "own@25",
                                             "other@5", "other@5", "own@25"}));
  std::vector<std::string> advised;
  for (const auto& line : lines(bin_ + "/sim.log"))
    if (line.rfind("advise ", 0) == 0) advised.push_back(line);
  ASSERT_EQ(advised.size(), 1u);
  const std::string traces = options_.out_root + "/adv/traces/";
  EXPECT_NE(advised[0].find("--repeats " + traces + "cap25-base1 " + traces + "cap25-base2"), std::string::npos)
      << advised[0];
  EXPECT_NE(spec_error("[advice]\nkind = \"timeout\"\nbaseline_runs = 2\n")
                .find("[advice] baseline_runs: expected only with kind = \"bucket\""),
            std::string::npos);
  EXPECT_NE(spec_error("[advice]\nkind = \"bucket\"\nbaseline_runs = 0\n").find("baseline_runs"), std::string::npos);
}

TEST_F(AdviceRunnerTest, AMachineProfileIsMeasuredOnceAndGivenToEveryAdvise) {
  const std::string spec = kHeader + "[grid]\nbucket_cap_mb = [25, 1]\n[advice]\nkind = \"bucket\"\nmachine_profile = true\n";
  ASSERT_EQ(run(spec), 0) << stderr_;
  const auto measured = lines(bin_ + "/machine.log");
  ASSERT_EQ(measured.size(), 1u);
  const std::string machine = options_.out_root + "/adv/machine.json";
  EXPECT_NE(measured[0].find("--out " + machine), std::string::npos) << measured[0];
  int advised = 0;
  for (const auto& line : lines(bin_ + "/sim.log")) {
    if (line.rfind("advise ", 0) != 0) continue;
    ++advised;
    EXPECT_NE(line.find("--machine " + machine), std::string::npos) << line;
  }
  EXPECT_EQ(advised, 2);  // one baseline per own cap
  // A profile that fails stops the experiment before any job, in one line.
  std::ofstream(bin_ + "/machine-fails") << "";
  std::ostringstream out, err;
  EXPECT_EQ(run_experiment(parse_spec(spec, root_ + "/adv.toml"), options_, out, err), 1);
  const std::string said = out.str();
  EXPECT_EQ(said.rfind("adv: the machine profile failed: ", 0), 0u) << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
  // Told twice is refused.
  EXPECT_NE(spec_error("[advice]\nkind = \"bucket\"\nmachine_profile = true\nadvise_args = [\"--machine\", \"m.json\"]\n")
                .find("[advice] machine_profile: expected no --machine in advise_args beside it"),
            std::string::npos);
}

TEST_F(AdviceRunnerTest, StragglersAdviseEveryRunAndRecordTheRanksSlowed) {
  ASSERT_EQ(run(R"(
[experiment]
name = "adv"
repetitions = 1
[workload]
[grid]
world_sizes = [4]
slowdown = ["", "1=1.1", ["0=2", "3=1.5"]]
[advice]
kind = "stragglers"
)"), 0) << stderr_;
  const auto r = rows();
  ASSERT_EQ(r.size(), 3u);
  std::map<std::string, std::pair<std::string, std::string>> by_slowdown;
  for (const auto& row : r) by_slowdown[row.at("slowdown")] = {row.at("slowed_ranks"), row.at("named_ranks")};
  EXPECT_EQ(by_slowdown[""], (std::pair<std::string, std::string>{"", ""}));
  EXPECT_EQ(by_slowdown["1=1.1"], (std::pair<std::string, std::string>{"1", ""}));
  EXPECT_EQ(by_slowdown["0=2 3=1.5"], (std::pair<std::string, std::string>{"0;3", "0;3"}));
  EXPECT_EQ(lines(bin_ + "/sim.log").size(), 3u);
}

TEST_F(AdviceRunnerTest, ABrokenAdviseIsAnErrorRowAndExitOne) {
  std::ofstream(bin_ + "/ddp-sim") << "#!/bin/bash\necho 'ddp-sim: trace too short' >&2; exit 2\n";
  EXPECT_EQ(run(kHeader + "[advice]\nkind = \"timeout\"\n"), 1);
  const auto r = rows();
  ASSERT_EQ(r.size(), 2u);  // each repetition's baseline, nothing followed
  EXPECT_EQ(r[0].at("status"), "error");
  EXPECT_NE(r[0].at("failure").find("trace too short"), std::string::npos) << r[0].at("failure");
}

}  // namespace
}  // namespace ddpsim::experiment
