#include "ddpsim/runtime/lr_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace ddpsim::runtime {

LrSchedule LrSchedule::from(const TrainOptions& o) {
  LrSchedule s;
  s.kind = o.lr_schedule;
  s.base_lr = o.lr;
  s.warmup_steps = o.warmup_steps;
  s.total_steps = o.iterations;
  s.step_size = o.lr_step_size;
  s.gamma = o.lr_gamma;
  return s;
}

double LrSchedule::rate_at(std::int64_t step) const {
  if (step < warmup_steps) {
    return base_lr * static_cast<double>(step) / static_cast<double>(warmup_steps);
  }
  const std::int64_t after = step - warmup_steps;
  if (kind == "step") return base_lr * std::pow(gamma, static_cast<double>(after / step_size));
  if (kind == "cosine") {
    const double span = static_cast<double>(std::max<std::int64_t>(1, total_steps - warmup_steps));
    const double progress = std::min(1.0, static_cast<double>(after) / span);
    return base_lr * 0.5 * (1.0 + std::cos(std::acos(-1.0) * progress));
  }
  return base_lr;
}

}  // namespace ddpsim::runtime
