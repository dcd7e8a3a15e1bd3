// The real ddp-trace binary on real files: exit codes, one-line errors, valid outputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/summary.hpp"
#include "test_support.hpp"

namespace ddpsim::trace {
namespace {

using testing::TempDir;

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CliResult ddp_trace(const std::string& args, const TempDir& scratch) {
  const std::string out = scratch / "stdout.txt";
  const std::string err = scratch / "stderr.txt";
  const std::string command =
      std::string(DDP_TRACE_BIN) + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(command.c_str());
  CliResult run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = testing::read_text(out);
  run.err = testing::read_text(err);
  return run;
}

class DdpTraceCli : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_dir = scratch / "trace";
    write_trace(trace_dir, testing::example_trace(2, 4));
  }
  TempDir scratch;
  std::string trace_dir;
};

TEST_F(DdpTraceCli, ValidateGoodTrace) {
  const CliResult run = ddp_trace("validate " + trace_dir, scratch);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "ok: 2 ranks, 4 complete iterations\n");
  EXPECT_EQ(run.err, "");
}

TEST_F(DdpTraceCli, ValidateCorruptedCopyPrintsOneLineAndFails) {
  const std::string events = trace_dir + "/rank-1.events.csv";
  std::string text = testing::read_text(events);
  const std::size_t at = text.find("grad_ready");
  const long line = 1 + static_cast<long>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  text.replace(at, std::string("grad_ready").size(), "grad_reddy");
  testing::write_text(events, text);

  const CliResult run = ddp_trace("validate " + trace_dir, scratch);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.err.rfind(events + ":" + std::to_string(line) + ": expected ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find("got \"grad_reddy\""), std::string::npos) << run.err;
}

TEST_F(DdpTraceCli, ValidateCutFileStillPasses) {
  const std::string events = trace_dir + "/rank-0.events.csv";
  const std::string text = testing::read_text(events);
  testing::write_text(events, text.substr(0, text.find("0,3,backward_begin") + 5));
  const CliResult run = ddp_trace("validate " + trace_dir, scratch);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "ok: 2 ranks, 3 complete iterations (a rank's file ends in a cut line)\n");
}

TEST_F(DdpTraceCli, UsageErrorsExitTwoOnOneLine) {
  for (const std::string& args :
       std::vector<std::string>{"", "validate", "frobnicate x", "export " + trace_dir}) {
    SCOPED_TRACE(args);
    const CliResult run = ddp_trace(args, scratch);
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

TEST_F(DdpTraceCli, SummaryJsonMatchesTheLibrary) {
  const CliResult run = ddp_trace("summary --json " + trace_dir, scratch);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  const Summary expected = summarize(read_trace(trace_dir));
  EXPECT_DOUBLE_EQ(j.at("median_iteration_s").get<double>(), expected.median_iteration_s);
  EXPECT_EQ(j.at("num_buckets"), 2);

  const CliResult table = ddp_trace("summary " + trace_dir, scratch);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out, summary_to_table(expected));
}

TEST_F(DdpTraceCli, ExportWritesValidChromeJson) {
  const std::string out = scratch / "trace.json";
  const CliResult run = ddp_trace("export --chrome " + out + " " + trace_dir, scratch);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json chrome = nlohmann::json::parse(testing::read_text(out));
  // 2 ranks x (3 metadata + 4 iterations x 3 phases + 1 + 3 x 2 all-reduces).
  EXPECT_EQ(chrome.at("traceEvents").size(), 2u * (3 + 12 + 7));
}

TEST_F(DdpTraceCli, ExportToAnUnwritablePathFails) {
  const CliResult run = ddp_trace("export --chrome " + (scratch / "no/such/dir/x.json") + " " + trace_dir,
                            scratch);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

TEST_F(DdpTraceCli, ImportOfAMissingFileFailsOnOneLine) {
  const std::string missing = scratch / "missing.json";
  const CliResult run = ddp_trace("import --kineto " + (scratch / "out") + " " + missing, scratch);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.err.rfind(missing + ":", 0), 0u) << run.err;
}

// The import says how many steps it kept, and that a handful is few (a cycling schedule
// keeps only its last cycle): the committed 4-step CPU profile and the 10-step H100 one.
TEST_F(DdpTraceCli, ImportSaysHowManyStepsItKept) {
  const std::string cpu = DDPSIM_KINETO_EXAMPLES "/kineto/mlp-2rank/";
  const CliResult few = ddp_trace("import --kineto " + (scratch / "few") + " " + cpu + "rank-0.kineto.json.gz " + cpu +
                                      "rank-1.kineto.json.gz",
                                  scratch);
  ASSERT_EQ(few.exit_code, 0) << few.err;
  EXPECT_EQ(read_trace(scratch / "few").complete_iterations().size(), 4u);
  EXPECT_NE(few.out.find("\nsteps: 4 profiled steps: few for a what-if to resample; profile more (schedule(..., "
                         "active=10, repeat=1)"),
            std::string::npos)
      << few.out;
  const std::string h100 = DDPSIM_KINETO_EXAMPLES "/kineto-h100/gloo-cuda-2ranks/";
  const CliResult enough =
      ddp_trace("import --kineto " + (scratch / "enough") + " " + h100 + "rank-0.json.gz " + h100 + "rank-1.json.gz", scratch);
  ASSERT_EQ(enough.exit_code, 0) << enough.err;
  EXPECT_NE(enough.out.find("\nsteps: 10 profiled steps\n"), std::string::npos) << enough.out;
}

// A folder stands for its profiler traces (tensorboard_trace_handler writes one per rank, named
// by host and pid): it imports as the files do; a folder without any is one line.
TEST_F(DdpTraceCli, ImportTakesAFolderOfProfiles) {
  const std::string h100 = DDPSIM_KINETO_EXAMPLES "/kineto-h100/gloo-cuda-2ranks";
  const CliResult folder = ddp_trace("import --kineto " + (scratch / "folder") + " " + h100, scratch);
  ASSERT_EQ(folder.exit_code, 0) << folder.err;
  const CliResult files = ddp_trace("import --kineto " + (scratch / "files") + " " + h100 + "/rank-1.json.gz " + h100 +
                                        "/rank-0.json.gz",
                                    scratch);
  ASSERT_EQ(files.exit_code, 0) << files.err;
  EXPECT_EQ(testing::read_text(scratch / "folder/rank-1.events.csv"), testing::read_text(scratch / "files/rank-1.events.csv"));
  std::filesystem::create_directories(scratch / "empty");
  const CliResult empty = ddp_trace("import --kineto " + (scratch / "out") + " " + (scratch / "empty"), scratch);
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, (scratch / "empty") + ":0: expected a folder of PyTorch profiler traces (*.json, *.json.gz), got none in it\n");
  EXPECT_FALSE(std::filesystem::exists(scratch / "out"));
}

TEST(DdpTraceSample, CommittedSampleValidates) {
  TempDir scratch;
  const CliResult run = ddp_trace(std::string("validate ") + DDPSIM_SAMPLE_TRACE_DIR, scratch);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "ok: 2 ranks, 6 complete iterations\n");
}

}  // namespace
}  // namespace ddpsim::trace
