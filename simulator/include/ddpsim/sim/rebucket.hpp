// What-if: another bucket_cap_mb. Re-buckets the parameters the way DDP does and derives
// when each new bucket becomes ready from the measured per-parameter gradient times.
#pragma once

#include <cstdint>
#include <vector>

#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/model.hpp"

namespace ddpsim::sim {

struct BucketCaps {
  BucketCaps() = default;
  BucketCaps(std::int64_t cap_bytes, std::int64_t first_cap_bytes)
      : bucket_cap_bytes(cap_bytes), first_bucket_cap_bytes(first_cap_bytes) {}

  std::int64_t bucket_cap_bytes = 25LL * 1024 * 1024;
  std::int64_t first_bucket_cap_bytes = 1024LL * 1024;
  // DDP's bucket_cap_mb_list in bytes (PyTorch 2.13): when not empty it replaces the two caps
  // above as c10d's size-limit vector: bucket i of a dtype closes at entry i, the last
  // repeating.
  std::vector<std::int64_t> cap_list_bytes;

  // The size-limit vector c10d's rule walks: cap_list_bytes, or {first, cap}.
  std::vector<std::int64_t> limits() const;
  // One cap for every bucket (first == cap), or a list.
  static BucketCaps single(std::int64_t cap_bytes);
  // What `bucket_cap_mb` = cap means for a job recorded with `meta`'s caps: where its first
  // bucket had the others' cap (PyTorch's DDP given bucket_cap_mb, which caps every bucket
  // alike; ddp-train --first-bucket-cap-mb equal to its cap), the first bucket follows the new
  // cap; otherwise it keeps the trace's (DDP's default 1 MiB first bucket).
  static BucketCaps for_cap(const trace::RunMeta& meta, std::int64_t cap_bytes);
  static BucketCaps list(std::vector<std::int64_t> cap_list_bytes);
};

// c10d's compute_bucket_assignment_by_size rule, as the Reducer applies it when it rebuilds
// the buckets after iteration 0 (the layout used from iteration 1 on): parameters are taken
// in `order` (the order their gradients became ready); each dtype fills its own open bucket;
// a bucket closes as soon as its bytes reach the current limit; the limits are caps.limits()
// per dtype: the first bucket of each dtype has the first limit, the next the next, the last
// limit repeating (first_bucket_cap_bytes then bucket_cap_bytes without a list); the
// partly filled buckets are appended last, the dtype first seen last first (the iteration
// order of c10d's unordered_map under libstdc++). Bucket 0 is the first to become ready.
// Checked against torch.distributed._compute_bucket_assignment_by_size and against layouts
// the Reducer recorded (tests/simulator/test_rebucket_reference.cpp).
// (DDP's constructor, which does not know the gradient order yet, applies the same rule to
// the parameters in registration order and reverses the result; with the reverse
// registration order as `order` this gives the same buckets up to where the small first
// bucket lands.)
std::vector<std::vector<int>> compute_bucket_assignment(const std::vector<trace::Parameter>& parameters,
                                                        const std::vector<int>& order, const BucketCaps& caps);

// The order in which rank 0's gradients became ready (its median offsets; DDP syncs rank
// 0's order when it rebuilds), ties broken by reverse registration order. Parameters without
// a measured gradient time go last, in reverse registration order.
std::vector<int> gradient_ready_order(const WorkloadModel& model);

// The model with the buckets recomputed for `caps`: bucket b is ready when its last gradient
// is, plus the median lag measured between a bucket's last gradient and its bucket_ready;
// its bytes on the wire keep the trace's wire/parameter ratio (an fp16 hook halves them).
// The one re-bucketing path for a single cap and for a list of caps. The model's
// source_meta records the caps (with a list: bucket_cap_bytes_list, and both single caps at its
// largest, as PyTorch's DDP sets them).
// Throws WorkloadError when the trace lacks gradient times or a cap is not positive.
WorkloadModel rebucket(const WorkloadModel& model, const BucketCaps& caps);

}  // namespace ddpsim::sim
