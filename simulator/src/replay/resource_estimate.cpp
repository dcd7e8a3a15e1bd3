// A replay's memory and time before it runs (resource_estimate.hpp).
//
// The coefficients are what one thing costs in the replay as built today, measured with
// `/usr/bin/time -f %M` (the largest process's peak resident set) on the star and
// --cluster dgx-a100 at several world sizes, iterations and all-reduce algorithms, with and
// without --out (scripts/replay-resources.sh prints estimate beside measurement). Rounded up: a refusal
// must not come after the memory is gone, and an estimate a little high only refuses requests
// within a few percent of the limit.
#include "ddpsim/sim/resource_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "ddpsim/sim/text_of.hpp"

namespace ddpsim::sim {
namespace {

// Resident bytes.
constexpr double kBaseBytes = 40e6;           // the process, its libraries and SimGrid's engine
constexpr double kBytesPerTraceEvent = 400;   // the measured trace read and its workload model
constexpr double kBytesPerRank = 24;          // its class's number: in the child, the pipe and the parent
constexpr double kBytesPerRankIteration = 8;  // its time in one iteration, in the report's summary
constexpr double kBytesPerJsonRankIteration = 64;  // outputs.json: that time in the JSON report
constexpr double kBytesPerRankRecord = 4.7e3; // outputs.events: its result and predicted-trace header
constexpr double kBytesPerRankEvent = 300;    // outputs.events: one of its events, in the result and the predicted trace
constexpr double kBytesPerClass = 32e3;       // its actors' touched stacks and contexts, its inputs' key
constexpr double kBytesPerClassEvent = 150;   // an event a class records, in the child, the pipe and the parent
constexpr double kBytesPerHost = 2e3;         // a SimGrid host with its link
// Seconds.
constexpr double kBaseSeconds = 0.05;
constexpr double kSecondsPerRank = 0.3e-6;              // grouping it into a class
constexpr double kSecondsPerRankIteration = 0.15e-6;    // its inputs and time in each iteration
constexpr double kSecondsPerJsonRankIteration = 0.3e-6; // outputs.json
constexpr double kSecondsPerRankRecord = 200e-6;        // outputs.events: its trace written
constexpr double kSecondsPerRankEvent = 9e-6;           // outputs.events: one of its events written
constexpr double kSecondsPerClass = 100e-6;     // its actors' life
constexpr double kSecondsPerClassEvent = 5e-6;
constexpr double kSecondsPerMessage = 1.5e-6;   // the explicit ring's messages ...
constexpr double kSecondsPerMessagePair = 5e-9; // ... and SimGrid's sharing among those in flight
constexpr double kSecondsPerHostSquared = 4e-8; // a built two-level platform: quadratic in hosts (routes.hpp)
constexpr double kSecondsPerHost = 2e-6;
// SimGrid's default actor stack (contexts/stack-size, KiB).
constexpr double kDefaultStackKiB = 8192;

double stack_bytes(const ReplayOptions& options) {
  double kib = kDefaultStackKiB;
  const std::string key = "contexts/stack-size:";
  for (const std::string& entry : options.simgrid_config) {
    if (entry.rfind(key, 0) != 0) continue;
    try {
      kib = std::stod(entry.substr(key.size()));
    } catch (const std::exception&) {
      // replay's own check of --cfg says what is wrong with it
    }
  }
  return kib * 1024;
}

// An upper bound on group_identical_ranks' classes, without looking at each rank.
std::int64_t classes_bound(const WorkloadModel& model, const ReplayOptions& options, std::int64_t world) {
  const auto measured = static_cast<std::int64_t>(std::max<std::size_t>(model.costs.size(), 1));
  if (options.algorithm == AllreduceAlgorithm::Ring) return world;  // never merged
  if (options.independent_copies && world > measured) return world;
  // Ranks with inputs of their own: slowed, stalled by rank. A distribution on every rank
  // draws each rank's stalls apart.
  std::set<int> own;
  for (const auto& [rank, factor] : options.slowdown) own.insert(rank);
  for (const trace::FixedDelay& delay : options.skew.delays) {
    if (delay.rank != trace::kAllRanks) own.insert(delay.rank);
  }
  for (const trace::DelayDistribution& distribution : options.skew.distributions) {
    if (distribution.rank == trace::kAllRanks) return world;
    own.insert(distribution.rank);
  }
  // Ranks beyond the trace: one class per sequence of measured ranks they replay.
  double sequences = std::pow(static_cast<double>(measured), static_cast<double>(options.iterations));
  const double beyond = static_cast<double>(std::max<std::int64_t>(world - measured, 0));
  const double bound = static_cast<double>(measured + static_cast<std::int64_t>(own.size())) + std::min(beyond, sequences);
  return static_cast<std::int64_t>(std::min(bound, static_cast<double>(world)));
}

bool network_reconfigured(const ReplayOptions& options) {
  return std::any_of(options.simgrid_config.begin(), options.simgrid_config.end(),
                     [](const std::string& entry) { return entry.rfind("network/", 0) == 0; });
}

}  // namespace

ReplaySize replay_size(const WorkloadModel& model, const ReplayOptions& options, RankOutputs outputs) {
  ReplaySize size;
  size.ranks = options.world_size > 0 ? options.world_size : model.world_size;
  size.outputs = outputs;
  size.iterations = std::max<std::int64_t>(options.iterations, 1);
  size.classes = classes_bound(model, options, size.ranks);
  const auto params = static_cast<std::int64_t>(model.source_meta.parameters.size());
  const auto buckets = static_cast<std::int64_t>(model.bucket_bytes.size());
  // iteration, forward, backward and optimizer begin/end, a stall or eval mark; a gradient per
  // parameter; ready, begin and end per bucket.
  size.events_per_rank_iteration = 9 + params + 3 * buckets;
  const double ranks = static_cast<double>(size.ranks);
  const double per_rank_events = static_cast<double>(size.iterations * size.events_per_rank_iteration);
  size.rank_iterations = ranks * static_cast<double>(size.iterations);
  size.rank_events = outputs.events ? ranks * per_rank_events : 0;
  size.class_events = static_cast<double>(size.classes) * per_rank_events;
  size.actors = static_cast<double>(size.classes) * (2 + (options.allreduces_in_flight > 1 ? options.allreduces_in_flight : 0));
  size.stack_bytes = stack_bytes(options);
  // Messages put the whole platform up: the explicit ring, and an aggregated collective's
  // flows when SimGrid times them (few enough, or another network model).
  const bool ring = options.algorithm == AllreduceAlgorithm::Ring;
  const bool flows = options.algorithm != AllreduceAlgorithm::Analytic &&
                     (network_reconfigured(options) || ranks <= static_cast<double>(options.max_simulated_flows));
  const bool whole_platform = ring || flows || options.platform.kind == PlatformKind::File;
  size.hosts = whole_platform ? ranks : static_cast<double>(size.classes);
  if (ring && size.ranks > 1) {
    size.messages = 2 * (ranks - 1) * ranks * static_cast<double>(buckets * size.iterations);
    size.message_pairs = size.messages * ranks;
  }
  return size;
}

ResourceEstimate estimate_replay(const PreparedReplay& prepared, int runs, RankOutputs outputs) {
  double trace_events = 0;
  for (const trace::RankTrace& rank : prepared.measured.ranks) trace_events += static_cast<double>(rank.events.size());
  return estimate_replay(prepared.model, prepared.options, trace_events, runs, outputs);
}

ResourceEstimate estimate_replay(const WorkloadModel& model, const ReplayOptions& options, double trace_events, int runs,
                                 RankOutputs outputs) {
  ResourceEstimate estimate;
  estimate.size = replay_size(model, options, outputs);
  estimate.runs = std::max(runs, 1);
  estimate.trace_world_size = model.world_size;
  estimate.trace_dir = model.source_dir;
  const ReplaySize& size = estimate.size;
  const auto classes = static_cast<double>(size.classes);
  const auto ranks = static_cast<double>(size.ranks);
  const double fixed = kBaseBytes + kBytesPerTraceEvent * trace_events;
  const double records = outputs.events ? ranks : 0;
  const double json_rank_iterations = outputs.json ? size.rank_iterations : 0;
  estimate.resident_bytes = fixed + kBytesPerRank * ranks + kBytesPerRankIteration * size.rank_iterations +
                            kBytesPerJsonRankIteration * json_rank_iterations + kBytesPerRankRecord * records +
                            kBytesPerRankEvent * size.rank_events +
                            kBytesPerClass * classes + kBytesPerClassEvent * size.class_events +
                            kBytesPerHost * size.hosts;
  estimate.bytes_per_rank = (estimate.resident_bytes - fixed) / std::max(ranks, 1.0);
  // Mapped but not resident: the libraries now, and every actor's whole stack.
  const double mapped_now = std::max(0.0, trace::address_space_bytes_now() - trace::resident_bytes_now());
  estimate.address_space_bytes = estimate.resident_bytes + mapped_now + size.actors * size.stack_bytes;
  double run_s = kSecondsPerRank * ranks + kSecondsPerRankIteration * size.rank_iterations +
                 kSecondsPerJsonRankIteration * json_rank_iterations + kSecondsPerRankRecord * records + kSecondsPerRankEvent * size.rank_events + kSecondsPerClass * classes +
                 kSecondsPerClassEvent * size.class_events + kSecondsPerMessage * size.messages +
                 kSecondsPerMessagePair * size.message_pairs + kSecondsPerHost * size.hosts;
  if (options.platform.kind == PlatformKind::TwoLevel && size.hosts > classes) {
    run_s += kSecondsPerHostSquared * size.hosts * size.hosts;
  }
  estimate.wall_s = kBaseSeconds + run_s * estimate.runs;
  return estimate;
}

void check_fits(const ResourceEstimate& estimate, const std::vector<trace::MemoryLimit>& limits, const std::string& what,
                int processes) {
  const std::optional<trace::MemoryLimit> limit =
      trace::exceeded_limit(limits, estimate.resident_bytes, estimate.address_space_bytes, processes);
  if (!limit) return;
  const ReplaySize& size = estimate.size;
  const bool address_space = limit->kind == trace::MemoryKind::AddressSpace;
  const double needed = address_space ? estimate.address_space_bytes : estimate.resident_bytes;
  std::string driver;
  std::string fewer;
  if (!estimate.subject.empty()) {
    driver = estimate.subject;
    fewer = "a smaller request";
  } else if (size.ranks > estimate.trace_world_size) {
    driver = "--world-size " + std::to_string(size.ranks);
    fewer = "fewer ranks or --iterations";
  } else if (size.iterations > 3) {
    driver = "--iterations " + std::to_string(size.iterations);
    fewer = "fewer --iterations";
  } else {
    driver = estimate.trace_dir.empty() ? std::string("the trace") : estimate.trace_dir;
    fewer = "a smaller request";
  }
  std::string message = driver + ": " + what + " needs about " + trace::memory_text(needed) +
                        (address_space ? " of address space" : " of memory");
  std::string why;
  if (address_space && size.actors * size.stack_bytes > needed / 2) {
    why = text_of(size.actors) + " actors' stacks of " + trace::memory_text(size.stack_bytes);
    fewer = "fewer ranks, a smaller --cfg contexts/stack-size (KiB)";
  } else if (size.ranks > 1) {
    why = trace::memory_text(estimate.bytes_per_rank) + " per rank";
  }
  message += " (" + (why.empty() ? std::string() : why + "; ") + "about " + duration_text(estimate.wall_s) + " of replay)";
  if (processes > 1 && !limit->per_process) message += " times " + std::to_string(processes) + " at once (--jobs)";
  message += " and this process may use " + trace::memory_text(limit->bytes) + " (" + limit->source + "); use " +
             fewer + (processes > 1 && !limit->per_process ? ", fewer --jobs" : "") + ", or " + trace::raise_hint(*limit);
  throw RequestError(message);
}

std::string duration_text(double seconds) {
  char text[32];
  if (seconds < 90) {
    std::snprintf(text, sizeof text, "%.0f s", std::max(seconds, 1.0));
  } else if (seconds < 5400) {
    std::snprintf(text, sizeof text, "%.1f min", seconds / 60);
  } else if (seconds < 172800) {
    std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
  } else {
    std::snprintf(text, sizeof text, "%.1f days", seconds / 86400);
  }
  return text;
}

}  // namespace ddpsim::sim
