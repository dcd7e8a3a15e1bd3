// The predicted run as a trace (predicted_trace.hpp).
#include "ddpsim/sim/predicted_trace.hpp"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/summary.hpp"

namespace ddpsim::sim {

namespace {

std::string number(double value) {
  std::ostringstream text;
  text.precision(10);
  text << value;
  return text.str();
}

// The trace of `entries` (a ReplayResult's events: per rank, or per class with its first
// rank at first_rank[c]) of a run of `world` ranks.
trace::Trace predicted_entries(const WorkloadModel& model, const ReplayOptions& options,
                               const std::vector<std::vector<trace::Event>>& entries, const std::vector<int>& first_rank,
                               int world) {
  trace::Trace predicted;
  const std::string started = trace::utc_now_iso8601();

  std::string simgrid_config;
  for (const auto& list : {kDefaultSimgridConfig, options.simgrid_config}) {
    for (const auto& entry : list) simgrid_config += (simgrid_config.empty() ? "" : " ") + entry;
  }

  trace::SkewSpec replayed_skew = options.skew;
  for (const auto& [slow_rank, factor] : options.slowdown) replayed_skew.slowdowns.push_back({slow_rank, factor});
  std::string source_skew;
  for (const auto& [key, value] : model.source_meta.skew) {
    source_skew += (source_skew.empty() ? "" : " ") + key + "=" + value;
  }

  for (std::size_t entry = 0; entry < entries.size(); ++entry) {
    const int rank = first_rank[entry];
    trace::RankTrace rank_trace;
    trace::RunMeta& meta = rank_trace.meta;
    meta = model.source_meta;
    meta.source = "simulated";
    meta.backend = "simgrid";
    meta.tool = {"ddp-sim", DDPSIM_VERSION, DDPSIM_GIT_SHA};
    meta.start_time_utc = started;
    meta.host = "rank-" + std::to_string(rank);
    meta.rank = rank;
    meta.local_rank = options.platform.kind == PlatformKind::TwoLevel
                          ? rank % std::max(1, options.platform.gpus_per_node)
                          : 0;
    meta.world_size = world;
    meta.bucket_assignments = {trace::BucketAssignment{0, model.buckets}};
    if (options.timeout_s > 0) meta.timeout_s = options.timeout_s;
    // The skew is the replay's own what-ifs, in the syntax FORMAT.md defines; the measured
    // compute still holds whatever the source run injected, which is said, not re-declared.
    meta.skew = replayed_skew.to_meta();
    if (!source_skew.empty()) meta.settings["sim.source_skew"] = source_skew;
    meta.settings["sim.allreduce"] = to_string(options.algorithm);
    meta.settings["sim.platform"] = options.platform.describe();
    meta.settings["sim.alpha_s"] = number(options.alpha_s);
    meta.settings["sim.beta_bytes_per_s"] = number(options.beta_bytes_per_s);
    meta.settings["sim.compute"] = to_string(model.mode);
    // The contention between all-reduces and autograd the replay applied (1: none, not written).
    if (options.overlap_bandwidth_fraction != 1) {
      meta.settings["sim.overlap_bandwidth_fraction"] = number(options.overlap_bandwidth_fraction);
    }
    if (options.compute_fraction_during_allreduce != 1) {
      meta.settings["sim.compute_fraction_during_allreduce"] = number(options.compute_fraction_during_allreduce);
    }
    meta.settings["sim.simgrid_config"] = simgrid_config;
    meta.settings["sim.source_trace"] = model.source_dir;
    meta.settings["sim.source_world_size"] = std::to_string(model.world_size);
    rank_trace.events = entries[entry];
    predicted.ranks.push_back(std::move(rank_trace));
  }
  return predicted;
}

}  // namespace

trace::Trace make_predicted_trace(const WorkloadModel& model, const ReplayOptions& options,
                                  const ReplayResult& result) {
  if (!result.class_of.empty()) return make_predicted_trace(model, options, per_rank(result));
  std::vector<int> ranks(result.events.size());
  std::iota(ranks.begin(), ranks.end(), 0);
  return predicted_entries(model, options, result.events, ranks, result.world_size());
}

trace::Summary summarize_prediction(const WorkloadModel& model, const ReplayOptions& options,
                                    const ReplayResult& result) {
  if (result.class_of.empty()) return trace::summarize(make_predicted_trace(model, options, result));
  std::vector<int> first_rank(result.events.size(), -1);
  for (std::size_t rank = result.class_of.size(); rank-- > 0;) {
    first_rank[static_cast<std::size_t>(result.class_of[rank])] = static_cast<int>(rank);
  }
  return trace::summarize(predicted_entries(model, options, result.events, first_rank, result.world_size()),
                          result.class_of);
}

}  // namespace ddpsim::sim
