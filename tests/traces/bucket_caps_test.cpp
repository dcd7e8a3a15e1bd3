// The caps a recorded layout admits (bucket_caps.hpp), against layouts worked out by hand from
// c10d's rule: a bucket closes as soon as its bytes reach the limit, the first bucket of each
// dtype at the first cap, later ones at the second.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ddpsim/trace/bucket_caps.hpp"
#include "ddpsim/trace/model.hpp"

using ddpsim::trace::BucketAssignment;
using ddpsim::trace::infer_bucket_caps;
using ddpsim::trace::InferredCaps;
using ddpsim::trace::Parameter;

namespace {

constexpr std::int64_t kMiB = 1024LL * 1024;

// float32 parameters of these byte sizes, indexed in the order given.
std::vector<Parameter> parameters_of(const std::vector<std::int64_t>& bytes, const std::string& dtype = "float32") {
  std::vector<Parameter> parameters;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    Parameter p;
    p.index = static_cast<int>(i);
    p.name = "p" + std::to_string(i);
    p.dtype = dtype;
    p.numel = bytes[i] / ddpsim::trace::dtype_size(dtype);
    parameters.push_back(p);
  }
  return parameters;
}

BucketAssignment layout_of(std::vector<std::vector<int>> buckets) {
  BucketAssignment layout;
  layout.buckets = std::move(buckets);
  return layout;
}

}  // namespace

// Ready order 0..4 of 0.5, 4, 8, 8, 2 MiB, bucketed {0, 1} {2, 3} {4}: the first bucket closed
// at 4.5 MiB with 0.5 before its last (first cap in (0.5, 4.5]); the second at 16 with 8
// before (cap in (8, 16]); the last holds 2 with 0 before it (cap above 0).
TEST(BucketCaps, ClosedBucketsBoundTheirCapOnBothSides) {
  const auto params = parameters_of({kMiB / 2, 4 * kMiB, 8 * kMiB, 8 * kMiB, 2 * kMiB});
  const InferredCaps caps = infer_bucket_caps(params, layout_of({{0, 1}, {2, 3}, {4}}));
  ASSERT_TRUE(caps.consistent);
  EXPECT_EQ(caps.first.above, kMiB / 2);
  EXPECT_EQ(caps.first.at_most, 9 * kMiB / 2);
  EXPECT_EQ(caps.cap.above, 8 * kMiB);
  EXPECT_EQ(caps.cap.at_most, 16 * kMiB);
  // DDP's default first cap (1 MiB) fits; 25 MiB does not, the smallest whole MiB above 8 does.
  EXPECT_EQ(caps.first_bytes, kMiB);
  EXPECT_EQ(caps.cap_bytes, 9 * kMiB);
  EXPECT_NE(caps.describe().find("bucket_cap_mb 9 (any in (8, 16] MiB"), std::string::npos) << caps.describe();
}

// A parameter DDP bucketed alone (Parameter::alone) bounds no cap: DLRM's layout of 1.5 MiB,
// then 448 bytes alone, then the rest, is DDP's defaults.
TEST(BucketCaps, AParameterAloneBoundsNoCap) {
  auto params = parameters_of({kMiB / 2, kMiB, 448, 3 * kMiB / 4});
  const auto layout = layout_of({{0, 1}, {2}, {3}});
  // By the rule alone, 448 bytes closed a bucket: a cap of at most 448 bytes, which no job sets.
  EXPECT_EQ(infer_bucket_caps(params, layout).cap.at_most, 448);
  params[2].alone = true;
  const InferredCaps caps = infer_bucket_caps(params, layout);
  ASSERT_TRUE(caps.consistent) << caps.describe();
  EXPECT_EQ(caps.first.above, kMiB / 2);
  EXPECT_EQ(caps.first.at_most, 3 * kMiB / 2);
  EXPECT_EQ(caps.cap.above, 0);
  EXPECT_EQ(caps.first_bytes, kMiB);
  EXPECT_EQ(caps.cap_bytes, 25 * kMiB);
}

// DDP's defaults are taken where the layout admits them: 4.2 MB then the rest (12.6 MB) in one
// bucket, as a 1024x4 MLP at 25 MiB.
TEST(BucketCaps, DdpDefaultsAreTakenWhereTheyFit) {
  const auto params = parameters_of({41000, 4198400, 4198400, 4198400, 4198400});
  const InferredCaps caps = infer_bucket_caps(params, layout_of({{0, 1}, {2, 3, 4}}));
  ASSERT_TRUE(caps.consistent);
  EXPECT_FALSE(caps.cap.at_most >= 0);  // the last bucket bounds its cap from below only
  EXPECT_EQ(caps.cap_bytes, 25 * kMiB);
  EXPECT_EQ(caps.first_bytes, kMiB);
}

// One bucket bounds only the first cap (from below: it never closed); any bucket_cap_mb gives it,
// and the report says so rather than "any MiB".
TEST(BucketCaps, OneBucketLeavesTheCapFree) {
  const auto params = parameters_of({kMiB / 4, 2 * kMiB, kMiB / 8});
  const InferredCaps caps = infer_bucket_caps(params, layout_of({{0, 1, 2}}));
  ASSERT_TRUE(caps.consistent) << caps.describe();
  EXPECT_FALSE(caps.cap.constrained);
  EXPECT_EQ(caps.first.above, 9 * kMiB / 4);
  EXPECT_NE(caps.describe().find("bucket_cap_mb 25 (any cap gives the recorded buckets), first bucket 25 MiB (any above "),
            std::string::npos)
      << caps.describe();
}

// A first bucket as large as the others: DDP(bucket_cap_mb=X) given explicitly caps it at X too.
TEST(BucketCaps, FirstCapTakesTheOtherCapWhenDefaultDoesNotFit) {
  const auto params = parameters_of({3 * kMiB, 3 * kMiB, 3 * kMiB, 3 * kMiB, 3 * kMiB});
  const InferredCaps caps = infer_bucket_caps(params, layout_of({{0, 1}, {2, 3}, {4}}));
  ASSERT_TRUE(caps.consistent);
  EXPECT_EQ(caps.cap_bytes, 4 * kMiB);    // (3, 6]: the smallest whole MiB
  EXPECT_EQ(caps.first_bytes, 4 * kMiB);  // 1 MiB closes after p0 alone; the other cap fits
}

// No pair of caps gives these: the second bucket closed at 2 MiB, the third held 8 MiB before
// its last parameter without closing.
TEST(BucketCaps, ALayoutNoPairOfCapsGivesIsSaid) {
  const auto params = parameters_of({kMiB, kMiB, kMiB, 8 * kMiB, kMiB, kMiB});
  const InferredCaps caps = infer_bucket_caps(params, layout_of({{0}, {1, 2}, {3, 4}, {5}}));
  EXPECT_FALSE(caps.consistent);
  EXPECT_NE(caps.describe().find("no pair of caps gives the recorded buckets"), std::string::npos) << caps.describe();
}

// Each dtype keeps its own limits: the first float16 bucket is bounded by the first cap.
TEST(BucketCaps, EachDtypeStartsAtTheFirstCap) {
  auto params = parameters_of({2 * kMiB, 2 * kMiB});
  const auto halves = parameters_of({kMiB / 2, kMiB}, "float16");
  for (Parameter p : halves) {
    p.index += 2;
    params.push_back(p);
  }
  const InferredCaps caps = infer_bucket_caps(params, layout_of({{0}, {2, 3}, {1}}));
  ASSERT_TRUE(caps.consistent);
  // float32: {0} closed at 2 MiB (first in (0, 2]); float16's only bucket {2, 3} held 0.5 MiB
  // before its last without closing (first above 0.5).
  EXPECT_EQ(caps.first.above, kMiB / 2);
  EXPECT_EQ(caps.first.at_most, 2 * kMiB);
  EXPECT_EQ(caps.first_bytes, kMiB);
}

// Sub-MiB caps: the roundest size the range admits (here 0.25 MiB, not 1/64 MiB).
TEST(BucketCaps, FractionalCapsAreTheRoundestSizeInTheRange) {
  const auto params = parameters_of({1024, 256 * 1024, 1024, 256 * 1024, 1024, 256 * 1024});
  const InferredCaps caps = infer_bucket_caps(params, layout_of({{0, 1}, {2, 3}, {4, 5}}));
  ASSERT_TRUE(caps.consistent);
  EXPECT_EQ(caps.cap_bytes, 256 * 1024);    // (1024, 263168]
  EXPECT_EQ(caps.first_bytes, 256 * 1024);  // the same range
}
