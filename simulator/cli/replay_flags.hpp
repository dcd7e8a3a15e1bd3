// The flags `replay`, `timeout-curve` and `sweep` share (the trace, the model, the network and
// the what-ifs), and their mapping onto the library's ReplayRequest and MonteCarloPlan.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddpsim/sim/monte_carlo_runs.hpp"
#include "ddpsim/sim/prepared_replay.hpp"

namespace ddpsim::cli {

struct ReplayFlags {
  std::string trace_dir;
  // Per-iteration is the most accurate on what-ifs (simulator/bench/validate_whatif.py): the
  // median mode replays every rank at its median speed and loses the cost of noisy ranks
  // meeting at each all-reduce.
  std::string compute = "per-iteration";
  std::int64_t iterations = 0;  // 0: every source iteration with per-iteration or stalls, else 3
  std::string allreduce = "ring-agg";
  std::optional<double> bandwidth;
  std::optional<double> latency;
  std::string calibration;              // a `ddp-sim calibrate --json` file (empty: fit the trace)
  std::optional<std::string> platform;  // unset: star, or two-level with --cluster
  std::string cluster;                  // a named two-level preset (cluster_presets.hpp)
  std::optional<int> gpus_per_node;     // unset: 1, or the --cluster preset's
  std::optional<double> intra_bandwidth;
  std::optional<double> intra_latency;
  std::optional<double> inter_bandwidth;
  std::optional<double> inter_latency;
  std::vector<std::string> cfg;
  int world_size = 0;
  double timeout = 0;
  std::vector<std::string> slowdown;
  std::vector<std::string> delay;
  std::vector<std::string> delay_dist;
  std::uint64_t seed = 0;
  int runs = 1;
  bool bootstrap = false;
  std::optional<double> bucket_cap_mb;
  std::optional<double> first_bucket_cap_mb;
  std::vector<double> bucket_caps_mb;  // --bucket-caps-mb A,B,C: a per-bucket list (empty: none)
  double cores = 0;  // effective cores (a fraction where co-running ranks slow each other)
  std::optional<double> overlap_bandwidth_fraction;
  std::optional<double> compute_fraction_during_allreduce;
  std::optional<std::int64_t> max_simulated_flows;
};

void add_replay_options(CLI::App* command, ReplayFlags& flags);

// Names in, enums out; every skew flag through the trace library's SkewSpec parsers, so
// ddp-sim and ddp-train accept and refuse the same text. UsageError / SkewError on bad text.
sim::ReplayRequest to_request(const ReplayFlags& flags);
sim::MonteCarloPlan to_plan(const ReplayFlags& flags);

}  // namespace ddpsim::cli
