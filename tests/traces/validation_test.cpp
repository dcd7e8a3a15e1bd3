// Every validation rule of FORMAT.md reports its own exact one-line "FILE:LINE: expected …, got …".
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/io.hpp"
#include "test_support.hpp"

namespace ddpsim::trace {
namespace {

using nlohmann::json;
using testing::TempDir;

const std::string kHeader = "rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message\n";

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const TraceError& error) {
    return error.what();
  }
  return "no error";
}

// FORMAT.md's example metadata for rank 0 of 1, as a JSON value the test can break.
json good_meta() { return json::parse(meta_to_json(testing::example_meta(0, 1))); }

// Parses metadata written on ONE line (so every metadata error is on line 1) with events.
std::string parse_error(const json& meta, const std::string& events = kHeader) {
  return error_of([&] { parse_rank(meta.dump(), events, "m.json", "e.csv"); });
}

std::string events_error(const std::string& body) { return parse_error(good_meta(), kHeader + body); }

// 1-based line of the first occurrence of `needle`.
long line_of(const std::string& text, const std::string& needle) {
  const std::size_t pos = text.find(needle);
  return 1 + static_cast<long>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

TEST(ValidateMeta, GoodMetadataParses) { EXPECT_EQ(parse_error(good_meta()), "no error"); }

TEST(ValidateMeta, UnknownSchemaVersion) {
  json meta = good_meta();
  meta["schema_version"] = 2;
  EXPECT_EQ(parse_error(meta), "m.json:1: expected schema_version 1, got number 2");
}

TEST(ValidateMeta, WrongSchemaName) {
  json meta = good_meta();
  meta["schema"] = "other";
  EXPECT_EQ(parse_error(meta), "m.json:1: expected schema \"ddpsim-trace\", got \"other\"");
}

TEST(ValidateMeta, MissingField) {
  json meta = good_meta();
  meta.erase("host");
  EXPECT_EQ(parse_error(meta), "m.json:1: expected field \"host\", got no such field");
}

TEST(ValidateMeta, MissingNestedField) {
  json meta = good_meta();
  meta["parameters"][1].erase("numel");
  EXPECT_EQ(parse_error(meta), "m.json:1: expected field \"parameters[1].numel\", got no such field");
}

TEST(ValidateMeta, WrongType) {
  json meta = good_meta();
  meta["world_size"] = "two";
  EXPECT_EQ(parse_error(meta), "m.json:1: expected world_size to be an integer, got string \"two\"");
}

TEST(ValidateMeta, SettingThatIsNotAString) {
  json meta = good_meta();
  meta["workload"]["batch_size"] = 32;
  EXPECT_EQ(parse_error(meta), "m.json:1: expected workload.batch_size to be a string, got number 32");
}

// bucket_cap_bytes_list (DDP's bucket_cap_mb_list) is optional within version 1: absent in
// every older trace, read back as given, positive integers only.
TEST(ValidateMeta, BucketCapListIsOptionalAndReadBack) {
  json meta = good_meta();
  ASSERT_FALSE(meta.contains("bucket_cap_bytes_list"));  // not written when empty
  meta["bucket_cap_bytes_list"] = {1048576, 4194304, 26214400};
  const RankTrace rank = parse_rank(meta.dump(), kHeader, "m.json", "e.csv");
  EXPECT_EQ(rank.meta.bucket_cap_bytes_list, (std::vector<std::int64_t>{1048576, 4194304, 26214400}));
  EXPECT_EQ(json::parse(meta_to_json(rank.meta))["bucket_cap_bytes_list"], meta["bucket_cap_bytes_list"]);
}

TEST(ValidateMeta, BucketCapListOfNonPositiveOrNonIntegerCaps) {
  json meta = good_meta();
  meta["bucket_cap_bytes_list"] = {1048576, 0};
  EXPECT_EQ(parse_error(meta), "m.json:1: expected bucket_cap_bytes_list[1] in [1, inf], got 0");
  meta["bucket_cap_bytes_list"] = {"1MiB"};
  EXPECT_EQ(parse_error(meta), "m.json:1: expected bucket_cap_bytes_list[0] to be an integer, got string \"1MiB\"");
  meta["bucket_cap_bytes_list"] = 1048576;
  EXPECT_EQ(parse_error(meta), "m.json:1: expected bucket_cap_bytes_list to be an array, got number 1048576");
}

TEST(ValidateMeta, ErrorPointsAtTheLineOfTheField) {
  std::string text = meta_to_json(testing::example_meta(0, 1));
  const std::string good = "\"world_size\": 1";
  text.replace(text.find(good), good.size(), "\"world_size\": \"two\"");
  const long line = line_of(text, "\"world_size\"");
  EXPECT_GT(line, 5);
  EXPECT_EQ(error_of([&] { parse_rank(text, kHeader, "m.json", "e.csv"); }),
            "m.json:" + std::to_string(line) +
                ": expected world_size to be an integer, got string \"two\"");
}

TEST(ValidateMeta, RankOutsideWorld) {
  json meta = good_meta();
  meta["rank"] = 1;
  EXPECT_EQ(parse_error(meta), "m.json:1: expected rank in [0, 0], got 1");
}

TEST(ValidateMeta, ParametersOutOfOrder) {
  json meta = good_meta();
  meta["parameters"][0]["index"] = 1;
  EXPECT_EQ(parse_error(meta), "m.json:1: expected parameters[0].index in [0, 0], got 1");
}

TEST(ValidateMeta, UnknownDtype) {
  json meta = good_meta();
  meta["parameters"][2]["dtype"] = "int8";
  EXPECT_EQ(parse_error(meta),
            "m.json:1: expected parameters[2].dtype one of float32, float16, bfloat16, float64, "
            "got \"int8\"");
}

TEST(ValidateMeta, AloneThatIsNotABoolean) {
  json meta = good_meta();
  meta["parameters"][1]["alone"] = 1;
  EXPECT_EQ(parse_error(meta), "m.json:1: expected parameters[1].alone to be true or false, got number 1");
}

TEST(ValidateMeta, BucketWithUnknownParameter) {
  json meta = good_meta();
  meta["bucket_assignments"][0]["buckets"] = json::parse("[[2, 1, 3]]");
  EXPECT_EQ(parse_error(meta),
            "m.json:1: expected bucket_assignments[0].buckets[0][2] in [0, 2], got 3");
}

TEST(ValidateMeta, ParameterInTwoBuckets) {
  json meta = good_meta();
  meta["bucket_assignments"][1]["buckets"] = json::parse("[[2], [1, 2]]");
  EXPECT_EQ(parse_error(meta),
            "m.json:1: expected bucket_assignments[1].buckets[1][1] to be a parameter in no other "
            "bucket, got parameter 2 again");
}

TEST(ValidateMeta, LayoutsOutOfOrder) {
  json meta = good_meta();
  meta["bucket_assignments"][1]["first_iteration"] = 0;
  EXPECT_EQ(parse_error(meta),
            "m.json:1: expected bucket_assignments[1].first_iteration in [1, inf], got 0");
}

TEST(ValidateMeta, InvalidJson) {
  const std::string error =
      error_of([] { parse_rank("{\n  \"schema\": }\n", kHeader, "m.json", "e.csv"); });
  EXPECT_EQ(error.rfind("m.json:2: expected valid JSON, got ", 0), 0u) << error;
}

TEST(ValidateMeta, NumberTooLargeForADouble) {
  // Found by the fuzzer: nlohmann-json reports this as out_of_range, not as a parse error.
  EXPECT_EQ(error_of([] { parse_rank("{\n\"timeout_s\": 1e999}", kHeader, "m.json", "e.csv"); }),
            "m.json:2: expected valid JSON, got number overflow parsing '1e999'");
}

TEST(ValidateMeta, NotAnObject) {
  EXPECT_EQ(error_of([] { parse_rank("[1, 2]", kHeader, "m.json", "e.csv"); }),
            "m.json:1: expected a JSON object, got array [1,2]");
}

TEST(ValidateMeta, AbsurdNestingIsRejectedNotRecursedInto) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(error_of([&] { parse_rank(deep, kHeader, "m.json", "e.csv"); }),
            "m.json:1: expected JSON nested at most 64 deep, got deeper nesting");
}

TEST(ValidateEvents, GoodEventsParse) {
  EXPECT_EQ(events_error("0,0,iteration_begin,100,,,,,,\n0,0,grad_ready,150,,2,,,,\n"
                         "0,0,bucket_ready,160,0,,56,,,\n0,0,iteration_end,200,,,,,,\n"),
            "no error");
}

TEST(ValidateEvents, BadHeader) {
  EXPECT_EQ(parse_error(good_meta(), "rank,iteration,event,time\n"),
            "e.csv:1: expected \"rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message\", "
            "got \"rank,iteration,event,time\"");
}

TEST(ValidateEvents, EmptyFile) {
  EXPECT_EQ(parse_error(good_meta(), ""),
            "e.csv:1: expected the header line "
            "\"rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message\", got an empty file");
}

TEST(ValidateEvents, UnknownEvent) {
  EXPECT_EQ(events_error("0,0,teleport,100,,,,,,\n"),
            "e.csv:2: expected an event name from FORMAT.md (iteration_begin, grad_ready, "
            "allreduce_begin, ...), got \"teleport\"");
}

TEST(ValidateEvents, TimeGoingBackwards) {
  EXPECT_EQ(events_error("0,0,iteration_begin,200,,,,,,\n0,0,forward_begin,150,,,,,,\n"),
            "e.csv:3: expected t_ns >= 200 (time never decreases), got 150");
}

TEST(ValidateEvents, IterationGoingBackwards) {
  EXPECT_EQ(events_error("0,1,iteration_begin,100,,,,,,\n0,0,forward_begin,200,,,,,,\n"),
            "e.csv:3: expected iteration >= 1 (iterations never decrease), got 0");
}

TEST(ValidateEvents, BucketOutOfRangeForTheLayoutInForce) {
  // Iteration 0 has one bucket, iteration 1 two: bucket 1 is fine only from iteration 1.
  EXPECT_EQ(events_error("0,1,bucket_ready,100,1,,40,,,\n"), "no error");
  EXPECT_EQ(events_error("0,0,bucket_ready,100,1,,40,,,\n"),
            "e.csv:2: expected bucket in [0, 1) (the layout of iteration 0), got 1");
}

TEST(ValidateEvents, BucketWithoutAnyLayout) {
  json meta = good_meta();
  meta["bucket_assignments"] = json::array();
  EXPECT_EQ(parse_error(meta, kHeader + "0,0,allreduce_begin,100,0,,16,,,\n"),
            "e.csv:2: expected a bucket layout in force for iteration 0 (bucket_assignments), got "
            "bucket 0 with no layout");
}

TEST(ValidateEvents, ParamOutOfRange) {
  EXPECT_EQ(events_error("0,0,grad_ready,100,,3,,,,\n"), "e.csv:2: expected param in [0, 3), got 3");
}

TEST(ValidateEvents, RankOfAnotherFile) {
  EXPECT_EQ(events_error("1,0,iteration_begin,100,,,,,,\n"),
            "e.csv:2: expected rank 0 (the file's rank), got 1");
}

TEST(ValidateEvents, IntegerThatDoesNotParse) {
  EXPECT_EQ(events_error("0,0,iteration_begin,12x,,,,,,\n"),
            "e.csv:2: expected t_ns to be a non-negative integer, got \"12x\"");
  EXPECT_EQ(events_error("0,0,iteration_begin,99999999999999999999,,,,,,\n"),
            "e.csv:2: expected t_ns to be a non-negative integer, got \"99999999999999999999\"");
}

TEST(ValidateEvents, FieldTheEventNeeds) {
  EXPECT_EQ(events_error("0,0,grad_ready,100,,,,,,\n"),
            "e.csv:2: expected field \"param\" for grad_ready, got an empty field");
  EXPECT_EQ(events_error("0,0,allreduce_end,100,0,,,,,\n"),
            "e.csv:2: expected field \"bytes\" for allreduce_end, got an empty field");
  EXPECT_EQ(events_error("0,0,delay,100,,,,5,,\n"),
            "e.csv:2: expected field \"kind\" for delay, got an empty field");
}

// AMP and evaluation (FORMAT.md): optimizer_end's kind/message and an evaluation between two
// iterations read back as written; an eval_end without its counts is refused.
TEST(ValidateEvents, AmpStepAndEvaluationBetweenIterations) {
  const std::string body =
      "0,0,iteration_begin,100,,,,,,\n0,0,optimizer_begin,150,,,,,,\n"
      "0,0,optimizer_end,160,,,,,skipped,65536\n0,0,iteration_end,200,,,,,,\n"
      "0,0,eval_begin,210,,,,,,\n0,0,eval_end,900,,,,,,812/1000\n"
      "0,1,iteration_begin,1000,,,,,,\n0,1,iteration_end,1100,,,,,,\n";
  const RankTrace t = parse_rank(good_meta().dump(), kHeader + body, "m.json", "e.csv");
  ASSERT_EQ(t.events.size(), 8u);
  EXPECT_EQ(t.events[2].kind, "skipped");
  EXPECT_EQ(t.events[2].message, "65536");
  EXPECT_EQ(t.events[5].type, EventType::EvalEnd);
  EXPECT_EQ(t.events[5].message, "812/1000");
  EXPECT_EQ(t.complete_iterations(), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(events_error("0,0,eval_begin,100,,,,,,\n0,0,eval_end,200,,,,,,\n"),
            "e.csv:3: expected field \"message\" for eval_end, got an empty field");
}

TEST(ValidateEvents, WrongNumberOfFields) {
  EXPECT_EQ(events_error("0,0,iteration_begin,100\n"),
            "e.csv:2: expected 10 fields "
            "(rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message), got 4");
}

TEST(ValidateEvents, UnclosedQuote) {
  EXPECT_EQ(events_error("0,0,failure,100,,,,,error,\"oops\n"),
            "e.csv:2: expected a closing quote in field 10, got \"0,0,failure,100,,,,,error,\"oops\"");
}

TEST(ValidateEvents, ErrorsStayOnOneLineWhateverTheInput) {
  const std::string error = events_error(std::string("0,0,tele\x01port\r,100,,,,,,\n"));
  EXPECT_EQ(error.find('\n'), std::string::npos);
  EXPECT_NE(error.find("\\x01"), std::string::npos) << error;
}

// Cross-rank checks on real directories.
class ValidateTraceDir : public ::testing::Test {
 protected:
  void SetUp() override { write_trace(dir.str(), testing::example_trace(2, 2)); }
  std::string path(const std::string& name) const { return dir / name; }
  std::string read_error() const { return error_of([&] { read_trace(dir.str()); }); }

  TempDir dir;
};

TEST_F(ValidateTraceDir, GoodTraceReads) { EXPECT_EQ(read_error(), "no error"); }

TEST_F(ValidateTraceDir, WorldSizeDisagrees) {
  RunMeta meta = testing::example_meta(1, 3);
  const std::string text = meta_to_json(meta);
  testing::write_text(path("rank-1.meta.json"), text);
  EXPECT_EQ(read_error(), path("rank-1.meta.json") + ":" +
                              std::to_string(line_of(text, "\"world_size\"")) +
                              ": expected world_size 2 (as in rank-0.meta.json), got 3");
}

TEST_F(ValidateTraceDir, MissingRankFile) {
  std::filesystem::remove(path("rank-1.events.csv"));
  EXPECT_EQ(read_error(), path("rank-1.events.csv") + ":0: expected a trace file, got no such file");
}

TEST_F(ValidateTraceDir, MissingDirectory) {
  EXPECT_EQ(error_of([&] { read_trace(path("nope")); }),
            path("nope") + ":0: expected a trace directory, got no such directory");
}

TEST_F(ValidateTraceDir, RankFileHoldsAnotherRank) {
  // rank-1.* hold rank 0's files: each is valid alone, but not under that name.
  std::filesystem::copy_file(path("rank-0.meta.json"), path("rank-1.meta.json"),
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(path("rank-0.events.csv"), path("rank-1.events.csv"),
                             std::filesystem::copy_options::overwrite_existing);
  const std::string text = testing::read_text(path("rank-1.meta.json"));
  EXPECT_EQ(read_error(), path("rank-1.meta.json") + ":" +
                              std::to_string(line_of(text, "\"rank\"")) +
                              ": expected rank 1 (from the file name), got 0");
}

TEST_F(ValidateTraceDir, ParametersDisagree) {
  RunMeta meta = testing::example_meta(1, 2);
  meta.parameters[1].name = "bias";
  const std::string text = meta_to_json(meta);
  testing::write_text(path("rank-1.meta.json"), text);
  EXPECT_EQ(read_error(), path("rank-1.meta.json") + ":" +
                              std::to_string(line_of(text, "\"parameters\"")) +
                              ": expected parameters[1] = fc.bias (2 x float32) (as in "
                              "rank-0.meta.json), got bias (2 x float32)");
}

TEST_F(ValidateTraceDir, RankBeyondWorldSize) {
  std::filesystem::copy_file(path("rank-1.events.csv"), path("rank-2.events.csv"));
  EXPECT_EQ(read_error(), path("rank-2.events.csv") +
                              ":0: expected rank files 0..1 only (world_size 2), got a file of rank 2");
}

}  // namespace
}  // namespace ddpsim::trace
