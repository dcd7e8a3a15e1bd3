// DDP's Reducer after autograd: it finalizes bucket by bucket, in bucket order, waiting for each
// bucket's all-reduce and copying its averaged gradients back before the next. Shared by the
// workload extraction (fitting the copy's cost to a trace's tails) and the replay (placing the
// copies after the what-if's all-reduces). See Note [reducer finalize] in docs/model.md.
#pragma once

#include <cstdint>
#include <vector>

namespace ddpsim::sim {

// When the finalize ends: it starts at `autograd_done_s` and, for each bucket b in order, waits
// until allreduce_end_s[b], then copies bucket_bytes[b] at `seconds_per_byte`. Times share one
// origin; a bucket without a known end (< 0) is taken to have ended when it is reached.
double finalize_end_s(double autograd_done_s, const std::vector<double>& allreduce_end_s,
                      const std::vector<std::int64_t>& bucket_bytes, double seconds_per_byte);

// The part of that finalize after both autograd and every all-reduce are done: what backward
// waits for beyond them (never negative).
double finalize_exposed_s(double autograd_done_s, const std::vector<double>& allreduce_end_s,
                          const std::vector<std::int64_t>& bucket_bytes, double seconds_per_byte);

// One iteration of one rank as recorded: when its autograd ended, when each bucket's all-reduce
// ended (bucket order; same origin) and how long backward went on after both.
struct RecordedFinalize {
  double autograd_done_s = 0;
  std::vector<double> allreduce_end_s;
  double tail_s = 0;
};

// The copy's seconds per byte that makes each iteration's exposed finalize equal its recorded
// tail, the median over the iterations (0 where none has a tail or all-reduce ends for every
// bucket). The exposed finalize grows with the cost per byte, so each is solved by bisection.
double fit_finalize_seconds_per_byte(const std::vector<RecordedFinalize>& iterations,
                                     const std::vector<std::int64_t>& bucket_bytes);

}  // namespace ddpsim::sim
