// Checkpoints: what a job needs to continue exactly where it stopped.
//
// One file, DIR/checkpoint.pt (torch::serialize archive): every parameter and buffer by index,
// the optimizer's state (SGD momentum, Adam moments), the number of iterations done and the
// sampler epoch, plus the parameter count and shapes to refuse a checkpoint of another model.
// Rank 0 writes it next to its final name and renames it over, so a crash mid-write leaves the
// previous checkpoint intact; every rank then meets at a barrier, so none runs ahead of a
// checkpoint that might still be incomplete.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ddpsim::runtime {

// A checkpoint that cannot be read or does not fit the model: one line, naming the file.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckpointProgress {
  std::int64_t iterations_done = 0;  // training continues at this iteration
  std::uint64_t sampler_epoch = 0;
};

// DIR/checkpoint.pt
std::string checkpoint_path(const std::string& dir);

// Writes atomically (temp file + rename). Throws CheckpointError when DIR cannot be written.
void save_checkpoint(const std::string& dir, torch::nn::Module& module,
                     torch::optim::Optimizer& optimizer, const CheckpointProgress& progress);

// Loads into the existing parameters, buffers and optimizer (tensors land on `device`, whatever
// device wrote them). Throws CheckpointError when the file is missing, unreadable or of another
// model.
CheckpointProgress load_checkpoint(const std::string& dir, torch::nn::Module& module,
                                   torch::optim::Optimizer& optimizer,
                                   const torch::Device& device);

}  // namespace ddpsim::runtime
