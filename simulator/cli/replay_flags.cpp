// The shared replay flags: their declaration (replay_flags.hpp); replay_request.cpp maps them.
#include "replay_flags.hpp"

#include <limits>

#include "command.hpp"
#include "numeric_flags.hpp"
#include "resource_check.hpp"

namespace ddpsim::cli {
namespace {

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr const char* kOldAllreducesInFlight = "--concurrent-allreduces";

// A repeatable flag that takes one value each time.
CLI::Option* add_repeatable(CLI::App* command, const std::string& name, std::vector<std::string>& values,
                            const std::string& help) {
  return command->add_option(name, values, help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

}  // namespace

CLI::Option* add_unprofiled_iteration_option(CLI::App* command, std::optional<double>& ms) {
  return command
      ->add_option("--unprofiled-iteration-ms", ms,
                   "A profiled trace's job without the profiler: its median iteration time, ms (its own log of "
                   "unprofiled steps); every rank's compute is scaled so that the trace replayed as it ran takes "
                   "this long, and the replays run with that compute (Note [profiler overhead])")
      ->check(finite_number(0, 1e9, true, "a time in ms > 0"));
}

void add_replay_options(CLI::App* command, ReplayFlags& flags) {
  command->add_option("TRACE_DIR", flags.request.trace_dir, "Recorded trace directory")->required();

  const std::string what_if = "What-if";
  command->add_option("--world-size", flags.request.world_size,
                      "Simulate W ranks (ranks beyond the trace replay a measured rank drawn per iteration from "
                      "--seed's rank-copy stream)")
      ->check(integer_in(1, kIntMax))
      ->group(what_if);
  command->add_flag("--independent-copies", flags.request.independent_copies,
                    "With --world-size beyond the trace: each extra rank replays an iteration drawn for it (its "
                    "compute noise uncorrelated with the measured ranks', so each all-reduce waits for the slowest "
                    "draw) instead of the measured ranks' own iteration; every such rank is simulated apart")
      ->group(what_if);
  command->add_option("--bucket-cap-mb", flags.request.bucket_cap_mb,
                      "Re-bucket with this bucket_cap_mb (MiB), from the measured gradient times (a profiler "
                      "import has them where it was recorded with record_shapes=True; without, the recorded "
                      "buckets are merged and split, approximately, and the report says so)")
      ->check(bucket_cap_mb(false))
      ->group(what_if);
  command->add_option("--bucket-caps-mb", flags.request.bucket_caps_mb,
                      "Re-bucket with a per-bucket list of caps, MiB (DDP's bucket_cap_mb_list; the last "
                      "repeats); not with --bucket-cap-mb/--first-bucket-cap-mb")
      ->delimiter(',')
      ->check(bucket_cap_mb(false))
      ->group(what_if);
  command->add_option("--first-bucket-cap-mb", flags.request.first_bucket_cap_mb,
                      "The first bucket's cap, MiB (default: the trace's; with --bucket-cap-mb, that cap where "
                      "the trace's first bucket had the others' cap, as DDP given bucket_cap_mb caps every bucket)")
      ->check(bucket_cap_mb(false))
      ->group(what_if);
  add_repeatable(command, "--slowdown", flags.slowdown, "RANK=F (F >= 1) stretches a rank's compute (repeatable)")
      ->group(what_if);
  add_repeatable(command, "--delay", flags.delay, "RANK=MS[@ITER] stalls a rank at an iteration's start (repeatable)")
      ->group(what_if);
  add_repeatable(command, "--delay-dist", flags.delay_dist,
                 "RANK=lognormal:MU,SIGMA|exp:MEAN|uniform:A,B random stall per iteration, ms (repeatable)")
      ->group(what_if);
  command->add_option("--timeout", flags.request.timeout_s, "Fail an all-reduce that waits longer, seconds")
      ->check(positive_number())
      ->group(what_if);

  const std::string machine = "Machine (a profile, and the flags that override it)";
  command->add_option("--machine", flags.machine,
                      "A machine profile (ddp-launch ... ddp-machine-profile --out FILE, traces/MACHINE.md): the "
                      "network fitted to its all-reduce ladder instead of the trace's all-reduces, its two all-reduces in "
                      "flight as --allreduces-in-flight 2=G (2=1 on its own network: Note [two at once]), its co-location as --effective-cores K=C, its overlap and sleep resume cost as the three flags of those "
                      "names; the flags below override it")
      ->group(machine);
  command->add_option("--bandwidth", flags.request.bandwidth, "Link bandwidth, bytes/s (default: --machine's, else calibrated)")
      ->check(bandwidth())
      ->group(machine);
  command->add_option("--latency", flags.request.latency, "Rank-to-rank latency, seconds (default: --machine's, else calibrated)")
      ->check(non_negative_number())
      ->group(machine);
  command->add_option("--allreduces-in-flight", flags.allreduces_in_flight,
                      "2=G: a rank's all-reduces run two in flight at once, as Gloo's two worker threads do, together "
                      "at G times one's rate (--machine's in_flight_gain); a rate fitted from the trace becomes one "
                      "all-reduce's (default: --machine's, else one at a time, in bucket order)")
      ->group(machine);
  // The concept's earlier name, kept for scripts: the same value, hidden from --help (hide_old_names).
  command->add_option(kOldAllreducesInFlight, flags.allreduces_in_flight, "Old name of --allreduces-in-flight")
      ->group(machine);
  add_repeatable(command, "--effective-cores", flags.effective_cores,
                 "K=C: K ranks on this machine at once get C cores' worth of compute (--machine's co-location on "
                 "one host; repeat for several K); compute is stretched by s(W) / s(W_trace), s(k) = k / C(k), C "
                 "interpolated between the K given, C(1) = 1")
      ->group(machine);
  command->add_option("--cores", flags.request.cores,
                      "Instead of --effective-cores: the trace's ranks and the simulated ones share one machine of N "
                      "effective cores (its compute throughput with every core busy, in ranks running alone: a fraction "
                      "where co-running ranks slow each other); compute is stretched by max(1, W/N) / max(1, W_trace/N)")
      ->check(finite_number(1, kIntMax, false, "a number of cores >= 1"))
      ->group(machine);
  command->add_option("--overlap-bandwidth-fraction", flags.request.overlap_bandwidth_fraction,
                      "The all-reduce rate while any rank's autograd runs, as a fraction of the bandwidth "
                      "(default: --machine's overlap, else fitted from the trace with its bandwidth, 1 with --bandwidth)")
      ->check(finite_number(0, 1, true, "a fraction in (0, 1]"))
      ->group(machine);
  command->add_option("--compute-fraction-during-allreduce", flags.request.compute_fraction_during_allreduce,
                      "Autograd's rate while its rank's all-reduces transfer, as a fraction of its rate alone "
                      "(Gloo's threads share the cores): the measured backward becomes autograd's time alone and "
                      "is paced again in the replay (default: --machine's overlap, else 1: replayed as measured)")
      ->check(finite_number(0, 1, true, "a fraction in (0, 1]"))
      ->group(machine);
  command->add_option("--sleep-resume-cost", flags.request.sleep_resume_cost_s,
                      "Seconds of extra compute a rank slowed by --slowdown spends after each of its sleeps, as "
                      "ddp-train --slowdown and python_ddp.py --slowdown emulate a straggler (the emulation's cost, "
                      "not a real straggler's; default: --machine's sleep resume cost, else 0)")
      ->check(finite_number(0, 1, false, "seconds in [0, 1]"))
      ->group(machine);

  const std::string network = "Network";
  command->add_option("--allreduce", flags.allreduce,
                      "ring, ring-agg (default), analytic, tree, or auto (per message size, the faster of ring-agg "
                      "and tree: NCCL's choice)")
      ->group(network);
  command->add_option("--calibration", flags.calibration,
                      "Use this fit (the JSON of ddp-sim calibrate --json) instead of calibrating the trace again")
      ->group(network);
  command->add_option("--max-simulated-flows", flags.request.max_simulated_flows,
                      "Aggregated all-reduces whose flows share links: SimGrid's flows up to N flows, else the "
                      "max-min bottleneck bound (default 4096)")
      ->check(integer_in(0, std::numeric_limits<std::int64_t>::max()))
      ->group(network);
  add_repeatable(command, "--cfg", flags.request.simgrid_config, "SimGrid configuration KEY:VALUE (repeatable)")
      ->group(network);

  const std::string platform = "Platform";
  command->add_option("--platform", flags.platform, "star (default), two-level or a SimGrid platform XML file")
      ->group(platform);
  command->add_option("--cluster", flags.cluster,
                      "A named two-level platform: dgx-v100, dgx-a100 or dgx-h100 (8 GPUs per node; "
                      "docs/cluster-presets.md); --gpus-per-node and --intra/--inter-* override its values")
      ->group(platform);
  command->add_option("--gpus-per-node", flags.gpus_per_node, "two-level: ranks per node (default 1)")
      ->check(integer_in(1, kIntMax))
      ->group(platform);
  command->add_option("--intra-bandwidth", flags.request.platform.intra_bandwidth, "two-level: rank link bandwidth, bytes/s")
      ->check(bandwidth())
      ->group(platform);
  command->add_option("--intra-latency", flags.request.platform.intra_latency, "two-level: latency between ranks of a node, s")
      ->check(non_negative_number())
      ->group(platform);
  command->add_option("--inter-bandwidth", flags.request.platform.inter_bandwidth, "two-level: node uplink bandwidth, bytes/s")
      ->check(bandwidth())
      ->group(platform);
  command->add_option("--inter-latency", flags.request.platform.inter_latency, "two-level: extra latency between nodes, s")
      ->check(non_negative_number())
      ->group(platform);

  const std::string compute = "Compute model";
  command->add_option("--compute", flags.compute, "Compute durations: per-iteration (default), median or mean")
      ->group(compute);
  command->add_option("--core-sharing", flags.core_sharing,
                      "With --cores or --effective-cores: uniform (default) stretches all compute by s(W) / s(W_trace); "
                      "paced runs each rank's forward, autograd and optimizer at s(W_trace) / s(k), k the ranks "
                      "computing at that instant (a rank whose peers stall or wait computes faster)")
      ->group(compute);
  add_unprofiled_iteration_option(command, flags.unprofiled_iteration_ms)->group(compute);

  const std::string runs = "Runs";
  command->add_option("--iterations", flags.request.iterations,
                      "Iterations to simulate (default: the trace's, or 3 with median/mean compute and no stalls)")
      ->check(integer_in(1, std::numeric_limits<std::int64_t>::max()))
      ->group(runs);
  command->add_option("--runs", flags.plan.runs,
                      "Monte Carlo: replay N times with different stall draws (default 1; replay and sweep: 21 with "
                      "--bootstrap for a what-if at the trace's world size; timeout-curve: 100 with --delay-dist)")
      ->check(integer_in(1, kIntMax))
      ->group(runs);
  command->add_option("--seed", flags.request.skew.seed, "Seed of the random stalls (run i uses seed + i)")
      ->check(unsigned_integer())
      ->group(runs);
  command->add_flag("--bootstrap", flags.plan.bootstrap,
                    "With --runs N: runs 2..N resample the measured iterations; prints the median's "
                    "90 % interval")
      ->group(runs);
  add_max_memory_option(command, flags.max_memory);
}

void hide_old_names(CLI::App* command) {
  if (CLI::Option* old = command->get_option_no_throw(kOldAllreducesInFlight)) old->group("");
}

}  // namespace ddpsim::cli
