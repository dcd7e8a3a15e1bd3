// Records one rank's DDP timeline into a ddpsim trace (traces/FORMAT.md).
//
// Three sources of events, each on the thread where the moment happens:
//   - the training loop: iteration / forward / backward / optimizer bounds;
//   - autograd: a post-hook on every parameter's gradient accumulator marks grad_ready;
//   - the comm hook (compat::AllreduceObserver): bucket_ready + allreduce_begin when DDP hands a
//     bucket over, allreduce_end when the collective's future completes.
// The bucket layout is read from the buckets the comm hook sees (GradBucket's index and
// parameters), i.e. what the Reducer actually used, not what we think it computed.
#pragma once

#include <torch/csrc/autograd/function.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "c10d_compat.hpp"
#include "ddpsim/runtime/failure_kind.hpp"
#include "ddpsim/trace/io.hpp"

namespace ddpsim::runtime {

class DdpTracer final : public compat::AllreduceObserver {
 public:
  // Hooks every parameter's gradient accumulator. Build the tracer before the Reducer: autograd
  // runs post-hooks in registration order, and the Reducer's hook may launch a bucket's
  // all-reduce, so ours must run first for grad_ready to precede that bucket_ready.
  DdpTracer(trace::TraceWriter& writer, const std::vector<at::Tensor>& params);
  ~DdpTracer() override;
  DdpTracer(const DdpTracer&) = delete;
  DdpTracer& operator=(const DdpTracer&) = delete;

  // `sync` false: a gradient-accumulation step under no_sync() (iteration_begin kind no_sync).
  void begin_iteration(std::int64_t iteration, bool sync = true);
  // Records a loop-level event (forward_begin, optimizer_end, ...) now, with an optional kind
  // and message (AMP's stepped/skipped and loss scale, an evaluation's counts).
  void mark(trace::EventType type, const std::string& kind = "", const std::string& message = "");
  // Records a collective outside DDP's buckets that ran from `t_ns` for `dur_ns` (an
  // evaluation's all-reduce, a checkpoint's barrier): a `collective` event. `t_ns` must not
  // precede the last event recorded.
  void record_collective(const std::string& kind, std::int64_t t_ns, std::int64_t dur_ns, std::int64_t bytes,
                         const std::string& message);
  // Records DDP's start-up collectives (DistributedDataParallel::start_up_collectives, run
  // before the first iteration) as `collective` events with message `start_up`, in iteration
  // `first_iteration` (the run's first, later when resumed). Call it before begin_iteration.
  void record_start_up(const std::string& kind, std::int64_t t_ns, std::int64_t dur_ns, std::int64_t bytes,
                       std::int64_t first_iteration);
  // Writes what is buffered (events recorded between iterations, such as an evaluation).
  void flush();
  // Records the layout seen in this iteration if it changed, then iteration_end, and flushes.
  void end_iteration();
  // Records a failure at once (flushed): `waited_ns` is how long the failing call ran. The
  // event names the stuck bucket (pending_bucket()) when the recorded layout knows it.
  void record_failure(FailureKind kind, const std::string& message, std::int64_t waited_ns);
  // The first bucket of this iteration whose all-reduce was launched and has not completed, or
  // -1: where a failed collective was stuck.
  int pending_bucket();

  void on_launch(const c10d::GradBucket& bucket, std::int64_t bytes) override;
  void on_complete(std::size_t bucket_index, std::int64_t bytes) override;

 private:
  void record_bucket_event(trace::EventType type, std::int64_t t_ns, std::size_t bucket,
                           std::int64_t bytes);

  trace::TraceWriter& writer_;
  const int rank_;
  std::atomic<std::int64_t> iteration_{0};
  std::unordered_map<const void*, int> param_index_by_impl_;
  // (accumulator, hook key): the accumulators are kept alive so that the Reducer, built later,
  // finds the same nodes, and the keys let the destructor remove hooks that point at us.
  std::vector<std::pair<compat::GradAccumulatorPtr, std::uintptr_t>> hooks_;
  std::mutex layout_mutex_;
  std::vector<std::vector<int>> layout_seen_;  // bucket -> parameter indices, this iteration
  std::vector<int> in_flight_;                 // launched, not completed (layout_mutex_)
};

}  // namespace ddpsim::runtime
