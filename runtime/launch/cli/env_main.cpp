// ddp-env: print where this process sits in a distributed job, as ddp-train would detect it.
// For checking a cluster setup before a long run: `srun ddp-env`, `ddp-launch -- ddp-env`,
// `mpirun -np 4 ddp-env`. Exits 2 with a one-line error when the variables are malformed.
#include <iostream>
#include <string>

#include "ddpsim/launch/dist_env.hpp"

int main(int argc, char** argv) {
  if (argc > 1) {
    const std::string arg = argv[1];
    if (arg == "-h" || arg == "--help") {
      std::cout << "Usage: ddp-env\nPrints the rank, world size and rendezvous address detected from torchrun "
                   "(RANK, WORLD_SIZE, ...), SLURM (SLURM_PROCID, ...) or Open MPI (OMPI_COMM_WORLD_*) variables.\n";
      return 0;
    }
    std::cerr << "ddp-env: unexpected argument '" << arg << "' (it takes none)\n";
    return 2;
  }
  try {
    std::cout << ddpsim::launch::describe(ddpsim::launch::detect_dist_env()) << "\n";
  } catch (const ddpsim::launch::DistEnvError& error) {
    std::cerr << "ddp-env: " << error.what() << "\n";
    return 2;
  }
  return 0;
}
