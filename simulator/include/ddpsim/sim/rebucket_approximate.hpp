// What-if bucket caps on a trace without per-parameter data (a profiler import).
//
// Why an approximation: a standard torch.profiler trace shows each bucket's all-reduce (its
// bytes, and when DDP launched it, i.e. when the bucket became ready) but not which parameters
// were in it, their sizes, or when their gradients were ready. DDP's own rule
// (compute_bucket_assignment, rebucket.hpp) needs those; without them the recorded buckets are
// the finest grain known, and a bucket's content is assumed to arrive at a uniform byte rate.
// Used only where the trace has no per-parameter records (settings "parameters": "per-bucket");
// every other trace takes rebucket() unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddpsim/sim/rebucket.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/model.hpp"

namespace ddpsim::sim {

// The one line the replay report and the predicted trace's settings ("sim.rebucket") carry.
extern const char* const kApproximateRebucketNote;

// True when the trace has one pseudo-parameter per all-reduce bucket (a profiler import
// recorded without shapes): no per-parameter sizes or gradient times.
bool has_only_bucket_records(const trace::RunMeta& meta);

// Part of a recorded bucket in a new bucket: `numel` elements of recorded bucket `recorded`,
// ending at `end_fraction` of its elements (1: its end).
struct BucketPiece {
  int recorded = 0;
  std::int64_t numel = 0;
  double end_fraction = 1;
};
using PlannedBucket = std::vector<BucketPiece>;

// The new layout, from the recorded buckets (one pseudo-parameter each, in reduction order),
// the caps the recording was made under, and the asked caps. New bucket j (counted per dtype)
// has the limit caps.limits()[j], the last repeating: DDP's first-bucket rule and lists.
//  - merge: consecutive recorded buckets of one dtype join while their bytes stay <= the limit;
//  - split: a recorded bucket larger than the limit is cut into equal pieces <= the limit
//    (a piece at a time while the limit still changes with j), but only where the limit is
//    below the one the bucket was recorded under: DDP closes a bucket once it reaches its
//    cap, so a recorded bucket exceeds its cap by its last parameter, and cutting it then
//    would invent a cut DDP never made. With the recorded caps this gives the recorded
//    layout back (for a layout DDP built under those caps).
// Each recorded bucket ends up whole in one new bucket or cut into consecutive pieces.
std::vector<PlannedBucket> plan_buckets_from_recorded(const std::vector<trace::Parameter>& recorded,
                                                      const BucketCaps& recorded_caps, const BucketCaps& caps);

// The model re-bucketed by that plan. A new bucket is ready when its last piece is; a piece
// ending at fraction f of recorded bucket k > 0 is ready at r[k-1] + f·(r[k] − r[k-1]) (its
// bytes produced at a uniform rate between the previous bucket's ready time and its own); the
// pieces of bucket 0 are all ready at r[0] (no earlier instant is known: a profiler import
// has no backward_begin). Bytes on the wire are shared in proportion to elements. Each new
// bucket becomes one pseudo-parameter; source_meta records the caps and the note.
// Throws WorkloadError when a cap is not positive.
WorkloadModel rebucket_from_buckets(const WorkloadModel& model, const BucketCaps& caps);

}  // namespace ddpsim::sim
