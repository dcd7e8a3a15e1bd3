#include "ddpsim/launch/dist_env.hpp"

#include <climits>
#include <cstdlib>

#include "ddpsim/launch/slurm.hpp"
#include "parse_int.hpp"

namespace ddpsim::launch {

namespace {

// Reads integer variables with messages that name the variable, its value and the rule broken.
class EnvReader {
 public:
  explicit EnvReader(const EnvLookup& lookup) : lookup_(lookup) {}

  bool has(const std::string& name) const { return lookup_(name).has_value(); }
  std::optional<std::string> text(const std::string& name) const { return lookup_(name); }

  std::optional<int> optional_int(const std::string& name, int minimum) const {
    const auto value = lookup_(name);
    if (!value) return std::nullopt;
    const auto parsed = detail::parse_int(*value);
    if (!parsed) throw DistEnvError(name + "=" + *value + ": expected an integer");
    if (*parsed < minimum) {
      throw DistEnvError(name + "=" + *value + ": expected an integer >= " + std::to_string(minimum));
    }
    return parsed;
  }

  // `needed_for` says why the variable must be there, e.g. "with RANK (torchrun)".
  int required_int(const std::string& name, int minimum, const std::string& needed_for) const {
    const auto value = optional_int(name, minimum);
    if (!value) throw DistEnvError(name + " is not set (needed " + needed_for + ")");
    return *value;
  }

 private:
  const EnvLookup& lookup_;
};

// The variable names a source uses, so consistency errors quote what the user actually set.
struct SourceNames {
  const char* rank;
  const char* world_size;
  const char* local_rank;
  const char* local_world_size;
};

DistEnv from_torchrun(const EnvReader& env) {
  DistEnv result;
  result.source = EnvSource::Torchrun;
  const std::string why = "with RANK/WORLD_SIZE (torchrun-style launch)";
  result.rank = env.required_int("RANK", 0, why);
  result.world_size = env.required_int("WORLD_SIZE", 1, why);
  // torchrun always sets the local variables; older launchers (torch.distributed.launch
  // --use_env) set only LOCAL_RANK. Without them, assume one node holds every rank.
  result.local_world_size = env.optional_int("LOCAL_WORLD_SIZE", 1).value_or(result.world_size);
  result.local_rank = env.optional_int("LOCAL_RANK", 0).value_or(result.rank % result.local_world_size);
  result.node_rank = env.optional_int("GROUP_RANK", 0).value_or(result.rank / result.local_world_size);
  return result;
}

int slurm_local_world_size(const EnvReader& env, int node_id) {
  // The step's own layout is the most precise; the job's allocation may differ from the step.
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    const auto value = env.text(name);
    if (!value) continue;
    std::vector<int> per_node;
    try {
      per_node = expand_tasks_per_node(*value);
    } catch (const std::invalid_argument&) {
      throw DistEnvError(std::string(name) + "=" + *value + ": expected task counts like 4 or 2(x3),1");
    }
    if (per_node.size() == 1) return per_node.front();  // uniform, or a single node
    if (static_cast<std::size_t>(node_id) >= per_node.size()) {
      throw DistEnvError(std::string(name) + "=" + *value + ": lists " + std::to_string(per_node.size()) +
                         " nodes but SLURM_NODEID=" + std::to_string(node_id));
    }
    return per_node[static_cast<std::size_t>(node_id)];
  }
  throw DistEnvError(
      "SLURM_STEP_TASKS_PER_NODE is not set (needed with SLURM_PROCID to know the tasks per node; "
      "start the workers with srun)");
}

DistEnv from_slurm(const EnvReader& env) {
  DistEnv result;
  result.source = EnvSource::Slurm;
  const std::string why = "with SLURM_PROCID (SLURM launch)";
  result.rank = env.required_int("SLURM_PROCID", 0, why);
  const bool has_ntasks = env.has("SLURM_NTASKS");
  result.world_size = env.required_int(has_ntasks || !env.has("SLURM_NPROCS") ? "SLURM_NTASKS" : "SLURM_NPROCS", 1, why);
  result.local_rank = env.required_int("SLURM_LOCALID", 0, why);
  result.node_rank = env.optional_int("SLURM_NODEID", 0).value_or(0);
  result.local_world_size = slurm_local_world_size(env, result.node_rank);
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_NODELIST", "SLURM_JOB_NODELIST"}) {
    const auto nodelist = env.text(name);
    if (!nodelist) continue;
    try {
      result.master_addr = first_host_of_nodelist(*nodelist);
    } catch (const std::invalid_argument&) {
      throw DistEnvError(std::string(name) + "=" + *nodelist + ": expected a host list like node[01-04],gpu7");
    }
    result.master_addr_defaulted = false;
    break;
  }
  return result;
}

DistEnv from_open_mpi(const EnvReader& env) {
  DistEnv result;
  result.source = EnvSource::OpenMpi;
  const std::string why = "with OMPI_COMM_WORLD_RANK/SIZE (Open MPI launch)";
  result.rank = env.required_int("OMPI_COMM_WORLD_RANK", 0, why);
  result.world_size = env.required_int("OMPI_COMM_WORLD_SIZE", 1, why);
  result.local_rank = env.required_int("OMPI_COMM_WORLD_LOCAL_RANK", 0, why);
  result.local_world_size = env.required_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1, why);
  // Open MPI does not say which node this is; with the same number of ranks on every node
  // (what mpirun --map-by does by default) this is it.
  result.node_rank = result.rank / result.local_world_size;
  return result;
}

SourceNames names_of(EnvSource source) {
  switch (source) {
    case EnvSource::Torchrun:
      return {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
    case EnvSource::Slurm:
      return {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "tasks per node"};
    case EnvSource::OpenMpi:
      return {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
              "OMPI_COMM_WORLD_LOCAL_SIZE"};
    case EnvSource::SingleProcess:
      break;
  }
  return {"rank", "world size", "local rank", "local world size"};
}

void check_consistent(const DistEnv& env) {
  const SourceNames names = names_of(env.source);
  const auto pair = [](const char* name, int value) { return std::string(name) + "=" + std::to_string(value); };
  if (env.rank >= env.world_size) {
    throw DistEnvError(pair(names.rank, env.rank) + " must be less than " + pair(names.world_size, env.world_size));
  }
  if (env.local_rank >= env.local_world_size) {
    throw DistEnvError(pair(names.local_rank, env.local_rank) + " must be less than " +
                       pair(names.local_world_size, env.local_world_size));
  }
  if (env.local_world_size > env.world_size) {
    throw DistEnvError(pair(names.local_world_size, env.local_world_size) + " must not exceed " +
                       pair(names.world_size, env.world_size));
  }
}

}  // namespace

std::string to_string(EnvSource source) {
  switch (source) {
    case EnvSource::Torchrun:
      return "torchrun";
    case EnvSource::Slurm:
      return "slurm";
    case EnvSource::OpenMpi:
      return "openmpi";
    case EnvSource::SingleProcess:
      break;
  }
  return "single-process";
}

EnvLookup process_env_lookup() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
  };
}

DistEnv detect_dist_env(const EnvLookup& raw_lookup) {
  // Empty values count as unset: `export RANK=` is how shells "unset" in many job scripts.
  const EnvLookup lookup = [&raw_lookup](const std::string& name) -> std::optional<std::string> {
    auto value = raw_lookup(name);
    if (value && value->empty()) return std::nullopt;
    return value;
  };
  const EnvReader env(lookup);
  DistEnv result;
  if (env.has("RANK") || env.has("WORLD_SIZE")) {
    result = from_torchrun(env);
  } else if (env.has("SLURM_PROCID")) {
    result = from_slurm(env);
  } else if (env.has("OMPI_COMM_WORLD_RANK") || env.has("OMPI_COMM_WORLD_SIZE")) {
    result = from_open_mpi(env);
  }
  if (const auto addr = env.text("MASTER_ADDR")) {
    result.master_addr = *addr;
    result.master_addr_defaulted = false;
  }
  if (const auto port = env.optional_int("MASTER_PORT", INT_MIN)) {
    if (*port < 1 || *port > 65535) throw DistEnvError("MASTER_PORT=" + std::to_string(*port) + ": expected a port in 1..65535");
    result.master_port = *port;
  }
  check_consistent(result);
  return result;
}

DistEnv detect_dist_env() { return detect_dist_env(process_env_lookup()); }

std::string describe(const DistEnv& env) {
  return "rank " + std::to_string(env.rank) + "/" + std::to_string(env.world_size) + " (local " +
         std::to_string(env.local_rank) + "/" + std::to_string(env.local_world_size) + ", node " +
         std::to_string(env.node_rank) + ") master " + env.master_addr + ":" + std::to_string(env.master_port) +
         " from " + to_string(env.source);
}

}  // namespace ddpsim::launch
