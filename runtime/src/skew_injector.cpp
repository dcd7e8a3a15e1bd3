#include "skew_injector.hpp"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <cmath>
#include <stdexcept>

#include "stop_signal.hpp"

namespace ddpsim::runtime {

SkewInjector::SkewInjector(trace::SkewSpec spec, int rank, trace::TraceWriter* writer,
                           const std::vector<at::Tensor>& params)
    : spec_(std::move(spec)), rank_(rank), factor_(spec_.slowdown_factor(rank)), writer_(writer) {
  if (factor_ <= 1.0) return;  // nothing to stretch: no hooks, no cost
  hooks_.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(params[i]);
    if (!accumulator) {
      throw std::logic_error("parameter " + std::to_string(i) + " has no gradient accumulator");
    }
    const std::uintptr_t key =
        accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this](const torch::autograd::variable_list& outputs,
                   const torch::autograd::variable_list& /*inputs*/) {
              on_gradient_ready();
              return outputs;
            }));
    hooks_.emplace_back(std::move(accumulator), key);
  }
}

SkewInjector::~SkewInjector() {
  for (auto& [accumulator, key] : hooks_) accumulator->del_post_hook(key);
}

void SkewInjector::begin_iteration(std::int64_t iteration) {
  iteration_.store(iteration);
  // Two sleeps rather than one so the trace tells the fixed stall from the random one.
  sleep_and_record(spec_.fixed_delay_ns(rank_, iteration), "delay");
  sleep_and_record(spec_.random_delay_ns(rank_, iteration), "distribution");
}

void SkewInjector::stretch_phase(std::int64_t phase_start_ns) {
  if (factor_ <= 1.0) return;
  const std::int64_t measured = trace::now_ns() - phase_start_ns;
  sleep_and_record(std::llround(static_cast<double>(measured) * (factor_ - 1.0)), "slowdown");
}

void SkewInjector::begin_backward() { compute_since_ns_.store(trace::now_ns()); }

void SkewInjector::on_gradient_ready() {
  const std::int64_t computed = trace::now_ns() - compute_since_ns_.load();
  sleep_and_record(std::llround(static_cast<double>(computed) * (factor_ - 1.0)), "slowdown");
  // The next gradient's compute starts now, after the sleep.
  compute_since_ns_.store(trace::now_ns());
}

void SkewInjector::sleep_and_record(std::int64_t duration_ns, const char* kind) {
  if (duration_ns <= 0) return;
  const std::int64_t start = trace::now_ns();
  const std::int64_t slept = sleep_unless_stopped(duration_ns);
  if (writer_ == nullptr) return;
  trace::Event event;
  event.rank = rank_;
  event.iteration = iteration_.load();
  event.type = trace::EventType::Delay;
  event.t_ns = start;
  event.dur_ns = slept;
  event.kind = kind;
  writer_->record(event);
}

}  // namespace ddpsim::runtime
