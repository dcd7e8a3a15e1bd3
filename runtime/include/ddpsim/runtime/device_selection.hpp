// Which CUDA device a rank drives.
//
// torchrun's convention, which ddp-launch and SLURM's srun follow: one process per GPU, and the
// process's LOCAL_RANK (its index on its node) is its device index. Torch-free so the rule and its
// errors are tested on machines without a GPU.
#pragma once

namespace ddpsim::runtime {

// The device index for `local_rank` on a node where `device_count` CUDA devices are visible.
// Throws UsageError (one line) when there is no device, or fewer devices than local ranks: two
// NCCL ranks on one GPU fail later, inside NCCL, with "Duplicate GPU detected".
int cuda_device_for_rank(int local_rank, int device_count);

}  // namespace ddpsim::runtime
