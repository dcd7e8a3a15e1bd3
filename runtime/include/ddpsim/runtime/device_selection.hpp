// Which CUDA device a rank drives.
//
// torchrun's convention, which ddp-launch and SLURM's srun follow: one process per GPU, and the
// process's LOCAL_RANK (its index on its node) is its device index. Torch-free so the rule and its
// errors are tested on machines without a GPU.
#pragma once

namespace ddpsim::runtime {

// Whether ranks of one node may drive the same GPU. NCCL may not: two NCCL ranks on one device
// fail inside NCCL with "Duplicate GPU detected". Gloo may: its CUDA collectives stage the
// tensors through host memory, so `--backend gloo --device cuda` runs 2 ranks on a 1-GPU machine
// (the GPUs are then handed out round-robin, as a Python script's
// torch.cuda.set_device(local_rank % torch.cuda.device_count()) would).
enum class GpuSharing { OneRankPerGpu, Shared };

// The device index for `local_rank` on a node where `device_count` CUDA devices are visible.
// Throws UsageError (one line, naming the flag) when there is no device, or (OneRankPerGpu) fewer
// devices than local ranks.
int cuda_device_for_rank(int local_rank, int device_count,
                         GpuSharing sharing = GpuSharing::OneRankPerGpu);

}  // namespace ddpsim::runtime
