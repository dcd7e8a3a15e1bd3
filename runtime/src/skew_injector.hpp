// Makes one rank a straggler, as told by a trace::SkewSpec (--slowdown, --delay, --delay-dist).
//
// Every injected sleep is recorded as a `delay` event (t_ns = when the sleep began, dur_ns = how
// long it lasted, kind slowdown | delay | distribution) so that a trace says what was injected
// and the simulator can tell injected time from measured time.
//
// Where the time goes:
//   - delay / distribution: one sleep right after iteration_begin, before the forward pass, so
//     the other ranks see it as a late all-reduce partner (all-reduce wait) in that iteration.
//   - slowdown F: the rank's compute is stretched to F times its measured length.
//       forward and optimizer step: after the phase ran, sleep (F-1) x its duration, before the
//       phase's end is recorded;
//       backward: inside it, on the autograd thread. A hook on every parameter's gradient
//       accumulator sleeps (F-1) x the compute time since the previous gradient (or the start
//       of backward), so each gradient appears when a device F times slower would produce it.
//       The hooks are registered before the tracer's and the Reducer's, so grad_ready and the
//       bucket launches come after the stretch, and all-reduces overlap the stretched backward
//       exactly as they would overlap a slow backward. (Sleeping before backward would instead
//       push every bucket late by the whole stretch and hide none of it behind compute.)
//   Communication is never stretched: a slower device does not make the network slower.
#pragma once

#include <torch/csrc/autograd/function.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "c10d_compat.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/skew.hpp"

namespace ddpsim::runtime {

class SkewInjector {
 public:
  // `writer` may be null (no trace). Build it before the DdpTracer and the Reducer (see above).
  SkewInjector(trace::SkewSpec spec, int rank, trace::TraceWriter* writer,
               const std::vector<at::Tensor>& params);
  ~SkewInjector();
  SkewInjector(const SkewInjector&) = delete;
  SkewInjector& operator=(const SkewInjector&) = delete;

  // At the start of an iteration (after iteration_begin): sleeps this rank's delay, if any.
  void begin_iteration(std::int64_t iteration);
  // Stretches a compute phase that began at `phase_start_ns` (trace::now_ns()) and just ended.
  void stretch_phase(std::int64_t phase_start_ns);
  // Just before loss.backward(): the backward stretch measures compute from here.
  void begin_backward();

  double slowdown_factor() const { return factor_; }

 private:
  // Sleeps (interruptible by SIGTERM, see stop_signal.hpp) and records a delay event.
  void sleep_and_record(std::int64_t duration_ns, const char* kind);
  void on_gradient_ready();

  const trace::SkewSpec spec_;
  const int rank_;
  const double factor_;
  trace::TraceWriter* writer_;
  std::atomic<std::int64_t> iteration_{0};
  std::atomic<std::int64_t> compute_since_ns_{0};
  std::vector<std::pair<compat::GradAccumulatorPtr, std::uintptr_t>> hooks_;
};

}  // namespace ddpsim::runtime
