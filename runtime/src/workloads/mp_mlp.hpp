// `--model mp-mlp`: model-parallel DDP. The mlp split in two pipeline stages on two devices of
// the same process (cuda:2L and cuda:2L+1 for local rank L when that many GPUs exist, both on the
// CPU otherwise), wrapped by DDP without device_ids, as PyTorch's "DDP with model parallelism"
// recipe does. Each stage moves its input to its own device, so the module places itself: the
// trainer must not move it (or its batches) to one device.
#pragma once

#include <memory>

#include "../workload.hpp"

namespace ddpsim::runtime {

std::unique_ptr<Workload> make_mp_mlp_workload(const TrainOptions& options, int local_rank);

}  // namespace ddpsim::runtime
