// Imports standard PyTorch profiler (Kineto) traces recorded by other people on real GPU
// clusters (../shared/kineto-real, see its README.md). The folder is not
// part of the repository: every test skips where it is absent (a user's fresh clone).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <zlib.h>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"
#include "kineto_test_support.hpp"
#include "test_support.hpp"
#include "ddpsim/trace/model.hpp"
#include "ddpsim/trace/summary.hpp"

namespace fs = std::filesystem;
using ddpsim::trace::testing::TempDir;
using ddpsim::trace::Event;
using ddpsim::trace::EventType;
using ddpsim::trace::Trace;
using ddpsim::trace::TraceError;

namespace {

const fs::path kReal = DDPSIM_KINETO_REAL;

#define SKIP_WITHOUT(set)                                                          \
  if (!fs::exists(kReal / (set))) GTEST_SKIP() << (kReal / (set)) << " is absent"

std::vector<std::string> files(const std::string& set, int count) {
  std::vector<std::string> result;
  for (int rank = 0; rank < count; ++rank) {
    result.push_back((kReal / set / ("rank-" + std::to_string(rank) + ".json.gz")).string());
  }
  return result;
}


// Per iteration, the bytes of the all-reduces in launch order (from allreduce_begin).
std::map<std::int64_t, std::vector<std::int64_t>> allreduce_bytes(const std::vector<Event>& events) {
  std::map<std::int64_t, std::vector<std::int64_t>> result;
  for (const Event& event : events) {
    if (event.type == EventType::AllreduceBegin) result[event.iteration].push_back(event.bytes);
  }
  return result;
}

// Writes the trace and reads it back through the validating reader.
Trace round_trip(const Trace& trace, const std::string& name) {
  const TempDir scratch;  // removed also when read_trace throws
  const fs::path dir = scratch.path() / name;
  ddpsim::trace::write_trace(dir.string(), trace);
  return ddpsim::trace::read_trace(dir.string());
}

bool has_note(const ddpsim::trace::Summary& summary, const std::string& text) {
  return std::any_of(summary.notes.begin(), summary.notes.end(),
                     [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

}  // namespace

TEST(KinetoReal, ResNet50RankZeroOfTwoHasFiveBucketsOfAllParameters) {
  SKIP_WITHOUT("resnet50-ddp-a100-rank0");
  const Trace trace = ddpsim::trace::import_kineto(files("resnet50-ddp-a100-rank0", 1));
  ASSERT_EQ(trace.ranks.size(), 2u) << "rank 0 of 2 replays as 2 identical ranks";
  const auto& meta = trace.ranks[0].meta;
  EXPECT_EQ(meta.world_size, 2);
  EXPECT_EQ(meta.backend, "nccl");
  EXPECT_EQ(meta.settings.at("nccl_version"), "2.17.1");
  EXPECT_EQ(meta.settings.at("replicated_from_rank"), "0");
  EXPECT_EQ(trace.ranks[1].meta.rank, 1);
  const std::vector<std::int64_t> numel = {2049000, 7875584, 6563840, 6637568, 2431040};
  ASSERT_EQ(meta.parameters.size(), numel.size());
  std::int64_t total = 0;
  for (std::size_t b = 0; b < numel.size(); ++b) {
    EXPECT_EQ(meta.parameters[b].numel, numel[b]) << "bucket " << b;
    EXPECT_EQ(meta.parameters[b].dtype, "float32");
    total += meta.parameters[b].numel;
  }
  EXPECT_EQ(total, 25557032);  // ResNet-50's parameters
  const auto per_iteration = allreduce_bytes(trace.ranks[0].events);
  ASSERT_EQ(per_iteration.size(), 3u);  // ProfilerStep#4..6
  EXPECT_EQ(per_iteration.begin()->first, 4);
  for (const auto& [iteration, bytes] : per_iteration) {
    ASSERT_EQ(bytes.size(), 5u) << iteration;
    for (std::size_t b = 0; b < 5; ++b) EXPECT_EQ(bytes[b], numel[b] * 4);
  }

  const Trace back = round_trip(trace, "resnet");
  const auto summary = ddpsim::trace::summarize(back);
  EXPECT_EQ(summary.num_buckets, 5);
  EXPECT_EQ(summary.iterations.size(), 3u);
  EXPECT_TRUE(has_note(summary, "25557032 float32 all-reduced per step in 5 buckets"));
  EXPECT_TRUE(has_note(summary, "of a 2-rank job; the other ranks are identical copies"));
  EXPECT_TRUE(has_note(summary, "broadcast x2"));  // DDP's buffer broadcasts, kept
}

TEST(KinetoReal, DlrmHasThreeAllreducesPerStepOnEveryRankAndItsAllToAlls) {
  SKIP_WITHOUT("dlrm-8rank-v100");
  const Trace trace = ddpsim::trace::import_kineto(files("dlrm-8rank-v100", 8));
  ASSERT_EQ(trace.ranks.size(), 8u);
  for (const auto& rank : trace.ranks) {
    EXPECT_EQ(rank.meta.settings.count("replicated_from_rank"), 0u);
    const auto per_iteration = allreduce_bytes(rank.events);
    ASSERT_EQ(per_iteration.size(), 1u) << "rank " << rank.meta.rank;
    EXPECT_EQ(per_iteration.begin()->first, 10);  // ProfilerStep#10
    EXPECT_EQ(per_iteration.begin()->second,
              (std::vector<std::int64_t>{394241 * 4, 112 * 4, 226960 * 4}))
        << "rank " << rank.meta.rank;
    const auto all_to_all = std::count_if(rank.events.begin(), rank.events.end(), [](const Event& e) {
      return e.type == EventType::Collective && e.kind == "all_to_all" && e.dur_ns > 0;
    });
    EXPECT_EQ(all_to_all, 5) << "rank " << rank.meta.rank;
    // All-reduce times come from the NCCL kernels: inside the step, after the launch.
    std::map<int, std::int64_t> ready;
    for (const Event& e : rank.events) {
      if (e.type == EventType::BucketReady) ready[e.bucket] = e.t_ns;
      if (e.type == EventType::AllreduceBegin) {
        EXPECT_GE(e.t_ns, ready.at(e.bucket));
      }
    }
  }
  // Its 15 gradients with their shapes: the 112 floats DDP bucketed alone, between the top MLP's
  // first six (the 1 MiB first bucket) and the rest, at DDP's default caps.
  const auto& meta = trace.ranks.at(0).meta;
  ASSERT_EQ(meta.settings.at("parameters"), "per-gradient") << meta.settings.at("parameters_reason");
  ASSERT_EQ(meta.parameters.size(), 15u);
  const auto& buckets = meta.bucket_assignments.at(0).buckets;
  ASSERT_EQ(buckets.size(), 3u);
  ASSERT_EQ(buckets[1].size(), 1u);
  for (const auto& parameter : meta.parameters) {
    EXPECT_EQ(parameter.alone, parameter.index == buckets[1][0]) << parameter.name;
  }
  EXPECT_EQ(meta.parameters.at(static_cast<std::size_t>(buckets[1][0])).numel, 112);
  EXPECT_EQ(buckets[0].size(), 6u);
  EXPECT_EQ(meta.bucket_cap_bytes, 25LL * 1024 * 1024);
  EXPECT_EQ(meta.first_bucket_cap_bytes, 1024LL * 1024);
  const Trace back = round_trip(trace, "dlrm");
  const auto summary = ddpsim::trace::summarize(back);
  EXPECT_EQ(summary.world_size, 8);
  EXPECT_EQ(summary.num_buckets, 3);
  EXPECT_TRUE(has_note(summary, "all_to_all x5"));
}

TEST(KinetoReal, SampledTraceWithoutAllreduceKernelsIsRefusedInOneLine) {
  SKIP_WITHOUT("sampled-2of128");
  const auto rank_files = files("sampled-2of128", 2);
  const std::string message = kineto_test::import_error(rank_files);
  EXPECT_EQ(message.rfind(rank_files[0] + ":0: expected an NCCL AllReduce kernel", 0), 0u)
      << message;
  EXPECT_NE(message.find("no AllReduce kernel at all"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(kineto_test::import_error({rank_files[1]}).find(rank_files[1]), 0u);
}

TEST(KinetoReal, RanksOfAnotherJobSizeAreNamed) {
  SKIP_WITHOUT("dlrm-8rank-v100");
  const std::string message = kineto_test::import_error(files("dlrm-8rank-v100", 2));
  EXPECT_NE(message.find("expected a rank of a 2-rank job"), std::string::npos) << message;
  EXPECT_NE(message.find("got rank 0 of 8"), std::string::npos) << message;
}

TEST(KinetoReal, PlainJsonReadsLikeGzip) {
  SKIP_WITHOUT("dlrm-8rank-v100");
  const std::string gz = files("dlrm-8rank-v100", 1)[0];
  const fs::path plain = fs::temp_directory_path() / "ddpsim-kineto-real-plain-rank-0.json";
  {
    gzFile in = gzopen(gz.c_str(), "rb");
    ASSERT_NE(in, nullptr);
    std::ofstream out(plain, std::ios::binary);
    char buffer[1 << 16];
    int got = 0;
    while ((got = gzread(in, buffer, sizeof buffer)) > 0) out.write(buffer, got);
    gzclose(in);
  }
  const Trace from_gz = ddpsim::trace::import_kineto({gz});
  const Trace from_plain = ddpsim::trace::import_kineto({plain.string()});
  fs::remove(plain);
  ASSERT_EQ(from_gz.ranks.size(), 8u);  // rank 0 of 8, replicated
  ASSERT_EQ(from_plain.ranks.size(), 8u);
  ASSERT_EQ(from_gz.ranks[3].events.size(), from_plain.ranks[3].events.size());
  for (std::size_t i = 0; i < from_gz.ranks[3].events.size(); ++i) {
    EXPECT_EQ(from_gz.ranks[3].events[i].t_ns, from_plain.ranks[3].events[i].t_ns);
  }
}
