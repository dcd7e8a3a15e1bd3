// The `ddp-train` worker: one rank of a data-parallel training job.
#pragma once

#include "ddpsim/runtime/train_options.hpp"

namespace ddpsim::runtime {

// Exit statuses of ddp-train.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the job failed at run time (peer died, timeout, ...)
inline constexpr int kExitUsage = 2;    // bad flags, environment or input files
inline constexpr int kExitInjected = 3; // --fail-rank: this rank was told to die

// Joins the job described by the environment (RANK, WORLD_SIZE, MASTER_ADDR, ... or SLURM /
// Open MPI variables) and `options.init_method`, trains, and returns an exit status. Errors are
// reported on stderr as one line.
int run_training(const TrainOptions& options);

}  // namespace ddpsim::runtime
