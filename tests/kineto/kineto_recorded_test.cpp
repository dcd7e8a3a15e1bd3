// Real profiler traces recorded by ddpsim's own scripts on hardware CI does not have (one H100:
// traces/examples/kineto-h100/), imported as a user's would be. The
// expected buckets are the ones ddp-train's own trace of the same model reported on that GPU.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ddpsim/trace/kineto.hpp"
#include "ddpsim/trace/model.hpp"
#include "ddpsim/trace/summary.hpp"

using ddpsim::trace::Event;
using ddpsim::trace::EventType;
using ddpsim::trace::Trace;

namespace {

const std::string kH100 = DDPSIM_KINETO_EXAMPLES "-h100";

// MLP 2048x8 plus a 10-class head, float32, as the Reducer bucketed it at 25 MiB.
const std::vector<std::int64_t> kBucketBytes = {16867368, 33570816, 33570816, 33570816, 16785408};

std::vector<std::int64_t> bucket_bytes(const Trace& trace) {
  std::vector<std::int64_t> bytes;
  const auto& meta = trace.ranks.front().meta;
  for (int b = 0; b < static_cast<int>(meta.bucket_assignments.back().buckets.size()); ++b) {
    bytes.push_back(meta.bucket_bytes(meta.bucket_assignments.back(), b));
  }
  return bytes;
}

}  // namespace

TEST(KinetoRecordedOnH100, OneNcclRankImportsWithInstantAllreduces) {
  const Trace trace = ddpsim::trace::import_kineto({kH100 + "/nccl-1rank/rank-0.json.gz"});
  ASSERT_EQ(trace.world_size(), 1);
  const auto& meta = trace.ranks[0].meta;
  EXPECT_EQ(meta.backend, "nccl");
  EXPECT_EQ(meta.settings.at("nccl_version"), "2.28.9");
  EXPECT_EQ(meta.settings.at("allreduce_timing"), "none (one NCCL rank transfers nothing)");
  EXPECT_EQ(bucket_bytes(trace), kBucketBytes);
  EXPECT_EQ(trace.ranks[0].complete_iterations().size(), 10u);
  std::vector<std::int64_t> begins, ends;
  for (const Event& e : trace.ranks[0].events) {
    if (e.type == EventType::AllreduceBegin) begins.push_back(e.t_ns);
    if (e.type == EventType::AllreduceEnd) ends.push_back(e.t_ns);
  }
  EXPECT_EQ(begins.size(), 50u);  // 5 buckets x 10 steps
  EXPECT_EQ(begins, ends);
}

TEST(KinetoRecordedOnH100, GlooWithCudaTensorsIsTimedByItsWorkers) {
  const Trace trace = ddpsim::trace::import_kineto(
      {kH100 + "/gloo-cuda-2ranks/rank-0.json.gz", kH100 + "/gloo-cuda-2ranks/rank-1.json.gz"});
  ASSERT_EQ(trace.world_size(), 2);
  EXPECT_EQ(trace.ranks[1].meta.backend, "gloo");
  EXPECT_EQ(trace.ranks[1].meta.settings.at("allreduce_timing"), "gloo worker spans");
  EXPECT_EQ(bucket_bytes(trace), kBucketBytes);
  const ddpsim::trace::Summary summary = ddpsim::trace::summarize(trace);
  EXPECT_EQ(summary.iterations.size(), 10u);
  // Every bucket moved its bytes at a plausible host rate (Gloo copies to the CPU): 0.3-5 GB/s.
  ASSERT_EQ(summary.buckets.size(), 5u);
  for (const auto& bucket : summary.buckets) {
    EXPECT_GT(bucket.algbw_gbps, 0.3) << "bucket " << bucket.bucket;
    EXPECT_LT(bucket.algbw_gbps, 5.0) << "bucket " << bucket.bucket;
  }
}
