// Issue #19: a bad-input table per tool (ddp-trace, ddp-experiment, ddp-launch, ddp-train; the
// simulator has its own). One row: argv -> exit status and a substring of the one-line error.
// Every row also checks that stderr is exactly one line and that nothing was written where the
// row names an output. Exit status: 2 when the command line or a file it names cannot be used
// (usage), 1 when the work itself fails.
//
// Unreadable/unwritable paths: the tests run as root, for whom permission bits do not stop a
// read or a write, so "unwritable" is a path under a regular file ({file}/x) or under /proc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bad_numbers.hpp"
#include "ddpsim/trace/io.hpp"
#include "run_process.hpp"
#include "test_support.hpp"
#ifdef DDP_TRAIN_BIN
#include "train_numeric_flags.hpp"
#endif

namespace {

namespace fs = std::filesystem;

using ddpsim::launch::testing::within;
using ddpsim::launch::testing::lines_of;
using ddpsim::launch::testing::run_process;
using ddpsim::trace::testing::TempDir;

struct Row {
  std::vector<std::string> args;  // after the binary; {tmp} {file} {dir} {trace} {none} expand
  int status;
  std::string error;            // a substring of the one line on stderr
  std::string must_not_exist;   // an output the row must not leave (expanded), or ""
};

std::string row_name(const ::testing::TestParamInfo<Row>& info) {
  return "row" + std::to_string(info.index);
}

// The scratch folder of a row: a regular file, an empty directory and a small valid trace.
class Scratch {
 public:
  Scratch() {
    std::ofstream(tmp_ / "afile") << "not what any tool reads\n";
    fs::create_directories(tmp_.path() / "adir");
    ddpsim::trace::write_trace(tmp_ / "trace", ddpsim::trace::testing::example_trace(2, 3));
  }
  std::string expand(std::string text) const {
    const std::pair<std::string, std::string> names[] = {
        {"{file}", tmp_ / "afile"}, {"{dir}", tmp_ / "adir"}, {"{trace}", tmp_ / "trace"},
        {"{none}", tmp_ / "missing"}, {"{tmp}", tmp_.str()}};
    for (const auto& [name, value] : names) {
      for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at)) {
        text.replace(at, name.size(), value);
      }
    }
    return text;
  }
  std::string path(const std::string& name) const { return tmp_ / name; }

 private:
  TempDir tmp_;
};

void check_row(const std::string& binary, const Row& row, const Scratch& scratch,
               std::vector<std::string> prefix = {}) {
  std::vector<std::string> argv = {binary};
  for (auto& arg : prefix) argv.push_back(scratch.expand(arg));
  for (const auto& arg : row.args) argv.push_back(scratch.expand(arg));
  std::string shown;
  for (const auto& arg : argv) shown += arg + " ";
  SCOPED_TRACE(shown);
  const auto result = run_process(argv, within(60));
  ASSERT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code(), row.status) << result.err;
  const auto lines = lines_of(result.err);
  EXPECT_EQ(lines.size(), 1u) << result.err;
  EXPECT_NE(result.err.find(scratch.expand(row.error)), std::string::npos)
      << "expected \"" << scratch.expand(row.error) << "\" in: " << result.err;
  if (!row.must_not_exist.empty()) {
    const std::string output = scratch.expand(row.must_not_exist);
    EXPECT_FALSE(fs::exists(output)) << output << " was written";
    // Nor its temporary file beside it.
    const fs::path p(output);
    EXPECT_FALSE(fs::exists(p.parent_path() / ("." + p.filename().string() + ".tmp")));
  }
}

// Every numeric flag with 0, a negative, NaN, inf, a huge and a non-numeric value, except the
// values the flag accepts (`valid`); the error must name the flag.
std::vector<Row> numeric_rows(const std::vector<std::string>& base, const std::string& flag,
                              const std::vector<std::string>& valid, int status = 2) {
  std::vector<Row> rows;
  for (const auto& value : ddpsim::test_support::bad_numbers_except(valid)) {
    Row row{base, status, flag, ""};
    row.args.push_back(flag);
    row.args.push_back(value);
    rows.push_back(std::move(row));
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// ddp-trace: every subcommand, every path.
std::vector<Row> ddp_trace_rows() {
  return {
      {{}, 2, "ddp-trace: ", ""},
      {{"frobnicate", "{trace}"}, 2, "A subcommand is required", ""},
      {{"validate"}, 2, "DIR", ""},
      {{"validate", "--bogus", "{trace}"}, 2, "--bogus", ""},
      {{"validate", "{trace}", "extra"}, 2, "extra", ""},
      {{"validate", "{none}"}, 2, "{none}:0: expected a trace directory, got no such directory", ""},
      {{"validate", "{file}"}, 2, "{file}:0: expected a trace directory, got a file", ""},
      {{"validate", "{dir}"}, 2, "{dir}/rank-0.meta.json:0: expected a trace file", ""},
      {{"validate", "/proc/version"}, 2, "/proc/version:0: expected a trace directory", ""},
      {{"summary"}, 2, "DIR", ""},
      {{"summary", "{none}"}, 2, "{none}:0: expected a trace directory", ""},
      {{"summary", "{file}"}, 2, "{file}:0: expected a trace directory", ""},
      {{"summary", "--json", "{dir}"}, 2, "{dir}/rank-0.meta.json:0: expected a trace file", ""},
      {{"summary", "--json=maybe", "{trace}"}, 2, "--json", ""},
      {{"export", "{trace}"}, 2, "--chrome", ""},
      {{"export", "--chrome"}, 2, "--chrome", ""},
      {{"export", "--chrome", "{tmp}/out.json", "{none}"}, 2, "{none}:0: expected a trace directory", "{tmp}/out.json"},
      {{"export", "--chrome", "{tmp}/out.json", "{file}"}, 2, "{file}:0: expected a trace directory", "{tmp}/out.json"},
      {{"export", "--chrome", "{dir}", "{trace}"}, 2, "{dir}:0: expected a writable output file (--chrome)", ""},
      {{"export", "--chrome", "{file}/x.json", "{trace}"}, 2, "{file}/x.json:0: expected a writable output file (--chrome)", "{file}/x.json"},
      {{"export", "--chrome", "{none}/x.json", "{trace}"}, 2, "{none}/x.json:0: expected a writable output file (--chrome)", "{none}"},
      {{"export", "--chrome", "/proc/version/x.json", "{trace}"}, 2, "/proc/version/x.json:0: expected a writable output file", ""},
      {{"import", "{none}.json"}, 2, "--kineto", ""},
      {{"import", "--kineto", "{tmp}/out"}, 2, "RANK_FILE", ""},
      {{"import", "--kineto", "{tmp}/out", "{none}.json"}, 2, "{none}.json:0: expected a PyTorch profiler trace", "{tmp}/out"},
      {{"import", "--kineto", "{tmp}/out", "{dir}"}, 2, "{dir}:0: expected a folder of PyTorch profiler traces", "{tmp}/out"},
      {{"import", "--kineto", "{tmp}/out", "{trace}"}, 2, "rank-0.meta.json:0: expected a PyTorch profiler trace", "{tmp}/out"},
      {{"import", "--kineto", "{tmp}/out", "{file}"}, 2, "{file}:0: expected a PyTorch profiler trace", "{tmp}/out"},
      {{"import", "--kineto", "{tmp}/out", "{trace}/rank-0.meta.json"}, 2, "rank-0.meta.json:0: expected a PyTorch profiler trace", "{tmp}/out"},
      {{"import", "--kineto", "{tmp}/out", "{trace}/rank-0.events.csv"}, 2, "rank-0.events.csv:0: expected a PyTorch profiler trace", "{tmp}/out"},
  };
}

class DdpTraceBadInput : public ::testing::TestWithParam<Row> {};
TEST_P(DdpTraceBadInput, OneLineAndStatus) {
  Scratch scratch;
  check_row(DDP_TRACE_BIN, GetParam(), scratch);
}
INSTANTIATE_TEST_SUITE_P(Table, DdpTraceBadInput, ::testing::ValuesIn(ddp_trace_rows()), row_name);

// A valid Kineto trace imported to an output that cannot be a directory.
TEST(DdpTraceBadOutput, ImportToAFileOrUnderAFileFailsOnOneLine) {
  Scratch scratch;
  const std::string kineto = std::string(DDPSIM_KINETO_EXAMPLES) + "/mlp-2rank/rank-";
  ASSERT_TRUE(fs::is_regular_file(kineto + "0.kineto.json.gz")) << kineto;
  for (const std::string out : {"{file}", "{file}/out", "/proc/version/out"}) {
    check_row(DDP_TRACE_BIN,
              {{"import", "--kineto", out, kineto + "0.kineto.json.gz", kineto + "1.kineto.json.gz"}, 2,
               out + ":0: expected a directory", ""},
              scratch);
  }
}

// ---------------------------------------------------------------------------------------------
// ddp-experiment: the command line, the spec file, the folders, and every spec key with a
// wrong type or value (through --dry-run: nothing runs, nothing is written).
std::vector<Row> ddp_experiment_cli_rows() {
  return {
      {{}, 2, "ddp-experiment: ", ""},
      {{"run"}, 2, "spec", ""},
      {{"frobnicate"}, 2, "A subcommand is required", ""},
      {{"run", "{tmp}/good.toml", "--bogus"}, 2, "--bogus", ""},
      {{"run", "{none}.toml", "--dry-run"}, 2, "{none}.toml: cannot open the spec file", ""},
      {{"run", "{dir}", "--dry-run"}, 2, "{dir}: expected a spec file (TOML), got a directory", ""},
      {{"run", "{file}", "--dry-run"}, 2, "{file}:1:", ""},
      {{"run", "/proc/version", "--dry-run"}, 2, "/proc/version:1:", ""},
      {{"run", "{tmp}/good.toml", "--out", "{file}", "--bin-dir", "{tmp}"}, 2, "{file}", ""},
      {{"run", "{tmp}/good.toml", "--out", "{file}/x", "--bin-dir", "{tmp}"}, 2, "{file}/x", ""},
      {{"run", "{tmp}/good.toml", "--out", "/proc/version/x", "--bin-dir", "{tmp}"}, 2, "/proc/version/x", ""},
      {{"run", "{tmp}/good.toml", "--out", "{tmp}/res", "--bin-dir", "{none}"}, 2, "--bin-dir {none}: expected a directory with ddp-launch", "{tmp}/res"},
      {{"run", "{tmp}/good.toml", "--out", "{tmp}/res", "--bin-dir", "{file}"}, 2, "--bin-dir {file}: expected a directory with ddp-launch", "{tmp}/res"},
  };
}

class DdpExperimentBadInput : public ::testing::TestWithParam<Row> {};
TEST_P(DdpExperimentBadInput, OneLineAndStatus) {
  Scratch scratch;
  std::ofstream(scratch.path("good.toml")) << "[workload]\nmodel = \"mlp\"\n";
  // A --bin-dir with ddp-launch, so that only --out is wrong in the --out rows.
  std::ofstream(scratch.path("ddp-launch")) << "#!/bin/sh\nexit 0\n";
  check_row(DDP_EXPERIMENT_BIN, GetParam(), scratch);
}
INSTANTIATE_TEST_SUITE_P(Table, DdpExperimentBadInput, ::testing::ValuesIn(ddp_experiment_cli_rows()),
                         row_name);

// A spec with [predict] corun_profile needs corun_bench.sh to measure (one line, exit 2).
TEST(DdpExperimentCorunProfile, ScriptRequiredToMeasure) {
  Scratch scratch;
  std::ofstream(scratch.path("world.toml"))
      << "[workload]\nmodel = \"mlp\"\n[grid]\nworld_sizes = [2, 4]\n[predict]\n"
         "baseline = { world_sizes = 2 }\ncorun_profile = [2, 4]\n";
  std::ofstream(scratch.path("ddp-launch")) << "#!/bin/sh\nexit 0\n";
  const auto measure = run_process({DDP_EXPERIMENT_BIN, "run", scratch.path("world.toml"), "--out", scratch.path("res"),
                                    "--bin-dir", scratch.expand("{tmp}"), "--corun-script", scratch.expand("{none}")},
                                   within(60));
  EXPECT_EQ(measure.exit_code(), 2) << measure.err;
  EXPECT_NE(measure.err.find("ddp-experiment: --corun-script " + scratch.expand("{none}") +
                             ": expected the executable experiments/peer/corun_bench.sh"),
            std::string::npos) << measure.err;
  EXPECT_EQ(std::count(measure.err.begin(), measure.err.end(), '\n'), 1) << measure.err;
}

// A spec with [predict] resume_profile needs sleep_resume_cost.py to measure (one line, exit 2).
TEST(DdpExperimentResumeProfile, ScriptRequiredToMeasure) {
  Scratch scratch;
  std::ofstream(scratch.path("slow.toml"))
      << "[workload]\nmodel = \"mlp\"\n[grid]\nslowdown = [\"\", \"1=2\"]\n[predict]\n"
         "baseline = { slowdown = \"\" }\nresume_profile = 0.5\n";
  std::ofstream(scratch.path("ddp-launch")) << "#!/bin/sh\nexit 0\n";
  const auto measure = run_process({DDP_EXPERIMENT_BIN, "run", scratch.path("slow.toml"), "--out", scratch.path("res"),
                                    "--bin-dir", scratch.expand("{tmp}"), "--resume-script", scratch.expand("{none}")},
                                   within(60));
  EXPECT_EQ(measure.exit_code(), 2) << measure.err;
  EXPECT_NE(measure.err.find("ddp-experiment: --resume-script " + scratch.expand("{none}") +
                             ": expected the executable .venv/bin/ddpsim-sleep-resume-cost"),
            std::string::npos) << measure.err;
  EXPECT_EQ(std::count(measure.err.begin(), measure.err.end(), '\n'), 1) << measure.err;
  EXPECT_FALSE(fs::exists(scratch.path("res"))) << "nothing written";
}

// A testbed spec needs scripts/testbed.sh to measure, and not to re-predict what was measured.
TEST(DdpExperimentTestbed, ScriptRequiredToMeasureNotToRepredict) {
  Scratch scratch;
  std::ofstream(scratch.path("testbed.toml"))
      << "[workload]\nmodel = \"mlp\"\n[launch]\ntestbed_rate = \"200mbit\"\nhosts = 2\n";
  std::ofstream(scratch.path("ddp-launch")) << "#!/bin/sh\nexit 0\n";
  const std::vector<std::string> args = {DDP_EXPERIMENT_BIN, "run", scratch.path("testbed.toml"), "--out",
                                         scratch.path("res"), "--bin-dir", scratch.expand("{tmp}"),
                                         "--testbed-script", scratch.expand("{none}")};
  const auto measure = run_process(args, within(60));
  EXPECT_EQ(measure.exit_code(), 2) << measure.err;
  EXPECT_NE(measure.err.find("--testbed-script " + scratch.expand("{none}") + ": expected the executable"),
            std::string::npos) << measure.err;
  std::vector<std::string> repredict = args;
  repredict.push_back("--repredict");
  const auto again = run_process(repredict, within(60));
  EXPECT_EQ(again.exit_code(), 0) << again.err;
  EXPECT_NE(again.err.find("without a measured trace are left to a run without --repredict"), std::string::npos)
      << again.err;
}

struct SpecRow {
  std::string section;  // "" for the top level
  std::string line;     // key = value
  std::string error;    // substring after "bad.toml:LINE: "
};

std::vector<SpecRow> spec_rows() {
  std::vector<SpecRow> rows = {
      {"", "frobnicate = 1", "unknown key 'frobnicate'"},
      {"", "workload = 1", "workload: expected a table [workload]"},
      {"", "grid = \"x\"", "grid: expected a table [grid]"},
      {"experiment", "name = 1", "[experiment] name: expected a string, got an integer"},
      {"experiment", "name = \"a/b\"", "!bad.toml: [experiment] name: expected letters"},
      {"experiment", "description = []", "[experiment] description: expected a string"},
      {"experiment", "repetitions = \"3\"", "[experiment] repetitions: expected an integer, got a string"},
      {"experiment", "repetitions = 1.5", "[experiment] repetitions: expected an integer, got a number"},
      {"experiment", "repetitions = 0", "[experiment] repetitions: expected an integer >= 1"},
      {"experiment", "repetitions = -3", "[experiment] repetitions: expected an integer >= 1"},
      {"experiment", "repetitions = 99999999999", "[experiment] repetitions: expected an integer <="},
      {"experiment", "repetitions = nan", "[experiment] repetitions: expected an integer, got a number"},
      {"experiment", "typo = 1", "unknown key 'typo' in [experiment]"},
      // Found by fuzz_experiment_spec: a billion repetitions (ddp-experiment grew past 20 GB),
      // non-ASCII text toml++ 3.3.0 would meet __builtin_unreachable() on, a line break in a value.
      {"experiment", "repetitions = 1000000000",
       "!bad.toml: [experiment] repetitions x [grid] points: expected at most 100000 runs"},
      {"workload", "model = \"caf\xC3\xA9\"", "expected ASCII characters outside comments"},
      {"workload", "\"\xC3\xA9\" = 1", "expected ASCII characters outside comments"},
      {"launch", "testbed_rate = \"1\\nbit\"", "[launch] testbed_rate: expected a rate in tc units like \"200mbit\", got \"1?bit\""},
      {"workload", "model = 1", "[workload] model: expected a string"},
      {"workload", "optimizer = true", "[workload] optimizer: expected a string, got a boolean"},
      {"workload", "args = \"--width 8\"", "[workload] args: expected an array of strings, got a string"},
      {"workload", "args = [8]", "[workload] args: expected an array of strings, got an integer"},
      {"workload", "lr = \"fast\"", "[workload] lr: expected a number, got a string"},
      {"workload", "when = 2026-11-23", "unknown key 'when'"},
  };
  for (const std::string key : {"iterations", "batch_size", "threads"}) {
    rows.push_back({"workload", key + " = \"x\"", "[workload] " + key + ": expected an integer, got a string"});
    rows.push_back({"workload", key + " = 2.5", "[workload] " + key + ": expected an integer, got a number"});
    rows.push_back({"workload", key + " = 0", "[workload] " + key + ": expected an integer >= 1"});
    rows.push_back({"workload", key + " = -3", "[workload] " + key + ": expected an integer >= 1"});
    rows.push_back({"workload", key + " = 99999999999", "[workload] " + key + ": expected an integer <="});
  }
  rows.push_back({"workload", "seed = -1", "[workload] seed: expected an integer >= 0"});
  rows.push_back({"workload", "seed = [1]", "[workload] seed: expected an integer, got an array"});
  for (const std::string value : {"0", "-3", "nan", "inf", "-inf"}) {
    rows.push_back({"workload", "lr = " + value, "[workload] lr: expected a"});
  }
  // Number axes and lists.
  for (const std::string section_key : {"grid.bucket_cap_mb", "grid.first_bucket_cap_mb", "grid.timeout_s",
                                        "predict.timeouts_s", "limits.job_timeout_s",
                                        "limits.tool_timeout_s"}) {
    const auto dot = section_key.find('.');
    const std::string section = section_key.substr(0, dot), key = section_key.substr(dot + 1);
    const std::string where = "[" + section + "] " + key + ": expected a";
    for (const std::string value : {"0", "-3", "nan", "inf", "-inf", "\"x\"", "true"}) {
      rows.push_back({section, key + " = " + value, where});
    }
    if (section != "limits") {
      rows.push_back({section, key + " = []", "[" + section + "] " + key + ": expected at least one value"});
      rows.push_back({section, key + " = [1, \"x\"]", where});
    }
  }
  for (const std::string section_key : {"grid.world_sizes", "predict.world_sizes", "predict.min_world_size"}) {
    const auto dot = section_key.find('.');
    const std::string section = section_key.substr(0, dot), key = section_key.substr(dot + 1);
    const std::string where = "[" + section + "] " + key + ": expected an integer";
    for (const std::string value : {"0", "-3", "2.5", "nan", "inf", "\"2\"", "99999999999"}) {
      rows.push_back({section, key + " = " + value, where});
    }
  }
  rows.push_back({"grid", "world_sizes = 5000", "[grid] world_sizes: expected an integer <= 4096"});
  rows.push_back({"grid", "world_sizes = []", "[grid] world_sizes: expected at least one value"});
  rows.push_back({"grid", "slowdown = 2", "[grid] slowdown: expected a string like"});
  rows.push_back({"grid", "slowdown = [[1]]", "[grid] slowdown: expected a string like"});
  rows.push_back({"grid", "delay = true", "[grid] delay: expected a string like"});
  rows.push_back({"grid", "typo = 1", "unknown key 'typo' in [grid]"});
  rows.push_back({"predict", "enabled = \"yes\"", "[predict] enabled: expected a boolean, got a string"});
  rows.push_back({"predict", "enabled = 1", "[predict] enabled: expected a boolean, got an integer"});
  rows.push_back({"predict", "replay_args = \"--x\"", "[predict] replay_args: expected an array of strings"});
  rows.push_back({"predict", "calibrate_args = [1]", "[predict] calibrate_args: expected an array of strings"});
  rows.push_back({"predict", "world_size_flag = 1", "[predict] world_size_flag: expected a string"});
  rows.push_back({"predict", "timeout_flag = []", "[predict] timeout_flag: expected a string"});
  rows.push_back({"predict", "whatif = 1", "[predict] whatif: expected an array of tables"});
  rows.push_back({"predict", "whatif = [{args = []}]", "[[predict.whatif]] name: expected a non-empty name"});
  rows.push_back({"predict", "whatif = [{name = \"a b\"}]", "[[predict.whatif]] name: expected a non-empty name"});
  rows.push_back({"predict", "whatif = [{name = \"a\", args = 1}]", "[[predict.whatif]] args: expected an array of strings"});
  rows.push_back({"predict", "whatif = [{name = \"a\", typo = 1}]", "unknown key 'typo'"});
  rows.push_back({"limits", "typo = 1", "unknown key 'typo' in [limits]"});
  return rows;
}

class SpecBadInput : public ::testing::TestWithParam<SpecRow> {};
TEST_P(SpecBadInput, OneLineNamingFileLineAndKey) {
  const SpecRow& row = GetParam();
  Scratch scratch;
  // The bad line is line 2 of [workload] or line 3 after it (line 1 at the top level).
  std::string text = "[workload]\n";
  int line = 2;
  if (row.section.empty()) {
    // A top-level key before the tables (TOML allows no other place); `workload = 1` alone.
    text = row.line + "\n" + (row.line.rfind("workload", 0) == 0 ? "" : text);
    line = 1;
  } else if (row.section == "workload") {
    text += row.line + "\n";
  } else {
    text += "[" + row.section + "]\n" + row.line + "\n";
    line = 3;
  }
  std::ofstream(scratch.path("bad.toml")) << text;
  // "!": a message about the whole spec, without a line.
  const std::string error = row.error[0] == '!' ? row.error.substr(1)
                            : row.section.empty() ? row.error
                                                  : "bad.toml:" + std::to_string(line) + ": " + row.error;
  check_row(DDP_EXPERIMENT_BIN,
            {{"run", "{tmp}/bad.toml", "--dry-run", "--out", "{tmp}/res"}, 2, error, "{tmp}/res"}, scratch);
}
INSTANTIATE_TEST_SUITE_P(Table, SpecBadInput, ::testing::ValuesIn(spec_rows()),
                         [](const ::testing::TestParamInfo<SpecRow>& info) {
                           return "row" + std::to_string(info.index);
                         });

// ---------------------------------------------------------------------------------------------
#ifdef DDP_LAUNCH_BIN
std::vector<Row> ddp_launch_rows() {
  const std::vector<std::string> base = {};
  std::vector<Row> rows;
  auto add = [&](const std::string& flag, const std::vector<std::string>& valid) {
    for (Row row : numeric_rows(base, flag, valid)) {
      row.args.insert(row.args.end(), {"--", "/bin/true"});
      rows.push_back(std::move(row));
    }
  };
  add("--nproc-per-node", {});
  add("--nnodes", {});
  add("--node-rank", {"0"});
  add("--master-port", {"0"});
  add("--grace-period", {"0"});
  rows.push_back({{"--nnodes", "2", "--node-rank", "2", "--", "/bin/true"}, 2, "--node-rank 2: expected 0..1", ""});
  rows.push_back({{"--nnodes", "2", "--master-port", "0", "--", "/bin/true"}, 2, "--master-port 0", ""});
  rows.push_back({{"--nnodes", "1048576", "--nproc-per-node", "4096", "--node-rank", "1048575",
                   "--master-port", "1", "--", "/bin/true"},
                  2, "expected a world size below 2^31", ""});
  rows.push_back({{}, 2, "no program given", ""});
  rows.push_back({{"--"}, 2, "no program given", ""});
  rows.push_back({{"--bogus", "--", "/bin/true"}, 2, "--bogus", ""});
  rows.push_back({{"--", "{none}"}, 2, "cannot run '{none}'", ""});
  rows.push_back({{"--", "{dir}"}, 2, "cannot run '{dir}'", ""});
  rows.push_back({{"--", "{file}"}, 2, "cannot run '{file}'", ""});
  rows.push_back({{"--", "/proc/version/x"}, 2, "cannot run '/proc/version/x'", ""});
  return rows;
}

class DdpLaunchBadInput : public ::testing::TestWithParam<Row> {};
TEST_P(DdpLaunchBadInput, OneLineAndStatus) {
  Scratch scratch;
  check_row(DDP_LAUNCH_BIN, GetParam(), scratch);
}
INSTANTIATE_TEST_SUITE_P(Table, DdpLaunchBadInput, ::testing::ValuesIn(ddp_launch_rows()), row_name);
#endif

// ---------------------------------------------------------------------------------------------
#ifdef DDP_TRAIN_BIN
// A tiny valid job; each row adds one bad flag (a later flag overrides an earlier one).
const std::vector<std::string> kTrainBase = {"--quiet", "--model", "mlp", "--width", "8", "--depth", "1",
                                             "--iterations", "2", "--dataset-size", "64",
                                             "--batch-size", "4", "--trace-dir", "{tmp}/t"};

// Each numeric flag once, through the real binary: that it reaches the checked parser and is
// refused before anything is written. The values rotate through the bad ones, so each bad value
// passes the binary for a few flags; every flag with every bad value is options_test.cpp's table.
std::vector<Row> ddp_train_rows() {
  using ddpsim::runtime::testing::bad_values;
  std::vector<Row> rows;
  const std::vector<std::string> transformer_base = {"--quiet", "--model", "transformer", "--iterations", "1",
                                                     "--trace-dir", "{tmp}/t"};
  std::size_t turn = 0;
  for (const auto& flag : ddpsim::runtime::testing::train_numeric_flags()) {
    const auto values = bad_values(flag);
    Row row{flag.transformer ? transformer_base : kTrainBase, 2, flag.flag, "{tmp}/t"};
    row.args.push_back(flag.flag);
    row.args.push_back(values[turn++ % values.size()]);
    rows.push_back(std::move(row));
  }
  auto bad = [&](std::vector<std::string> extra, int status, const std::string& error,
                 const std::string& must_not_exist = "{tmp}/t") {
    Row row{kTrainBase, status, error, must_not_exist};
    row.args.insert(row.args.end(), extra.begin(), extra.end());
    rows.push_back(std::move(row));
  };
  bad({"--width", "100000", "--depth", "1000"}, 2, "expected a model of at most 2^31 parameters");
  bad({"--model", "resnet50"}, 2, "--model resnet50: expected");
  bad({"--bucket-caps-mb", "1,,25"}, 2, "--bucket-caps-mb 1,,25: expected a comma-separated list of positive MiB");
  bad({"--bucket-caps-mb", "1,-4"}, 2, "--bucket-caps-mb 1,-4: expected a comma-separated list of positive MiB");
  bad({"--bucket-caps-mb", "1,4", "--bucket-cap-mb", "2"}, 2, "--bucket-caps-mb: expected either the list or");
  bad({"--optimizer", "lbfgs"}, 2, "--optimizer lbfgs: expected");
  bad({"--backend", "mpi"}, 2, "--backend mpi: expected");
  bad({"--comm-hook", "powersgd"}, 2, "--comm-hook powersgd: expected");
  bad({"--amp", "fp8"}, 2, "--amp fp8: expected");
  bad({"--lr-schedule", "linear"}, 2, "--lr-schedule linear: expected");
  bad({"--init", "udp://x"}, 2, "--init");
  bad({"--init", "file://relative"}, 2, "--init");
  bad({"--slowdown", "1=abc"}, 2, "1=abc");
  bad({"--slowdown", "5=2"}, 2, "5=2");
  bad({"--delay", "0=-5"}, 2, "0=-5");
  bad({"--delay-dist", "0=lognormal:nan,1"}, 2, "lognormal");
  bad({"--bogus"}, 2, "--bogus");
  bad({"--heads", "3"}, 2, "--d-model 256: expected a multiple of --heads 3");
  bad({"--eval-every", "1", "--model", "resnet18"}, 2, "--eval-every: expected --model convnet or mlp");
  bad({"--inject-inf-at", "1"}, 2, "--inject-inf-at: expected --amp too");
  bad({"--checkpoint-every", "1"}, 2, "--checkpoint-every: expected --checkpoint-dir too");
  bad({"--resume"}, 2, "--resume: expected --checkpoint-dir too");
  bad({"--fail-rank", "1"}, 2, "--fail-rank 1: expected a rank below the world size 1");
  // Paths: missing, a file where a directory is expected and the reverse, not writable.
  bad({"--trace-dir", "{file}"}, 2, "--trace-dir: {file}:0: expected a directory that can be created", "");
  bad({"--trace-dir", "{file}/t"}, 2, "--trace-dir: {file}/t:0: expected a directory", "{file}/t");
  bad({"--trace-dir", "/proc/version/t"}, 2, "--trace-dir: /proc/version/t:0: expected a directory", "");
  bad({"--model", "convnet", "--data-dir", "{none}"}, 2, "{none}/train-images-idx3-ubyte.gz: no such file");
  bad({"--model", "convnet", "--data-dir", "{file}"}, 2, "{file}/train-images-idx3-ubyte.gz");
  bad({"--checkpoint-dir", "{none}", "--resume"}, 2, "--resume: {none}/checkpoint.pt: no checkpoint there");
  bad({"--checkpoint-dir", "{dir}", "--resume"}, 2, "--resume: {dir}/checkpoint.pt: no checkpoint there");
  bad({"--checkpoint-dir", "{file}", "--resume"}, 2, "--resume: {file}/checkpoint.pt: no checkpoint there");
  // Read only once the model exists: the trace folder has been started by then.
  bad({"--checkpoint-dir", "{trace}", "--resume"}, 2, "--resume: {trace}/checkpoint.pt: not a readable checkpoint", "");
  bad({"--checkpoint-dir", "{file}", "--checkpoint-every", "1"}, 2,
      "--checkpoint-dir {file}: expected a directory that can be created");
  bad({"--checkpoint-dir", "{file}/c", "--checkpoint-every", "1"}, 2,
      "--checkpoint-dir {file}/c: expected a directory that can be created");
  bad({"--checkpoint-dir", "/proc/version/c", "--checkpoint-every", "1"}, 2,
      "--checkpoint-dir /proc/version/c: expected a directory");
  bad({"--step-times", "{file}/x.json"}, 2, "--step-times {file}/x.json: expected a file in an existing directory");
  bad({"--step-times", "{none}/x.json"}, 2, "--step-times {none}/x.json: expected a file in an existing directory");
  bad({"--step-times", "{dir}"}, 2, "--step-times {dir}: expected a file in an existing directory");
  bad({"--dump-params", "{file}/p"}, 2, "--dump-params {file}/p: expected a file in an existing directory");
  bad({"--dump-grads", "/proc/version/g"}, 2, "--dump-grads /proc/version/g: expected a file");
  bad({"--init", "file://{none}/store"}, 2, "--init file://{none}/store: expected a file in an existing directory");
  bad({"--init", "file://{file}/store"}, 2, "--init file://{file}/store: expected a file in an existing directory");
  return rows;
}

class DdpTrainBadInput : public ::testing::TestWithParam<Row> {};
TEST_P(DdpTrainBadInput, OneLineAndStatus) {
  Scratch scratch;
  // A checkpoint.pt that is not a checkpoint (a trace's JSON).
  fs::copy_file(scratch.path("trace/rank-0.meta.json"), scratch.path("trace/checkpoint.pt"));
  check_row(DDP_TRAIN_BIN, GetParam(), scratch);
}
INSTANTIATE_TEST_SUITE_P(Table, DdpTrainBadInput, ::testing::ValuesIn(ddp_train_rows()), row_name);
#endif

}  // namespace
