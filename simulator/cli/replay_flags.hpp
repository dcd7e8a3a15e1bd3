// The flags `replay`, `timeout-curve` and `sweep` share (the trace, the model, the network and
// the what-ifs), and their mapping onto the library's ReplayRequest and MonteCarloPlan.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "ddpsim/sim/monte_carlo_runs.hpp"
#include "ddpsim/sim/prepared_replay.hpp"

namespace ddpsim::cli {

// Flags whose value is already the library's bind straight to `request` and `plan` (one home
// for each field and its default); only the flags given as text that needs mapping live here.
struct ReplayFlags {
  sim::ReplayRequest request;
  sim::MonteCarloPlan plan;  // --runs, --bootstrap; its seed is --seed, request.skew.seed
  std::optional<std::string> compute;    // a ComputeMode name (unset: the request's default)
  std::optional<std::string> allreduce;  // an AllreduceAlgorithm name (unset: the request's)
  std::string calibration;              // a `ddp-sim calibrate --json` file (empty: fit the trace)
  std::string machine;                  // a ddp-machine-profile file (empty: none; traces/MACHINE.md)
  std::optional<double> unprofiled_iteration_ms;  // ReplayRequest::unprofiled_iteration_s, in ms
  std::optional<std::string> platform;  // unset: star, or two-level with --cluster
  std::string cluster;                  // a named two-level preset (cluster_presets.hpp)
  std::optional<int> gpus_per_node;     // unset: the request's, or the --cluster preset's
  std::vector<std::string> slowdown;    // the skew syntax (trace/skew.hpp), parsed into request.skew
  std::vector<std::string> delay;
  std::vector<std::string> delay_dist;
  std::vector<std::string> effective_cores;  // K=C texts, parsed into request.effective_cores
  std::optional<std::string> core_sharing;   // a CoreSharing name (unset: the request's)
  std::optional<std::string> allreduces_in_flight;  // 2=G (or --concurrent-allreduces), parsed into request.in_flight_gain
  std::optional<double> max_memory;  // --max-memory, bytes (resource_check.hpp)
};

void add_replay_options(CLI::App* command, ReplayFlags& flags);
// --unprofiled-iteration-ms, in milliseconds (ReplayRequest::unprofiled_iteration_s): declared
// once for replay's flags and advise's.
CLI::Option* add_unprofiled_iteration_option(CLI::App* command, std::optional<double>& ms);

// Hides the flags' old names (--concurrent-allreduces) from `command`'s --help. Only for printing
// the help: CLI11 names a hidden option "" in its parse errors.
void hide_old_names(CLI::App* command);

// Names in, enums out; every skew flag through the trace library's SkewSpec parsers, so
// ddp-sim and ddp-train accept and refuse the same text. UsageError / SkewError on bad text.
sim::ReplayRequest to_request(const ReplayFlags& flags);
sim::MonteCarloPlan to_plan(const ReplayFlags& flags);

}  // namespace ddpsim::cli
