// The shared replay flags (replay_flags.hpp).
#include "replay_flags.hpp"

#include <sys/stat.h>

#include <limits>

#include "command.hpp"
#include "ddpsim/sim/calibration_json.hpp"
#include "ddpsim/sim/cluster_presets.hpp"
#include "numeric_flags.hpp"

namespace ddpsim::cli {
namespace {

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

bool is_regular_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// A repeatable flag that takes one value each time.
CLI::Option* add_repeatable(CLI::App* command, const std::string& name, std::vector<std::string>& values,
                            const std::string& help) {
  return command->add_option(name, values, help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

}  // namespace

void add_replay_options(CLI::App* command, ReplayFlags& flags) {
  command->add_option("TRACE_DIR", flags.request.trace_dir, "Recorded trace directory")->required();
  command->add_option("--compute", flags.compute, "Compute durations: per-iteration (default), median or mean");
  command->add_option("--iterations", flags.request.iterations, "Iterations to simulate (default: the trace's, or 3 with median/mean compute and no stalls)")
      ->check(integer_in(1, std::numeric_limits<std::int64_t>::max()));
  command->add_option("--allreduce", flags.allreduce, "ring, ring-agg (default), analytic, tree, or auto (per message size, the faster of ring-agg and tree: NCCL's choice)");
  command->add_option("--bandwidth", flags.request.bandwidth, "Link bandwidth, bytes/s (default: calibrated)")
      ->check(bandwidth());
  command->add_option("--latency", flags.request.latency, "Rank-to-rank latency, seconds (default: calibrated)")
      ->check(non_negative_number());
  command->add_option("--calibration", flags.calibration,
                      "Use this fit (the JSON of ddp-sim calibrate --json) instead of calibrating the trace again");
  command->add_option("--platform", flags.platform, "star (default), two-level or a SimGrid platform XML file");
  command->add_option("--cluster", flags.cluster,
                      "A named two-level platform: dgx-v100, dgx-a100 or dgx-h100 (8 GPUs per node; "
                      "docs/cluster-presets.md); --gpus-per-node and --intra/--inter-* override its values");
  command->add_option("--max-simulated-flows", flags.request.max_simulated_flows,
                      "Aggregated all-reduces whose flows share links: SimGrid's flows up to N flows, else the "
                      "max-min bottleneck bound (default 4096)")
      ->check(integer_in(0, std::numeric_limits<std::int64_t>::max()));
  command->add_option("--gpus-per-node", flags.gpus_per_node, "two-level: ranks per node (default 1)")
      ->check(integer_in(1, kIntMax));
  command->add_option("--intra-bandwidth", flags.request.intra_bandwidth, "two-level: rank link bandwidth, bytes/s")
      ->check(bandwidth());
  command->add_option("--intra-latency", flags.request.intra_latency, "two-level: latency between ranks of a node, s")
      ->check(non_negative_number());
  command->add_option("--inter-bandwidth", flags.request.inter_bandwidth, "two-level: node uplink bandwidth, bytes/s")
      ->check(bandwidth());
  command->add_option("--inter-latency", flags.request.inter_latency, "two-level: extra latency between nodes, s")
      ->check(non_negative_number());
  add_repeatable(command, "--cfg", flags.request.simgrid_config, "SimGrid configuration KEY:VALUE (repeatable)");
  command->add_option("--world-size", flags.request.world_size,
                      "What-if: simulate W ranks (ranks beyond the trace replay a measured rank drawn per "
                      "iteration from --seed's rank-copy stream)")
      ->check(integer_in(1, kIntMax));
  command->add_option("--timeout", flags.request.timeout_s, "What-if: fail an all-reduce that waits longer, seconds")
      ->check(positive_number());
  add_repeatable(command, "--slowdown", flags.slowdown,
                 "What-if: RANK=F (F >= 1) stretches a rank's compute (repeatable)");
  add_repeatable(command, "--delay", flags.delay, "What-if: RANK=MS[@ITER] stalls a rank at an iteration's start (repeatable)");
  add_repeatable(command, "--delay-dist", flags.delay_dist,
                 "What-if: RANK=lognormal:MU,SIGMA|exp:MEAN|uniform:A,B random stall per iteration, ms (repeatable)");
  command->add_option("--seed", flags.request.skew.seed, "Seed of the random stalls (run i uses seed + i)")->check(unsigned_integer());
  command->add_option("--runs", flags.plan.runs, "Monte Carlo: replay N times with different stall draws (default 1)")
      ->check(integer_in(1, kIntMax));
  command->add_flag("--bootstrap", flags.plan.bootstrap,
                    "With --runs N: runs 2..N resample the measured iterations; prints the median's "
                    "90 % interval");
  command->add_option("--bucket-cap-mb", flags.request.bucket_cap_mb,
                      "What-if: re-bucket with this bucket_cap_mb (MiB), from the measured gradient times (a profiler "
                      "import has none: approximated from its recorded buckets, said in the report)")
      ->check(bucket_cap_mb(false));
  command->add_option("--bucket-caps-mb", flags.request.bucket_caps_mb,
                      "What-if: re-bucket with a per-bucket list of caps, MiB (DDP's bucket_cap_mb_list; the last "
                      "repeats); not with --bucket-cap-mb/--first-bucket-cap-mb")
      ->delimiter(',')
      ->check(bucket_cap_mb(false));
  command->add_option("--first-bucket-cap-mb", flags.request.first_bucket_cap_mb,
                      "What-if: the first bucket's cap, MiB (default: the trace's)")
      ->check(bucket_cap_mb(false));
  command->add_option("--cores", flags.request.cores,
                      "What-if: the trace's ranks and the simulated ones share one machine of N effective cores "
                      "(its compute throughput with every core busy, in ranks running alone: a fraction where "
                      "co-running ranks slow each other; experiments/peer/corun_bench.sh measures it); compute is "
                      "stretched by max(1, W/N) / max(1, W_trace/N)")
      ->check(finite_number(1, kIntMax, false, "a number of cores >= 1"));
  command->add_option("--overlap-bandwidth-fraction", flags.request.overlap_bandwidth_fraction,
                      "The all-reduce rate while any rank's autograd runs, as a fraction of the bandwidth "
                      "(default: fitted from the trace with its bandwidth, 1 with --bandwidth; "
                      "experiments/peer/allreduce_bench.py --busy measures it)")
      ->check(finite_number(0, 1, true, "a fraction in (0, 1]"));
  command->add_option("--compute-fraction-during-allreduce", flags.request.compute_fraction_during_allreduce,
                      "Autograd's rate while its rank's all-reduces transfer, as a fraction of its rate alone "
                      "(Gloo's threads share the cores): the measured backward becomes autograd's time alone and "
                      "is paced again in the replay (default 1: replayed as measured; "
                      "experiments/peer/allreduce_bench.py --busy measures it)")
      ->check(finite_number(0, 1, true, "a fraction in (0, 1]"));
}

sim::ReplayRequest to_request(const ReplayFlags& flags) {
  sim::ReplayRequest request = flags.request;
  if (flags.compute) {
    const auto mode = sim::compute_mode_from_string(*flags.compute);
    if (!mode) throw UsageError("--compute: expected median, mean or per-iteration, got '" + *flags.compute + "'");
    request.compute = *mode;
  }
  if (flags.allreduce) {
    const auto algorithm = sim::allreduce_algorithm_from_string(*flags.allreduce);
    if (!algorithm) {
      throw UsageError("--allreduce: expected ring, ring-agg, analytic, tree or auto, got '" + *flags.allreduce + "'");
    }
    request.algorithm = *algorithm;
  }
  if (!flags.calibration.empty()) {
    request.calibration = sim::read_calibration(flags.calibration);
    request.calibration_file = flags.calibration;
  }
  const std::string platform = flags.platform.value_or(flags.cluster.empty() ? "star" : "two-level");
  if (platform == "star") {
    request.platform = sim::PlatformKind::Star;
  } else if (platform == "two-level") {
    request.platform = sim::PlatformKind::TwoLevel;
  } else if (is_regular_file(platform)) {
    request.platform = sim::PlatformKind::File;
    request.platform_file = platform;
  } else {
    throw UsageError("--platform: expected star, two-level or a readable SimGrid XML file, got '" + platform + "'");
  }
  if (flags.gpus_per_node) request.gpus_per_node = *flags.gpus_per_node;
  if (!flags.cluster.empty()) {
    const sim::ClusterPreset* preset = sim::find_cluster_preset(flags.cluster);
    if (preset == nullptr) {
      throw UsageError("--cluster: expected " + sim::cluster_preset_names() + ", got '" + flags.cluster + "'");
    }
    if (platform != "two-level") {
      throw UsageError("--cluster: expected no --platform other than two-level (a preset is a two-level platform), got '" +
                       platform + "'");
    }
    // The preset fills what the flags left unset.
    request.gpus_per_node = flags.gpus_per_node.value_or(preset->gpus_per_node);
    request.intra_bandwidth = request.intra_bandwidth.value_or(preset->intra_bandwidth);
    request.intra_latency = request.intra_latency.value_or(preset->intra_latency_s);
    request.inter_bandwidth = request.inter_bandwidth.value_or(preset->inter_bandwidth);
    request.inter_latency = request.inter_latency.value_or(preset->inter_latency_s);
  }
  for (const auto& text : flags.slowdown) request.skew.slowdowns.push_back(trace::parse_slowdown(text));
  for (const auto& text : flags.delay) request.skew.delays.push_back(trace::parse_delay(text));
  for (const auto& text : flags.delay_dist) request.skew.distributions.push_back(trace::parse_delay_distribution(text));
  return request;
}

sim::MonteCarloPlan to_plan(const ReplayFlags& flags) {
  sim::MonteCarloPlan plan = flags.plan;
  plan.seed = flags.request.skew.seed;  // one --seed: the stalls' and the runs'
  sim::check_plan(plan);
  return plan;
}

}  // namespace ddpsim::cli
