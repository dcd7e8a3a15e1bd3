#include "ddp_tracer.hpp"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <stdexcept>

namespace ddpsim::runtime {

using trace::Event;
using trace::EventType;

DdpTracer::DdpTracer(trace::TraceWriter& writer, const std::vector<at::Tensor>& params)
    : writer_(writer), rank_(writer.meta().rank) {
  hooks_.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const int index = static_cast<int>(i);
    param_index_by_impl_.emplace(params[i].unsafeGetTensorImpl(), index);
    auto accumulator = torch::autograd::impl::grad_accumulator(params[i]);
    if (!accumulator) {
      throw std::logic_error("parameter " + std::to_string(i) + " has no gradient accumulator");
    }
    // A post-hook of AccumulateGrad runs after the gradient has been added to .grad: the
    // moment the gradient is ready. Take the time first, before anything else can delay it.
    const std::uintptr_t key =
        accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this, index](const torch::autograd::variable_list& outputs,
                          const torch::autograd::variable_list& /*inputs*/) {
              const std::int64_t t = trace::now_ns();
              Event event;
              event.rank = rank_;
              event.iteration = iteration_.load(std::memory_order_relaxed);
              event.type = EventType::GradReady;
              event.t_ns = t;
              event.param = index;
              writer_.record(event);
              return outputs;
            }));
    hooks_.emplace_back(std::move(accumulator), key);
  }
}

DdpTracer::~DdpTracer() {
  for (auto& [accumulator, key] : hooks_) accumulator->del_post_hook(key);
}

void DdpTracer::begin_iteration(std::int64_t iteration, bool sync) {
  iteration_.store(iteration, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(layout_mutex_);
    in_flight_.clear();
  }
  Event event;
  event.rank = rank_;
  event.iteration = iteration;
  event.type = EventType::IterationBegin;
  event.t_ns = trace::now_ns();
  if (!sync) event.kind = "no_sync";
  writer_.record(event);
}

void DdpTracer::mark(EventType type, const std::string& kind, const std::string& message) {
  Event event;
  event.rank = rank_;
  event.iteration = iteration_.load(std::memory_order_relaxed);
  event.type = type;
  event.t_ns = trace::now_ns();
  event.kind = kind;
  event.message = message;
  writer_.record(event);
}

void DdpTracer::record_collective(const std::string& kind, std::int64_t t_ns, std::int64_t dur_ns,
                                  std::int64_t bytes, const std::string& message) {
  Event event;
  event.rank = rank_;
  event.iteration = iteration_.load(std::memory_order_relaxed);
  event.type = EventType::Collective;
  event.t_ns = t_ns;
  event.dur_ns = dur_ns;
  event.bytes = bytes;
  event.kind = kind;
  event.message = message;
  writer_.record(event);
}

void DdpTracer::record_start_up(const std::string& kind, std::int64_t t_ns, std::int64_t dur_ns, std::int64_t bytes,
                                std::int64_t first_iteration) {
  iteration_.store(first_iteration, std::memory_order_relaxed);
  record_collective(kind, t_ns, dur_ns, bytes, "start_up");
}

void DdpTracer::flush() { writer_.flush(); }

void DdpTracer::end_iteration() {
  const std::int64_t iteration = iteration_.load(std::memory_order_relaxed);
  std::vector<std::vector<int>> layout;
  {
    std::lock_guard<std::mutex> lock(layout_mutex_);
    layout.swap(layout_seen_);
  }
  // An iteration that saw every bucket tells the layout; the writer ignores an unchanged one.
  const bool complete = !layout.empty() && std::none_of(layout.begin(), layout.end(),
                                                        [](const auto& b) { return b.empty(); });
  if (complete) writer_.set_bucket_assignment(iteration, std::move(layout));
  writer_.record(EventType::IterationEnd, iteration, trace::now_ns());
  writer_.flush();
}

void DdpTracer::record_failure(FailureKind kind, const std::string& message,
                               std::int64_t waited_ns) {
  Event event;
  event.rank = rank_;
  event.iteration = iteration_.load(std::memory_order_relaxed);
  event.type = EventType::Failure;
  event.t_ns = trace::now_ns();
  event.dur_ns = waited_ns;
  // Only a bucket of the layout already on record: a bucket of a layout first used in this
  // iteration would be out of range for the reader.
  const int bucket = pending_bucket();
  const trace::BucketAssignment* layout = writer_.meta().assignment_for(event.iteration);
  if (bucket >= 0 && layout != nullptr && bucket < static_cast<int>(layout->buckets.size())) {
    event.bucket = bucket;
  }
  event.kind = to_string(kind);
  event.message = message;
  writer_.record(event);
  writer_.flush();
}

void DdpTracer::on_launch(const c10d::GradBucket& bucket, std::int64_t bytes) {
  const std::int64_t t = trace::now_ns();
  const std::size_t index = bucket.getIndex();
  record_bucket_event(EventType::BucketReady, t, index, bytes);
  record_bucket_event(EventType::AllreduceBegin, t, index, bytes);

  std::vector<int> members;
  for (const at::Tensor& param : bucket.getParameters()) {
    const auto found = param_index_by_impl_.find(param.unsafeGetTensorImpl());
    members.push_back(found == param_index_by_impl_.end() ? -1 : found->second);
  }
  std::lock_guard<std::mutex> lock(layout_mutex_);
  in_flight_.push_back(static_cast<int>(index));
  if (layout_seen_.size() <= index) layout_seen_.resize(index + 1);
  layout_seen_[index] = std::move(members);
}

void DdpTracer::on_complete(std::size_t bucket_index, std::int64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(layout_mutex_);
    const auto found = std::find(in_flight_.begin(), in_flight_.end(),
                                 static_cast<int>(bucket_index));
    if (found != in_flight_.end()) in_flight_.erase(found);
  }
  record_bucket_event(EventType::AllreduceEnd, trace::now_ns(), bucket_index, bytes);
}

int DdpTracer::pending_bucket() {
  std::lock_guard<std::mutex> lock(layout_mutex_);
  return in_flight_.empty() ? -1 : *std::min_element(in_flight_.begin(), in_flight_.end());
}

void DdpTracer::record_bucket_event(EventType type, std::int64_t t_ns, std::size_t bucket,
                                    std::int64_t bytes) {
  Event event;
  event.rank = rank_;
  event.iteration = iteration_.load(std::memory_order_relaxed);
  event.type = type;
  event.t_ns = t_ns;
  event.bucket = static_cast<int>(bucket);
  event.bytes = bytes;
  writer_.record(event);
}

}  // namespace ddpsim::runtime
