// A synthetic "measured" DDP trace with known costs, built through the traces library.
//
// The timeline follows the model the simulator assumes (one comm stream per rank, buckets in
// order, an all-reduce starts when the last rank starts it and takes t(S) = ring formula),
// so a replay of it must give back its iteration time, and a calibration its α and β.
#pragma once

#include <cstdint>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::sim::testing {

struct SyntheticRun {
  int world_size = 4;
  int iterations = 10;  // iteration 0 (one bucket) included
  double alpha_s = 40e-6;
  double beta_bytes_per_s = 2e9;
  // float32 parameters in registration order; buckets (from iteration 1) in all-reduce order.
  std::vector<std::int64_t> param_numel = {262144, 512, 1048576, 1024, 524288, 256, 2097152, 128};
  std::vector<std::vector<int>> buckets = {{7, 6}, {5, 4}, {3, 2}, {1, 0}};
  // Base compute phases, seconds.
  double before_forward_s = 0.001;
  double forward_s = 0.020;
  double before_backward_s = 0.0005;
  double backward_s = 0.030;  // first gradient → last gradient spread over this
  double backward_tail_s = 0.0004;
  // > 0: before that tail, the reducer's finalize copies each bucket back at this cost, in
  // bucket order once autograd is done and the bucket's all-reduce ended (Note [reducer
  // finalize]); the same on every rank.
  double finalize_seconds_per_byte = 0;
  // > 0: each rank works this long per byte on a bucket from its launch before the bucket's
  // transfer can start (a comm hook's averaging pass; Note [local all-reduce work]).
  double local_seconds_per_byte = 0;
  double before_optimizer_s = 0.0002;
  double optimizer_s = 0.004;
  double after_optimizer_s = 0.0003;
  // Rank r computes slower by (1 + rank_skew·r); iteration i (≥ 1) by jitter[i mod size].
  double rank_skew = 0.02;
  std::vector<double> jitter = {1.0, 1.03, 0.97, 1.01, 0.99, 1.05, 0.95, 1.02, 0.98};
  // One straggling all-reduce: (iteration, bucket) takes this much longer than t(S).
  std::int64_t straggler_iteration = 3;
  int straggler_bucket = 1;
  double straggler_extra_s = 0.05;
  // One injected stall (a `delay` event, as ddp-train --delay records it): rank stall_rank
  // sleeps stall_s before the forward pass of stall_iteration. stall_s = 0: none.
  int stall_rank = 1;
  std::int64_t stall_iteration = 5;
  double stall_s = 0;
};

trace::Trace make_synthetic_trace(const SyntheticRun& run);

// The job's iteration time per complete iteration, seconds (trace::Trace::iteration_times).
std::vector<double> iteration_times_s(const trace::Trace& trace);
// Median over the complete iterations but the first (all, if there is only one).
double median_iteration_s(const trace::Trace& trace);

}  // namespace ddpsim::sim::testing
