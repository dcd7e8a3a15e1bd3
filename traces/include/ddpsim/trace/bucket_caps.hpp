// The bucket caps under which DDP's rule gives back a recorded layout: the inverse of c10d's
// compute_bucket_assignment_by_size (its forward form is simulator/include/ddpsim/sim/rebucket.hpp).
//
// c10d walks the parameters in gradient-ready order, each dtype filling its own open bucket,
// and closes a bucket as soon as its bytes reach the current limit: the first bucket of a dtype
// closes at the first limit (first_bucket_cap_bytes), every later one at the second
// (bucket_cap_bytes). So a recorded bucket that was closed (not its dtype's last) says its
// limit lies in (its bytes without its last parameter, its bytes]; the last bucket of a dtype
// says only that its limit was above its bytes without its last parameter. Intersected over the
// buckets, these give the caps a layout admits; an empty intersection means no pair of caps
// gives it (a bucket_cap_mb_list, or parameters not in gradient-ready order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace {

// The limits (above, at_most] in bytes that a layout admits for one cap; at_most < 0: no upper
// bound. `constrained` is false when no bucket depends on this cap (any value gives the layout).
struct CapRange {
  std::int64_t above = 0;
  std::int64_t at_most = -1;
  bool constrained = false;

  bool empty() const { return at_most >= 0 && at_most <= above; }
  bool contains(std::int64_t bytes) const { return bytes > above && (at_most < 0 || bytes <= at_most); }
};

struct InferredCaps {
  CapRange first;  // the first bucket of each dtype
  CapRange cap;    // every later bucket
  bool consistent = true;
  // The caps taken for the trace: DDP's defaults (1 MiB first, 25 MiB) where they fit, else
  // the first cap equal to the other, else the roundest size in the range (the smallest
  // multiple of 1 MiB, else of 1/2, 1/4, ... 1/64 MiB), else the range's upper end.
  std::int64_t first_bytes = 1024LL * 1024;
  std::int64_t cap_bytes = 25LL * 1024 * 1024;

  // One line for a report, e.g. "bucket_cap_mb 25 (any in (12.01, 16.02] MiB gives the
  // recorded buckets), first bucket 1 MiB (any in (0.96, 4.01])".
  std::string describe() const;
};

// The caps under which c10d's rule gives `layout` (parameters listed, in each bucket, in the
// order their gradients became ready, as DDP's rebuilt buckets list them).
InferredCaps infer_bucket_caps(const std::vector<Parameter>& parameters, const BucketAssignment& layout);

}  // namespace ddpsim::trace
