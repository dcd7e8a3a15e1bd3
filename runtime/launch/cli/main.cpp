// ddp-launch: start N worker processes on this node with torchrun's environment variables.
//
//   ddp-launch [--nproc-per-node N] [--nnodes N --node-rank R] [--master-addr A]
//              [--master-port P] [--grace-period S] -- PROGRAM ARGS...
//
// Worker L on node R gets RANK = R*N + L, LOCAL_RANK = L, WORLD_SIZE = nnodes*N,
// LOCAL_WORLD_SIZE = N, GROUP_RANK = R, GROUP_WORLD_SIZE = nnodes, MASTER_ADDR, MASTER_PORT.
// On several nodes, run it once per node with the same --master-addr/--master-port.
#include <CLI/CLI.hpp>

#include <csignal>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "ddpsim/launch/free_port.hpp"
#include "ddpsim/launch/supervisor.hpp"

namespace {

constexpr int kExitUsage = 2;

struct LaunchArgs {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = -1;  // -1: not given
  double grace_period_s = 5.0;
  std::vector<std::string> command;
};

[[noreturn]] void usage_error(const std::string& text) {
  std::cerr << "ddp-launch: " << text << " (see --help)\n";
  std::exit(kExitUsage);
}

std::vector<ddpsim::launch::WorkerSpec> plan_workers(const LaunchArgs& args, int master_port) {
  std::vector<ddpsim::launch::WorkerSpec> workers;
  const int world_size = args.nnodes * args.nproc_per_node;
  for (int local_rank = 0; local_rank < args.nproc_per_node; ++local_rank) {
    const int rank = args.node_rank * args.nproc_per_node + local_rank;
    ddpsim::launch::WorkerSpec worker;
    worker.rank = rank;
    worker.argv = args.command;
    worker.env = {{"RANK", std::to_string(rank)},
                  {"LOCAL_RANK", std::to_string(local_rank)},
                  {"WORLD_SIZE", std::to_string(world_size)},
                  {"LOCAL_WORLD_SIZE", std::to_string(args.nproc_per_node)},
                  {"GROUP_RANK", std::to_string(args.node_rank)},
                  {"GROUP_WORLD_SIZE", std::to_string(args.nnodes)},
                  {"MASTER_ADDR", args.master_addr},
                  {"MASTER_PORT", std::to_string(master_port)}};
    workers.push_back(std::move(worker));
  }
  return workers;
}

}  // namespace

int main(int argc, char** argv) {
  LaunchArgs args;
  CLI::App app{
      "Start --nproc-per-node copies of PROGRAM on this node with torchrun's variables (RANK, LOCAL_RANK, "
      "WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT). Each output line is prefixed with "
      "[rank R]. If a worker fails, the others are stopped and ddp-launch exits 1; it exits 0 only when every "
      "worker exits 0.",
      "ddp-launch"};
  app.set_help_all_flag("--help-all", "Print this help and exit (there are no hidden options)");
  const std::string workers = "Workers";
  app.add_option("--nproc-per-node,--nproc_per_node", args.nproc_per_node, "Workers on this node")
      ->check(CLI::Range(1, 4096))
      ->default_val(1)
      ->group(workers);
  app.add_option("--grace-period", args.grace_period_s,
                 "Seconds between SIGTERM and SIGKILL when stopping workers")
      ->check(CLI::Range(0.0, 3600.0))
      ->default_val(5.0)
      ->group(workers);
  const std::string nodes = "Nodes and rendezvous";
  app.add_option("--nnodes", args.nnodes, "Nodes in the job (run ddp-launch once per node)")
      ->check(CLI::Range(1, 1 << 20))
      ->default_val(1)
      ->group(nodes);
  app.add_option("--node-rank,--node_rank", args.node_rank, "This node's index, 0..nnodes-1")
      ->check(CLI::Range(0, (1 << 20) - 1))
      ->default_val(0)
      ->group(nodes);
  app.add_option("--master-addr,--master_addr", args.master_addr, "Rendezvous host (rank 0's node)")
      ->default_val("127.0.0.1")
      ->group(nodes);
  app.add_option("--master-port,--master_port", args.master_port,
                 "Rendezvous port; 0 picks a free port (the default on one node; 29500 with --nnodes > 1)")
      ->check(CLI::Range(0, 65535))
      ->group(nodes);
  // Everything from the first non-option argument (or after "--") is the worker's command
  // line, so `ddp-launch -- prog --flag` and, as with torchrun, `ddp-launch prog --flag` work.
  app.prefix_command();
  app.footer("PROGRAM [ARGS...] follow the options, after an optional --.\n");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& error) {
    usage_error(error.what());
  }

  args.command = app.remaining();
  if (!args.command.empty() && args.command.front() == "--") {
    args.command.erase(args.command.begin());
  } else if (!args.command.empty() && args.command.front().size() > 1 && args.command.front()[0] == '-') {
    usage_error("unknown option " + args.command.front());
  }
  if (args.command.empty()) usage_error("no program given: expected -- PROGRAM [ARGS...]");
  // CLI11's Range lets NaN through (no comparison with NaN fails).
  if (!(args.grace_period_s >= 0.0)) usage_error("--grace-period: expected seconds from 0 to 3600, got nan");
  const long long world_size = static_cast<long long>(args.nnodes) * args.nproc_per_node;
  if (world_size > std::numeric_limits<int>::max()) {
    usage_error("--nnodes " + std::to_string(args.nnodes) + " x --nproc-per-node " +
                std::to_string(args.nproc_per_node) + ": expected a world size below 2^31, got " +
                std::to_string(world_size));
  }
  if (args.node_rank >= args.nnodes) {
    usage_error("--node-rank " + std::to_string(args.node_rank) + ": expected 0.." + std::to_string(args.nnodes - 1) +
                " for --nnodes " + std::to_string(args.nnodes));
  }
  if (args.master_port == 0 && args.nnodes > 1) {
    usage_error("--master-port 0 (pick a free port) needs --nnodes 1: the other nodes cannot learn the port");
  }
  int master_port = args.master_port;
  if (master_port <= 0) {
    try {
      master_port = args.nnodes > 1 ? 29500 : ddpsim::launch::pick_free_port();
    } catch (const std::exception& error) {
      std::cerr << "ddp-launch: " << error.what() << "\n";
      return 1;
    }
  }

  ddpsim::launch::SupervisorOptions options;
  options.grace_period = std::chrono::milliseconds(static_cast<long long>(args.grace_period_s * 1000.0));
  int status = 0;
  try {
    status = ddpsim::launch::run_workers(plan_workers(args, master_port), options);
  } catch (const std::exception& error) {
    std::cerr << "ddp-launch: " << error.what() << "\n";
    return 1;
  }
  // Stopped by a signal that we forwarded: end the same way, so a shell loop around
  // ddp-launch sees a Ctrl-C as a Ctrl-C (bash stops a loop only if the child died of SIGINT).
  if (status > 128) {
    const int signal_number = status - 128;
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
  }
  return status;
}
