// The learning rate of every batch (--lr-schedule, --warmup-steps), stepped once per batch as
// the lab's lr_scheduler.step() is: batch k trains with rate_at(k).
//
// Torch-free, so the tests check the values without a process. The shapes are those of
// Hugging Face's get_*_schedule_with_warmup (what a BERT lab's get_scheduler builds) and of
// torch.optim.lr_scheduler.StepLR after the warm-up:
//   warm-up   k < W:  lr * k / W                       (0 at batch 0, as HF's)
//   constant  k >= W: lr
//   step      k >= W: lr * gamma^floor((k - W) / step_size)
//   cosine    k >= W: lr * 0.5 * (1 + cos(pi * (k - W) / (total - W)))   (0 at k = total)
#pragma once

#include <cstdint>
#include <string>

#include "ddpsim/runtime/train_options.hpp"

namespace ddpsim::runtime {

struct LrSchedule {
  std::string kind = "constant";  // constant | step | cosine
  double base_lr = 0.01;
  std::int64_t warmup_steps = 0;
  std::int64_t total_steps = 1;  // cosine reaches 0 here
  std::int64_t step_size = 1000;
  double gamma = 0.1;

  static LrSchedule from(const TrainOptions& options);
  // The rate of batch `step` (0-based).
  double rate_at(std::int64_t step) const;
};

}  // namespace ddpsim::runtime
