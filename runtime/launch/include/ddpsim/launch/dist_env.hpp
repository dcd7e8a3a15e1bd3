#pragma once
// Where a worker learns its place in the job: rank, world size, and the rendezvous address.
//
// Launchers announce this through environment variables, each in its own dialect. We read, in
// order of precedence (the first whose variables are present wins):
//   1. torchrun / ddp-launch: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE
//   2. SLURM (srun starting the workers directly): SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
//      tasks per node from SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE /
//      SLURM_NTASKS_PER_NODE, master host = first host of SLURM_STEP_NODELIST / SLURM_NODELIST
//   3. Open MPI (mpirun): OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
//   4. none of them: a single process, rank 0 of 1.
// MASTER_ADDR and MASTER_PORT, when set, override the rendezvous address for every source.
// torchrun's variables come first because a torchrun/ddp-launch started inside a SLURM or MPI
// allocation inherits those variables too, and only its own describe the workers it spawned.
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace ddpsim::launch {

enum class EnvSource { Torchrun, Slurm, OpenMpi, SingleProcess };

// "torchrun", "slurm", "openmpi", "single-process".
std::string to_string(EnvSource source);

// The default rendezvous port when nothing names one (torchrun's default).
inline constexpr int kDefaultMasterPort = 29500;

struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = kDefaultMasterPort;
  // True when no variable named the master host and master_addr is the 127.0.0.1 default:
  // right for one node, a hang for several. Callers using env:// on several nodes should refuse.
  bool master_addr_defaulted = true;
  EnvSource source = EnvSource::SingleProcess;
  // Which node this process runs on (torchrun's GROUP_RANK, SLURM_NODEID); 0 when unknown.
  int node_rank = 0;
};

// A malformed or inconsistent variable. what() is one line naming the variable and what was
// expected, e.g. "RANK=abc: expected an integer" or "RANK=2 must be less than WORLD_SIZE=2".
class DistEnvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Looks one variable up; nullopt when unset. Empty values count as unset, as in most launchers.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Reads the process environment (getenv).
EnvLookup process_env_lookup();

// Detects the distributed environment; throws DistEnvError on malformed values.
DistEnv detect_dist_env(const EnvLookup& lookup);
DistEnv detect_dist_env();  // from the process environment

// One line for logs: "rank 1/4 (local 1/2, node 0) master 10.0.0.1:29500 from slurm".
std::string describe(const DistEnv& env);

}  // namespace ddpsim::launch
