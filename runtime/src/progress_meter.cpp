#include "ddpsim/runtime/progress_meter.hpp"

namespace ddpsim::runtime {
namespace {

double seconds_between(ProgressMeter::Clock::time_point from, ProgressMeter::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

ProgressMeter::ProgressMeter(std::int64_t total_iterations, std::int64_t samples_per_iteration,
                             std::FILE* out)
    : total_(total_iterations),
      samples_per_iteration_(samples_per_iteration),
      out_(out),
      start_(Clock::now()),
      last_(start_) {}

bool ProgressMeter::due(Clock::time_point now) const {
  return out_ != nullptr && now - last_ >= std::chrono::seconds(1);
}

void ProgressMeter::report(std::int64_t iterations_done, double loss, Clock::time_point now) {
  if (out_ == nullptr) return;
  const double seconds = seconds_between(last_, now);
  const double its = seconds > 0 ? static_cast<double>(iterations_done - last_done_) / seconds : 0;
  std::fprintf(out_, "iter %lld/%lld  %.2f it/s  %.0f samples/s  loss %.4f\n",
               static_cast<long long>(iterations_done), static_cast<long long>(total_), its,
               its * static_cast<double>(samples_per_iteration_), loss);
  std::fflush(out_);
  last_ = now;
  last_done_ = iterations_done;
}

void ProgressMeter::finish(std::int64_t iterations_done, double loss, double median_step_s,
                           Clock::time_point now) {
  if (out_ == nullptr) return;
  const double seconds = seconds_between(start_, now);
  const double its = seconds > 0 ? static_cast<double>(iterations_done) / seconds : 0;
  std::fprintf(out_,
               "done: %lld iterations in %.2f s  %.2f it/s  %.0f samples/s  loss %.4f  "
               "median step %.3f ms\n",
               static_cast<long long>(iterations_done), seconds, its,
               its * static_cast<double>(samples_per_iteration_), loss, median_step_s * 1e3);
  std::fflush(out_);
}

}  // namespace ddpsim::runtime
