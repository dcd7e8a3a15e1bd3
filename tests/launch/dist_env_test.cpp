// Distributed environment detection from torchrun, SLURM and Open MPI variables.
#include "ddpsim/launch/dist_env.hpp"

#include <gtest/gtest.h>

#include <map>

namespace {

using ddpsim::launch::detect_dist_env;
using ddpsim::launch::DistEnv;
using ddpsim::launch::DistEnvError;
using ddpsim::launch::EnvSource;

using Vars = std::map<std::string, std::string>;

DistEnv detect(const Vars& vars) {
  return detect_dist_env([&vars](const std::string& name) -> std::optional<std::string> {
    const auto found = vars.find(name);
    if (found == vars.end()) return std::nullopt;
    return found->second;
  });
}

// The error message detect() throws for `vars`, or "" when it does not throw.
std::string error_of(const Vars& vars) {
  try {
    detect(vars);
  } catch (const DistEnvError& error) {
    return error.what();
  }
  return "";
}

TEST(DistEnv, NoVariablesMeansOneProcess) {
  const DistEnv env = detect({});
  EXPECT_EQ(env.source, EnvSource::SingleProcess);
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.local_rank, 0);
  EXPECT_EQ(env.local_world_size, 1);
  EXPECT_EQ(env.master_addr, "127.0.0.1");
  EXPECT_EQ(env.master_port, ddpsim::launch::kDefaultMasterPort);
  EXPECT_TRUE(env.master_addr_defaulted);
}

TEST(DistEnv, ReadsTorchrunVariables) {
  const DistEnv env = detect({{"RANK", "5"},
                              {"WORLD_SIZE", "8"},
                              {"LOCAL_RANK", "1"},
                              {"LOCAL_WORLD_SIZE", "4"},
                              {"GROUP_RANK", "1"},
                              {"MASTER_ADDR", "node7"},
                              {"MASTER_PORT", "1234"}});
  EXPECT_EQ(env.source, EnvSource::Torchrun);
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_world_size, 4);
  EXPECT_EQ(env.node_rank, 1);
  EXPECT_EQ(env.master_addr, "node7");
  EXPECT_EQ(env.master_port, 1234);
  EXPECT_FALSE(env.master_addr_defaulted);
  EXPECT_EQ(ddpsim::launch::describe(env), "rank 5/8 (local 1/4, node 1) master node7:1234 from torchrun");
}

TEST(DistEnv, TorchrunWithoutLocalVariablesAssumesOneNode) {
  const DistEnv env = detect({{"RANK", "2"}, {"WORLD_SIZE", "3"}});
  EXPECT_EQ(env.local_rank, 2);
  EXPECT_EQ(env.local_world_size, 3);
  EXPECT_EQ(env.node_rank, 0);
}

TEST(DistEnv, TorchrunWinsOverSlurmAndOpenMpi) {
  // ddp-launch inside a SLURM allocation: its own variables describe the workers.
  const DistEnv env = detect({{"RANK", "1"},
                              {"WORLD_SIZE", "2"},
                              {"SLURM_PROCID", "0"},
                              {"SLURM_NTASKS", "1"},
                              {"SLURM_LOCALID", "0"},
                              {"OMPI_COMM_WORLD_RANK", "0"},
                              {"OMPI_COMM_WORLD_SIZE", "1"}});
  EXPECT_EQ(env.source, EnvSource::Torchrun);
  EXPECT_EQ(env.rank, 1);
}

TEST(DistEnv, ReadsSlurmVariablesAndTheFirstNodeAsMaster) {
  const DistEnv env = detect({{"SLURM_PROCID", "5"},
                              {"SLURM_NTASKS", "7"},
                              {"SLURM_LOCALID", "1"},
                              {"SLURM_NODEID", "2"},
                              {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"},
                              {"SLURM_STEP_NODELIST", "gpu[017-020],cpu3"},
                              {"SLURM_NODELIST", "other[1-9]"}});
  EXPECT_EQ(env.source, EnvSource::Slurm);
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 7);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_world_size, 2);  // node 2 of "2,2,2,1"
  EXPECT_EQ(env.node_rank, 2);
  EXPECT_EQ(env.master_addr, "gpu017");
  EXPECT_FALSE(env.master_addr_defaulted);
}

TEST(DistEnv, SlurmFallsBackToNtasksPerNodeAndNodelist) {
  const DistEnv env = detect({{"SLURM_PROCID", "3"},
                              {"SLURM_NTASKS", "4"},
                              {"SLURM_LOCALID", "1"},
                              {"SLURM_NTASKS_PER_NODE", "2"},
                              {"SLURM_NODELIST", "n1,n2"},
                              {"MASTER_PORT", "40000"}});
  EXPECT_EQ(env.local_world_size, 2);
  EXPECT_EQ(env.master_addr, "n1");
  EXPECT_EQ(env.master_port, 40000);
}

TEST(DistEnv, MasterAddrOverridesTheSlurmNodelist) {
  const DistEnv env = detect({{"SLURM_PROCID", "0"},
                              {"SLURM_NTASKS", "2"},
                              {"SLURM_LOCALID", "0"},
                              {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
                              {"SLURM_STEP_NODELIST", "n[1-2]"},
                              {"MASTER_ADDR", "10.0.0.9"}});
  EXPECT_EQ(env.master_addr, "10.0.0.9");
  EXPECT_EQ(env.local_world_size, 1);
}

TEST(DistEnv, ReadsOpenMpiVariables) {
  const DistEnv env = detect({{"OMPI_COMM_WORLD_RANK", "6"},
                              {"OMPI_COMM_WORLD_SIZE", "8"},
                              {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                              {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_EQ(env.source, EnvSource::OpenMpi);
  EXPECT_EQ(env.rank, 6);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 2);
  EXPECT_EQ(env.local_world_size, 4);
  EXPECT_EQ(env.node_rank, 1);
  EXPECT_TRUE(env.master_addr_defaulted);  // mpirun names no master: the caller must decide
}

TEST(DistEnv, EmptyValuesCountAsUnset) {
  EXPECT_EQ(detect({{"RANK", ""}, {"WORLD_SIZE", ""}}).source, EnvSource::SingleProcess);
}

TEST(DistEnv, ReportsMalformedValuesInOneLine) {
  EXPECT_EQ(error_of({{"RANK", "abc"}, {"WORLD_SIZE", "2"}}), "RANK=abc: expected an integer");
  EXPECT_EQ(error_of({{"RANK", "1x"}, {"WORLD_SIZE", "2"}}), "RANK=1x: expected an integer");
  EXPECT_EQ(error_of({{"RANK", " 1"}, {"WORLD_SIZE", "2"}}), "RANK= 1: expected an integer");
  EXPECT_EQ(error_of({{"RANK", "99999999999"}, {"WORLD_SIZE", "2"}}), "RANK=99999999999: expected an integer");
  EXPECT_EQ(error_of({{"RANK", "-1"}, {"WORLD_SIZE", "2"}}), "RANK=-1: expected an integer >= 0");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}}), "WORLD_SIZE=0: expected an integer >= 1");
  EXPECT_EQ(error_of({{"RANK", "0"}}), "WORLD_SIZE is not set (needed with RANK/WORLD_SIZE (torchrun-style launch))");
  EXPECT_EQ(error_of({{"MASTER_PORT", "http"}}), "MASTER_PORT=http: expected an integer");
  EXPECT_EQ(error_of({{"MASTER_PORT", "0"}}), "MASTER_PORT=0: expected a port in 1..65535");
  EXPECT_EQ(error_of({{"MASTER_PORT", "65536"}}), "MASTER_PORT=65536: expected a port in 1..65535");
  EXPECT_EQ(error_of({{"SLURM_PROCID", "zero"}}), "SLURM_PROCID=zero: expected an integer");
  EXPECT_EQ(error_of({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2.5"}}),
            "OMPI_COMM_WORLD_SIZE=2.5: expected an integer");
}

TEST(DistEnv, ReportsInconsistentRanks) {
  EXPECT_EQ(error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), "RANK=2 must be less than WORLD_SIZE=2");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}}),
            "LOCAL_RANK=2 must be less than LOCAL_WORLD_SIZE=2");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "4"}}),
            "LOCAL_WORLD_SIZE=4 must not exceed WORLD_SIZE=2");
  EXPECT_EQ(error_of({{"OMPI_COMM_WORLD_RANK", "3"},
                      {"OMPI_COMM_WORLD_SIZE", "3"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                      {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}}),
            "OMPI_COMM_WORLD_RANK=3 must be less than OMPI_COMM_WORLD_SIZE=3");
}

TEST(DistEnv, ReportsSlurmProblems) {
  const Vars base{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"}};
  Vars no_layout = base;
  EXPECT_NE(error_of(no_layout).find("SLURM_STEP_TASKS_PER_NODE is not set"), std::string::npos);
  Vars bad_layout = base;
  bad_layout["SLURM_STEP_TASKS_PER_NODE"] = "2(y3)";
  EXPECT_EQ(error_of(bad_layout), "SLURM_STEP_TASKS_PER_NODE=2(y3): expected task counts like 4 or 2(x3),1");
  Vars short_layout = base;
  short_layout["SLURM_STEP_TASKS_PER_NODE"] = "1,1";
  short_layout["SLURM_NODEID"] = "2";
  EXPECT_EQ(error_of(short_layout), "SLURM_STEP_TASKS_PER_NODE=1,1: lists 2 nodes but SLURM_NODEID=2");
  Vars bad_nodes = base;
  bad_nodes["SLURM_STEP_TASKS_PER_NODE"] = "2";
  bad_nodes["SLURM_STEP_NODELIST"] = "n[1-2";
  EXPECT_EQ(error_of(bad_nodes), "SLURM_STEP_NODELIST=n[1-2: expected a host list like node[01-04],gpu7");
  Vars missing_local = base;
  missing_local.erase("SLURM_LOCALID");
  EXPECT_EQ(error_of(missing_local), "SLURM_LOCALID is not set (needed with SLURM_PROCID (SLURM launch))");
}

TEST(DistEnv, SourceNames) {
  EXPECT_EQ(ddpsim::launch::to_string(EnvSource::Torchrun), "torchrun");
  EXPECT_EQ(ddpsim::launch::to_string(EnvSource::Slurm), "slurm");
  EXPECT_EQ(ddpsim::launch::to_string(EnvSource::OpenMpi), "openmpi");
  EXPECT_EQ(ddpsim::launch::to_string(EnvSource::SingleProcess), "single-process");
}

TEST(DistEnv, ReadsTheProcessEnvironment) {
  setenv("RANK", "1", 1);
  setenv("WORLD_SIZE", "3", 1);
  const DistEnv env = detect_dist_env();
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  EXPECT_EQ(env.source, EnvSource::Torchrun);
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.world_size, 3);
}

}  // namespace
