#include "ddpsim/runtime/device_selection.hpp"

#include <string>

#include "ddpsim/runtime/train_options.hpp"

namespace ddpsim::runtime {

int cuda_device_for_rank(int local_rank, int device_count, GpuSharing sharing) {
  const bool shared = sharing == GpuSharing::Shared;
  if (device_count <= 0) {
    throw UsageError(shared ? "--device cuda: no CUDA device is visible to this process; use "
                              "--device cpu"
                            : "--backend nccl: no CUDA device is visible to this process; use "
                              "--backend gloo");
  }
  if (local_rank < 0) {
    throw UsageError("LOCAL_RANK " + std::to_string(local_rank) + ": expected a non-negative index");
  }
  if (shared) return local_rank % device_count;
  if (local_rank >= device_count) {
    throw UsageError("--backend nccl: LOCAL_RANK " + std::to_string(local_rank) + " but " +
                     std::to_string(device_count) +
                     " CUDA device(s) visible; expected one process per GPU (--nproc-per-node <= " +
                     std::to_string(device_count) + ", or --backend gloo --device cuda to share)");
  }
  return local_rank;
}

}  // namespace ddpsim::runtime
