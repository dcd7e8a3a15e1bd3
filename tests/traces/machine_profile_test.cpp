// The machine profile (traces/MACHINE.md): a profile written and read back is the same, and a
// file that breaks the schema is refused in one line naming the file, the line and what was
// expected.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "test_support.hpp"

namespace ddpsim::trace {
namespace {

using testing::TempDir;

MachineProfile example_profile() {
  MachineProfile profile;
  profile.tool_version = "0.1.0";
  profile.git_sha = "abc123";
  profile.created_utc = "2030-01-01T00:00:00Z";
  profile.launcher = "torchrun";
  profile.backend = "gloo";
  profile.device = "cpu";
  profile.world_size = 4;
  profile.hosts = {"node-a", "node-b"};
  profile.ranks_per_host = 2;
  profile.threads = 1;
  profile.torch_version = "2.13.0";
  profile.gloo_version = "";
  profile.nccl_version = "";
  profile.allreduce.in_flight = 2;
  for (std::int64_t bytes = 4096; bytes <= (64 << 20); bytes *= 4) {
    LadderStep step;
    step.bytes = bytes;
    // Values whose decimal text is long: the JSON must keep every bit.
    step.one = timing_of({1e-4 + static_cast<double>(bytes) / 3e9, 2e-4 + static_cast<double>(bytes) / 3e9,
                          1.5e-4 + static_cast<double>(bytes) / 3e9});
    step.together = timing_of({3e-4 + static_cast<double>(bytes) / 1.7e9});
    profile.allreduce.steps.push_back(step);
  }
  profile.allreduce.in_flight_gain = 1.2345678901234567;
  profile.compute.kernel = "float32 matrix products";
  profile.compute.alone = timing_of({0.010, 0.011, 0.012, 0.013});
  profile.compute.together = timing_of({0.012, 0.013});
  profile.compute.slowest = timing_of({0.013});
  profile.compute.effective_cores = 2 * 0.0115 / 0.013;
  ComputeCommOverlap overlap;
  overlap.bytes = 4 << 20;
  overlap.allreduce_alone = timing_of({0.0031, 0.0035, 0.0034});
  overlap.allreduce_busy = timing_of({0.0091, 0.0102});
  overlap.compute_quiet = timing_of({0.0125, 0.0127});
  overlap.compute_busy = timing_of({0.019, 0.0187, 0.0201});
  overlap.allreduce_fraction = 0.0034 / 0.00965;
  overlap.compute_fraction = 0.0125 / 0.019;
  overlap.by_size = {{1 << 20, timing_of({0.0009, 0.0011}), timing_of({0.0061, 0.0064})},
                     {4 << 20, overlap.allreduce_alone, overlap.allreduce_busy},
                     {16 << 20, timing_of({0.0151, 0.0163}), timing_of({0.031, 0.0335})}};
  profile.overlap = overlap;
  SleepResume sleep;
  sleep.requested_s = 1e-4;
  sleep.slept = timing_of({1.6e-4, 1.7e-4});
  sleep.resumed = timing_of({2.3e-4, 2.1e-4, 2.2e-4});
  sleep.hot = timing_of({1.8e-4, 1.9e-4});
  sleep.resume_cost_s = 1.0000000000000002e-4;
  profile.sleep = sleep;
  return profile;
}

void expect_same_timing(const Timing& a, const Timing& b) {
  EXPECT_EQ(a.median_s, b.median_s);
  EXPECT_EQ(a.min_s, b.min_s);
  EXPECT_EQ(a.max_s, b.max_s);
  EXPECT_EQ(a.samples, b.samples);
}

TEST(MachineProfile, TimingOfRepetitions) {
  const Timing odd = timing_of({3, 1, 2});
  EXPECT_EQ(odd.median_s, 2);
  EXPECT_EQ(odd.min_s, 1);
  EXPECT_EQ(odd.max_s, 3);
  EXPECT_EQ(odd.samples, 3);
  EXPECT_EQ(timing_of({4, 1, 2, 3}).median_s, 2.5);
  EXPECT_EQ(timing_of({}).samples, 0);
}

TEST(MachineProfile, SlowestRankOfEachHostInEachRound) {
  // Ranks 0 and 1 on host a, rank 2 on host b; two rounds each, rank after rank; 0: no compute.
  const std::vector<std::string> hosts = {"a", "a", "b"};
  EXPECT_EQ(slowest_per_host_and_round({1, 3, 2, 0, 5, 4}, hosts, 2), (std::vector<double>{2, 5, 3, 4}));
  // A host none of whose ranks computed in a round gives nothing for it.
  EXPECT_EQ(slowest_per_host_and_round({1, 3, 2, 0, 5, 0}, hosts, 2), (std::vector<double>{2, 5, 3}));
  EXPECT_THROW(slowest_per_host_and_round({1, 3, 2, 0, 5}, hosts, 2), std::invalid_argument);
}

// A profile written before `slowest` was measured keeps its effective cores as written.
TEST(MachineProfile, CoLocationWithoutTheSlowestRankReads) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(machine_profile_to_json(example_profile()));
  j["compute"].erase("slowest");
  const MachineProfile read = machine_profile_from_json(j.dump(), "m.json");
  EXPECT_FALSE(read.compute.slowest.has_value());
  EXPECT_EQ(read.compute.effective_cores, example_profile().compute.effective_cores);
  EXPECT_EQ(machine_profile_to_json(read).find("slowest"), std::string::npos);
}

TEST(MachineProfile, RoundTripsThroughAFile) {
  const TempDir dir;
  const MachineProfile written = example_profile();
  const std::string path = dir / "machine.json";
  write_machine_profile(path, written);
  const MachineProfile read = read_machine_profile(path);
  EXPECT_EQ(read.version, kMachineProfileVersion);
  EXPECT_EQ(read.tool_name, "ddp-machine-profile");
  EXPECT_EQ(read.tool_version, written.tool_version);
  EXPECT_EQ(read.git_sha, written.git_sha);
  EXPECT_EQ(read.created_utc, written.created_utc);
  EXPECT_EQ(read.launcher, written.launcher);
  EXPECT_EQ(read.backend, written.backend);
  EXPECT_EQ(read.device, written.device);
  EXPECT_EQ(read.world_size, written.world_size);
  EXPECT_EQ(read.hosts, written.hosts);
  EXPECT_EQ(read.ranks_per_host, written.ranks_per_host);
  EXPECT_EQ(read.threads, written.threads);
  EXPECT_EQ(read.torch_version, written.torch_version);
  EXPECT_EQ(read.gloo_version, written.gloo_version);
  EXPECT_EQ(read.nccl_version, written.nccl_version);
  EXPECT_EQ(read.allreduce.dtype, "float32");
  EXPECT_EQ(read.allreduce.in_flight, 2);
  EXPECT_EQ(read.allreduce.in_flight_gain, written.allreduce.in_flight_gain);
  ASSERT_EQ(read.allreduce.steps.size(), written.allreduce.steps.size());
  for (std::size_t i = 0; i < read.allreduce.steps.size(); ++i) {
    EXPECT_EQ(read.allreduce.steps[i].bytes, written.allreduce.steps[i].bytes);
    expect_same_timing(read.allreduce.steps[i].one, written.allreduce.steps[i].one);
    expect_same_timing(read.allreduce.steps[i].together, written.allreduce.steps[i].together);
  }
  EXPECT_EQ(read.compute.kernel, written.compute.kernel);
  expect_same_timing(read.compute.alone, written.compute.alone);
  expect_same_timing(read.compute.together, written.compute.together);
  ASSERT_TRUE(read.compute.slowest.has_value());
  expect_same_timing(*read.compute.slowest, *written.compute.slowest);
  EXPECT_EQ(read.compute.effective_cores, written.compute.effective_cores);
  ASSERT_TRUE(read.overlap && read.sleep);
  EXPECT_EQ(read.overlap->bytes, written.overlap->bytes);
  expect_same_timing(read.overlap->allreduce_alone, written.overlap->allreduce_alone);
  expect_same_timing(read.overlap->allreduce_busy, written.overlap->allreduce_busy);
  expect_same_timing(read.overlap->compute_quiet, written.overlap->compute_quiet);
  expect_same_timing(read.overlap->compute_busy, written.overlap->compute_busy);
  EXPECT_EQ(read.overlap->allreduce_fraction, written.overlap->allreduce_fraction);
  EXPECT_EQ(read.overlap->compute_fraction, written.overlap->compute_fraction);
  ASSERT_EQ(read.overlap->by_size.size(), written.overlap->by_size.size());
  for (std::size_t i = 0; i < read.overlap->by_size.size(); ++i) {
    EXPECT_EQ(read.overlap->by_size[i].bytes, written.overlap->by_size[i].bytes);
    expect_same_timing(read.overlap->by_size[i].allreduce_alone, written.overlap->by_size[i].allreduce_alone);
    expect_same_timing(read.overlap->by_size[i].allreduce_busy, written.overlap->by_size[i].allreduce_busy);
  }
  EXPECT_EQ(read.sleep->requested_s, written.sleep->requested_s);
  expect_same_timing(read.sleep->slept, written.sleep->slept);
  expect_same_timing(read.sleep->resumed, written.sleep->resumed);
  expect_same_timing(read.sleep->hot, written.sleep->hot);
  EXPECT_EQ(read.sleep->resume_cost_s, written.sleep->resume_cost_s);
  // And the text is stable: written again, byte for byte the same.
  EXPECT_EQ(machine_profile_to_json(read), machine_profile_to_json(written));
}

// The one-line error for `profile` edited by `edit`, or "" when it reads.
std::string error_of(const std::function<void(nlohmann::ordered_json&)>& edit) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(machine_profile_to_json(example_profile()));
  edit(json);
  try {
    machine_profile_from_json(json.dump(2), "m.json");
  } catch (const TraceError& error) {
    return error.what();
  }
  return "";
}

std::string error_of_text(const std::string& text) {
  try {
    machine_profile_from_json(text, "m.json");
  } catch (const TraceError& error) {
    return error.what();
  }
  return "";
}

TEST(MachineProfile, TheExampleReads) { EXPECT_EQ(error_of([](nlohmann::ordered_json&) {}), ""); }

// A profile of one overlap size (written before the sizes were listed) reads with none listed.
TEST(MachineProfile, OverlapSizesAreOptional) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(machine_profile_to_json(example_profile()));
  json["overlap"].erase("by_size");
  const MachineProfile read = machine_profile_from_json(json.dump(2), "m.json");
  ASSERT_TRUE(read.overlap);
  EXPECT_TRUE(read.overlap->by_size.empty());
  EXPECT_EQ(machine_profile_to_json(read), json.dump(2) + "\n");
}

// The sizes are written as the ladder's steps are: `bytes` first, each timing median first.
TEST(MachineProfile, OverlapSizesKeepTheLaddersFieldOrder) {
  const nlohmann::ordered_json json = nlohmann::ordered_json::parse(machine_profile_to_json(example_profile()));
  const nlohmann::ordered_json& step = json["allreduce"]["ladder"][0];
  const nlohmann::ordered_json& size = json["overlap"]["by_size"][0];
  EXPECT_EQ(size.begin().key(), step.begin().key());
  EXPECT_EQ(size.begin().key(), "bytes");
  EXPECT_EQ(size["allreduce_alone"].begin().key(), step["one"].begin().key());
  EXPECT_EQ(size["allreduce_alone"].begin().key(), "median_s");
}

// Three ranks a host: co-location at 2 and at 3 ranks at once, the last the top-level fields.
MachineProfile three_a_host() {
  MachineProfile profile = example_profile();
  profile.ranks_per_host = 3;
  profile.compute.together = timing_of({0.018, 0.019});
  profile.compute.slowest = timing_of({0.019});
  profile.compute.effective_cores = 3 * 0.0115 / 0.019;
  profile.compute.by_ranks = {{2, timing_of({0.0121, 0.0126}), timing_of({0.0126}), 2 * 0.0115 / 0.0126},
                              {3, profile.compute.together, profile.compute.slowest, profile.compute.effective_cores}};
  return profile;
}

TEST(MachineProfile, CoLocationAtEveryCountOfRanksRoundTrips) {
  const MachineProfile written = three_a_host();
  const MachineProfile read = machine_profile_from_json(machine_profile_to_json(written), "m.json");
  ASSERT_EQ(read.compute.by_ranks.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(read.compute.by_ranks[i].ranks, written.compute.by_ranks[i].ranks);
    expect_same_timing(read.compute.by_ranks[i].together, written.compute.by_ranks[i].together);
    ASSERT_TRUE(read.compute.by_ranks[i].slowest.has_value());
    expect_same_timing(*read.compute.by_ranks[i].slowest, *written.compute.by_ranks[i].slowest);
    EXPECT_EQ(read.compute.by_ranks[i].effective_cores, written.compute.by_ranks[i].effective_cores);
  }
  EXPECT_EQ(machine_profile_to_json(read), machine_profile_to_json(written));
  // Optional: a profile without it (two ranks a host, or written before it) reads with none.
  EXPECT_TRUE(machine_profile_from_json(machine_profile_to_json(example_profile()), "m.json").compute.by_ranks.empty());
}

TEST(MachineProfile, RefusesBadCoLocationCountsInOneLine) {
  const auto error = [](const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json json = nlohmann::ordered_json::parse(machine_profile_to_json(three_a_host()));
    edit(json);
    try {
      machine_profile_from_json(json.dump(2), "m.json");
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error([](auto&) {}), "");
  EXPECT_NE(error([](auto& j) { j["compute"]["by_ranks"][1]["ranks"] = 2; })
                .find("expected compute.by_ranks[1].ranks in [3, 3], got 2"),
            std::string::npos);
  EXPECT_NE(error([](auto& j) { j["compute"]["by_ranks"].erase(1); })
                .find("expected compute.by_ranks to end at ranks_per_host = 3, got 2"),
            std::string::npos);
  EXPECT_NE(error([](auto& j) { j["compute"]["by_ranks"][0]["effective_cores"] = 2.5; })
                .find("expected compute.by_ranks[0].effective_cores in (0, ranks = 2], got 2.5"),
            std::string::npos);
  EXPECT_NE(error([](auto& j) { j["compute"]["by_ranks"] = nlohmann::ordered_json::array(); })
                .find("expected compute.by_ranks to be a non-empty array, got array []"),
            std::string::npos);
  EXPECT_EQ(error([](auto& j) { j["compute"]["by_ranks"][0].erase("together"); }).find('\n'), std::string::npos);
}

// A version 1 file (no overlap, no sleep) still reads, and is written back as version 1.
TEST(MachineProfile, ReadsVersionOne) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(machine_profile_to_json(example_profile()));
  json["ddpsim_machine_profile"] = 1;
  json.erase("overlap");
  json.erase("sleep");
  const MachineProfile read = machine_profile_from_json(json.dump(2), "m.json");
  EXPECT_EQ(read.version, 1);
  EXPECT_FALSE(read.overlap);
  EXPECT_FALSE(read.sleep);
  EXPECT_EQ(nlohmann::ordered_json::parse(machine_profile_to_json(read)), json);
}

// Each bad input: what to break, and the error's exact text.
struct BadProfile {
  const char* name;
  std::function<void(nlohmann::ordered_json&)> edit;
  std::string error;
};

TEST(MachineProfile, RefusesBadInputInOneLine) {
  const std::vector<BadProfile> cases = {
      {"no version", [](auto& j) { j.erase("ddpsim_machine_profile"); },
       "m.json:1: expected a machine profile with \"ddpsim_machine_profile\": 2 (ddp-machine-profile --out), got no "
       "such field"},
      {"a newer version", [](auto& j) { j["ddpsim_machine_profile"] = 3; },
       "m.json:2: expected ddpsim_machine_profile in [1, 2], got 3"},
      {"version 2 without its overlap", [](auto& j) { j.erase("overlap"); },
       "m.json:1: expected field \"overlap\", got no such field"},
      {"an all-reduce faster busy than alone", [](auto& j) { j["overlap"]["allreduce_fraction"] = 1.5; },
       "m.json:"},
      {"overlap sizes out of order", [](auto& j) { j["overlap"]["by_size"][1]["bytes"] = 1 << 20; },
       "m.json:173: expected overlap.by_size[1].bytes above the size before's 1048576, got 1048576"},
      {"an overlap size without its busy time", [](auto& j) { j["overlap"]["by_size"][0].erase("allreduce_busy"); },
       "m.json:173: expected field \"overlap.by_size[0].allreduce_busy\", got no such field"},
      {"an empty list of overlap sizes", [](auto& j) { j["overlap"]["by_size"] = nlohmann::ordered_json::array(); },
       "m.json:173: expected overlap.by_size to be a non-empty array, got array []"},
      {"no resume cost", [](auto& j) { j["sleep"].erase("resume_cost_s"); },
       "m.json:"},
      {"a negative resume cost", [](auto& j) { j["sleep"]["resume_cost_s"] = -1e-4; },
       "m.json:"},
      {"another backend", [](auto& j) { j["backend"] = "mpi"; },
       "m.json:10: expected backend to be \"gloo\" or \"nccl\", got \"mpi\""},
      {"one rank", [](auto& j) { j["world_size"] = 1; },
       "m.json:12: expected world_size in [2, 2147483647], got 1"},
      {"a host twice", [](auto& j) { j["hosts"] = {"a", "a"}; }, "m.json:13: expected each host once, got \"a\" twice"},
      {"no hosts", [](auto& j) { j["hosts"] = nlohmann::ordered_json::array(); },
       "m.json:13: expected hosts to be a non-empty array of host names, got array []"},
      {"too few ranks per host", [](auto& j) { j["ranks_per_host"] = 1; },
       "m.json:17: expected ranks_per_host x hosts >= world_size (4), got 1 x 2"},
      {"no torch version", [](auto& j) { j["versions"].erase("torch"); },
       "m.json:19: expected field \"versions.torch\", got no such field"},
      {"one in flight", [](auto& j) { j["allreduce"]["in_flight"] = 1; },
       "m.json:24: expected allreduce.in_flight in [2, 64], got 1"},
      {"an empty ladder", [](auto& j) { j["allreduce"]["ladder"] = nlohmann::ordered_json::array(); },
       "m.json:24: expected allreduce.ladder to be a non-empty array, got array []"},
      {"sizes out of order", [](auto& j) { j["allreduce"]["ladder"][1]["bytes"] = 4096; },
       "m.json:24: expected allreduce.ladder[1].bytes above the step before's 4096, got 4096"},
      {"a negative time", [](auto& j) { j["allreduce"]["ladder"][2]["one"]["median_s"] = -1.0; },
       "m.json:24: expected allreduce.ladder[2].one.median_s to be a finite number > 0, got -1.0"},
      {"a median outside its range", [](auto& j) { j["allreduce"]["ladder"][0]["together"]["max_s"] = 1e-9; },
       "m.json:24: expected allreduce.ladder[0].together with min_s <= median_s <= max_s, got "},
      {"no samples", [](auto& j) { j["allreduce"]["ladder"][0]["one"]["samples"] = 0; },
       "m.json:24: expected allreduce.ladder[0].one.samples in [1, 2147483647], got 0"},
      {"a gain above K", [](auto& j) { j["allreduce"]["in_flight_gain"] = 2.5; },
       "m.json:24: expected allreduce.in_flight_gain in (0, in_flight = 2], got 2.5"},
      {"more cores than ranks", [](auto& j) { j["compute"]["effective_cores"] = 3; },
       "m.json:"},
      {"a string for a number", [](auto& j) { j["compute"]["alone"]["median_s"] = "fast"; },
       "m.json:"},
      {"a slowest rank without samples", [](auto& j) { j["compute"]["slowest"]["samples"] = 0; },
       "m.json:"},
  };
  for (const BadProfile& bad : cases) {
    const std::string error = error_of(bad.edit);
    EXPECT_EQ(error.substr(0, bad.error.size()), bad.error) << bad.name << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << bad.name;
  }
  EXPECT_NE(error_of([](auto& j) { j["compute"]["slowest"]["samples"] = 0; })
                .find("expected compute.slowest.samples in [1, 2147483647], got 0"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& j) { j["compute"]["effective_cores"] = 3; }).find("expected compute.effective_cores in (0, ranks_per_host = 2], got 3"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& j) { j["overlap"]["allreduce_fraction"] = 1.5; })
                .find("expected overlap.allreduce_fraction in (0, 1], got 1.5"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& j) { j["sleep"].erase("resume_cost_s"); })
                .find("expected field \"sleep.resume_cost_s\", got no such field"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& j) { j["sleep"]["resume_cost_s"] = -1e-4; })
                .find("expected sleep.resume_cost_s to be a finite number >= 0, got -0.0001"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& j) { j["compute"]["alone"]["median_s"] = "fast"; })
                .find("expected compute.alone.median_s to be a number, got string \"fast\""),
            std::string::npos);
}

TEST(MachineProfile, RefusesWhatIsNotAProfile) {
  EXPECT_EQ(error_of_text("{\n  \"a\": 1,\n}"),
            "m.json:3: expected a JSON machine profile (ddp-machine-profile --out), got unexpected '}'; expected "
            "string literal");
  EXPECT_EQ(error_of_text("[1, 2]"),
            "m.json:1: expected a JSON object (ddp-machine-profile --out), got array [1,2]");
  // Found by the fuzzer: a number too large for a double (nlohmann-json's out_of_range, not a
  // parse error) and nesting its parser would recurse into until the stack ran out.
  EXPECT_EQ(error_of_text("{\n  \"ddpsim_machine_profile\": 1e400}"),
            "m.json:2: expected a JSON machine profile (ddp-machine-profile --out), got number overflow parsing '1e400'");
  EXPECT_EQ(error_of_text(std::string(100000, '[')), "m.json:1: expected JSON nested at most 64 deep, got deeper nesting");
  // A trace's metadata is not a profile.
  EXPECT_EQ(error_of_text("{\"schema\": \"ddpsim-trace\"}"),
            "m.json:1: expected a machine profile with \"ddpsim_machine_profile\": 2 (ddp-machine-profile --out), got "
            "no such field");
  try {
    read_machine_profile("/nonexistent/machine.json");
    FAIL() << "read a missing file";
  } catch (const TraceError& error) {
    EXPECT_STREQ(error.what(),
                 "/nonexistent/machine.json:0: expected a readable machine profile (ddp-machine-profile --out), got no "
                 "file that can be read");
  }
}

TEST(MachineProfile, WriteNamesTheFileItCannotWrite) {
  try {
    write_machine_profile("/nonexistent/dir/machine.json", example_profile());
    FAIL() << "wrote into a missing directory";
  } catch (const TraceError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/dir/machine.json"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace ddpsim::trace
