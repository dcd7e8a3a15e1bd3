// Re-bucketing from the recorded buckets, without per-parameter data (rebucket_approximate.hpp).
#include "ddpsim/sim/rebucket_approximate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace ddpsim::sim {

const char* const kApproximateRebucketNote =
    "approximate: re-bucketed from the recorded all-reduce buckets, as the trace has no per-parameter "
    "sizes or gradient times (buckets merged while within the cap, larger ones split into equal pieces "
    "ready at times interpolated assuming a uniform gradient byte rate inside a bucket)";

bool has_only_bucket_records(const trace::RunMeta& meta) {
  const auto found = meta.settings.find("parameters");
  return found != meta.settings.end() && found->second == "per-bucket";
}

namespace {

std::int64_t limit_at(const std::vector<std::int64_t>& limits, std::size_t index) {
  return limits.at(std::min(index, limits.size() - 1));
}

// Builds the plan: one open bucket at a time (buckets merge only with their neighbour in
// reduction order), new-bucket counters per dtype as c10d keeps its size-limit iterators.
class Planner {
 public:
  Planner(std::vector<std::int64_t> recorded_limits, std::vector<std::int64_t> limits)
      : recorded_limits_(std::move(recorded_limits)), limits_(std::move(limits)) {}

  void add(int k, const trace::Parameter& bucket) {
    const std::int64_t element = trace::dtype_size(bucket.dtype);
    const std::int64_t recorded_limit = limit_at(recorded_limits_, recorded_count_[bucket.dtype]++);
    if (!open_.empty() && open_dtype_ == bucket.dtype && open_bytes_ + bucket.bytes() <= limit()) {
      open_.push_back({k, bucket.numel, 1.0});
      open_bytes_ += bucket.bytes();
      return;
    }
    close();
    open_dtype_ = bucket.dtype;
    std::int64_t done = 0;  // elements of this bucket already in closed pieces
    while (true) {
      const std::int64_t remaining = bucket.numel - done;
      if (remaining * element <= limit() || limit() >= recorded_limit) {
        open_ = {{k, remaining, 1.0}};
        open_bytes_ = remaining * element;
        return;
      }
      // While the limit still changes from one new bucket to the next (a smaller first cap, a
      // list), one piece at this limit, then look again; once it no longer does, equal pieces.
      const std::int64_t per_piece = std::max<std::int64_t>(1, limit() / element);
      std::int64_t piece = per_piece;
      const auto from_here = limits_.begin() + static_cast<std::ptrdiff_t>(std::min(index(), limits_.size() - 1));
      if (std::all_of(from_here, limits_.end(), [&](std::int64_t later) { return later == limit(); })) {
        const std::int64_t pieces = (remaining + per_piece - 1) / per_piece;
        piece = (remaining + pieces - 1) / pieces;
      }
      piece = std::min(piece, remaining);
      done += piece;
      open_ = {{k, piece, static_cast<double>(done) / static_cast<double>(bucket.numel)}};
      open_bytes_ = piece * element;
      if (done == bucket.numel) {
        open_.back().end_fraction = 1.0;
        return;
      }
      close();
    }
  }

  std::vector<PlannedBucket> finish() {
    close();
    return std::move(planned_);
  }

 private:
  std::size_t index() const {
    const auto found = new_count_.find(open_dtype_);
    return found == new_count_.end() ? 0 : found->second;
  }
  std::int64_t limit() const { return limit_at(limits_, index()); }
  void close() {
    if (open_.empty()) return;
    planned_.push_back(std::move(open_));
    open_.clear();
    open_bytes_ = 0;
    ++new_count_[open_dtype_];
  }

  std::vector<std::int64_t> recorded_limits_;
  std::vector<std::int64_t> limits_;
  std::map<std::string, std::size_t> recorded_count_;  // recorded buckets seen, per dtype
  std::map<std::string, std::size_t> new_count_;       // new buckets closed, per dtype
  PlannedBucket open_;
  std::string open_dtype_;
  std::int64_t open_bytes_ = 0;
  std::vector<PlannedBucket> planned_;
};

}  // namespace

std::vector<PlannedBucket> plan_buckets_from_recorded(const std::vector<trace::Parameter>& recorded,
                                                      const BucketCaps& recorded_caps, const BucketCaps& caps) {
  Planner planner(recorded_caps.limits(), caps.limits());
  for (std::size_t k = 0; k < recorded.size(); ++k) planner.add(static_cast<int>(k), recorded[k]);
  return planner.finish();
}

WorkloadModel rebucket_from_buckets(const WorkloadModel& model, const BucketCaps& caps) {
  if (caps.bucket_cap_bytes <= 0 || caps.first_bucket_cap_bytes <= 0) {
    throw WorkloadError("--bucket-cap-mb: expected positive bucket caps");
  }
  for (std::int64_t cap : caps.cap_list_bytes) {
    if (cap <= 0) throw WorkloadError("--bucket-caps-mb: expected positive bucket caps");
  }
  // The pseudo-parameters in reduction order: bucket b of the layout holds parameter buckets[b][0].
  const auto& parameters = model.source_meta.parameters;
  std::vector<trace::Parameter> recorded;
  for (const auto& bucket : model.buckets) {
    if (bucket.size() != 1 || bucket[0] < 0 || static_cast<std::size_t>(bucket[0]) >= parameters.size()) {
      throw WorkloadError(model.source_dir + ": expected one pseudo-parameter per bucket (a profiler import), got a bucket of " +
                          std::to_string(bucket.size()));
    }
    recorded.push_back(parameters[static_cast<std::size_t>(bucket[0])]);
    if (trace::dtype_size(recorded.back().dtype) <= 0) {
      throw WorkloadError(model.source_dir + ": expected buckets of a known dtype to re-bucket, got " + recorded.back().dtype);
    }
  }
  const trace::RunMeta& meta = model.source_meta;
  const BucketCaps recorded_caps = meta.bucket_cap_bytes_list.empty()
                                       ? BucketCaps(meta.bucket_cap_bytes, meta.first_bucket_cap_bytes)
                                       : BucketCaps::list(meta.bucket_cap_bytes_list);
  const std::vector<PlannedBucket> plan = plan_buckets_from_recorded(recorded, recorded_caps, caps);

  WorkloadModel result = model;
  result.buckets.clear();
  result.bucket_bytes.clear();
  result.source_meta.parameters.clear();
  for (std::size_t j = 0; j < plan.size(); ++j) {
    trace::Parameter pseudo;
    pseudo.index = static_cast<int>(j);
    pseudo.name = "bucket" + std::to_string(j) + ".allreduce";
    pseudo.dtype = recorded[static_cast<std::size_t>(plan[j].front().recorded)].dtype;
    double wire = 0;
    for (const BucketPiece& piece : plan[j]) {
      const auto k = static_cast<std::size_t>(piece.recorded);
      pseudo.numel += piece.numel;
      const double share = recorded[k].numel > 0
                               ? static_cast<double>(piece.numel) / static_cast<double>(recorded[k].numel)
                               : 1.0;
      wire += static_cast<double>(model.bucket_bytes[k]) * share;
    }
    result.source_meta.parameters.push_back(pseudo);
    result.buckets.push_back({static_cast<int>(j)});
    result.bucket_bytes.push_back(std::llround(wire));
  }
  result.source_meta.bucket_cap_bytes = caps.bucket_cap_bytes;
  result.source_meta.first_bucket_cap_bytes = caps.first_bucket_cap_bytes;
  result.source_meta.bucket_cap_bytes_list = caps.cap_list_bytes;
  // The import says why it has no per-parameter records (e.g. a profile without shapes).
  const auto reason = model.source_meta.settings.find("parameters_reason");
  result.source_meta.settings["sim.rebucket"] =
      std::string(kApproximateRebucketNote) +
      (reason != model.source_meta.settings.end() && !reason->second.empty() ? ": " + reason->second : "");

  for (auto& per_rank : result.costs) {
    for (RankIterationCosts& costs : per_rank) {
      const std::vector<double> recorded_ready = costs.bucket_ready_s;
      const auto piece_ready = [&](const BucketPiece& piece) {
        const auto k = static_cast<std::size_t>(piece.recorded);
        if (k == 0) return recorded_ready[0];
        return recorded_ready[k - 1] + piece.end_fraction * (recorded_ready[k] - recorded_ready[k - 1]);
      };
      costs.bucket_ready_s.clear();
      for (const PlannedBucket& bucket : plan) {
        double ready = 0;
        for (const BucketPiece& piece : bucket) ready = std::max(ready, piece_ready(piece));
        costs.bucket_ready_s.push_back(ready);
        costs.backward_compute_s = std::max(costs.backward_compute_s, ready);
      }
      costs.grad_ready_s.assign(plan.size(), -1.0);  // still unknown
    }
  }
  return result;
}

}  // namespace ddpsim::sim
