// Re-bucketing what-if (rebucket.hpp).
#include "ddpsim/sim/rebucket.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "stats.hpp"

namespace ddpsim::sim {

std::vector<std::int64_t> BucketCaps::limits() const {
  if (!cap_list_bytes.empty()) return cap_list_bytes;
  return {first_bucket_cap_bytes, bucket_cap_bytes};
}

BucketCaps BucketCaps::single(std::int64_t cap_bytes) {
  BucketCaps caps;
  caps.bucket_cap_bytes = cap_bytes;
  caps.first_bucket_cap_bytes = cap_bytes;
  return caps;
}

BucketCaps BucketCaps::for_cap(const trace::RunMeta& meta, std::int64_t cap_bytes) {
  const bool first_like_the_others = meta.first_bucket_cap_bytes == meta.bucket_cap_bytes;
  return {cap_bytes, first_like_the_others ? cap_bytes : meta.first_bucket_cap_bytes};
}

BucketCaps BucketCaps::list(std::vector<std::int64_t> cap_list_bytes) {
  BucketCaps caps;
  caps.cap_list_bytes = std::move(cap_list_bytes);
  if (!caps.cap_list_bytes.empty()) {
    caps.bucket_cap_bytes = *std::max_element(caps.cap_list_bytes.begin(), caps.cap_list_bytes.end());
    caps.first_bucket_cap_bytes = caps.bucket_cap_bytes;
  }
  return caps;
}

std::vector<std::vector<int>> compute_bucket_assignment(const std::vector<trace::Parameter>& parameters,
                                                        const std::vector<int>& order, const BucketCaps& caps) {
  struct OpenBucket {
    std::vector<int> params;
    std::int64_t bytes = 0;
    std::size_t limit = 0;  // index into limits: c10d's per-dtype size-limit iterator
  };
  const std::vector<std::int64_t> limits = caps.limits();
  std::vector<std::vector<int>> closed;
  std::map<std::string, OpenBucket> open;  // per dtype
  std::vector<std::string> dtype_order;     // dtypes in order of first appearance
  for (int index : order) {
    const trace::Parameter& parameter = parameters.at(static_cast<std::size_t>(index));
    if (parameter.alone) {  // c10d: a sparse gradient's parameter is a bucket where it stands
      closed.push_back({index});
      continue;
    }
    if (!open.count(parameter.dtype)) dtype_order.push_back(parameter.dtype);
    OpenBucket& bucket = open[parameter.dtype];
    bucket.params.push_back(index);
    bucket.bytes += parameter.bytes();
    if (bucket.bytes >= limits.at(bucket.limit)) {
      closed.push_back(std::move(bucket.params));
      bucket.params.clear();
      bucket.bytes = 0;
      if (bucket.limit + 1 < limits.size()) ++bucket.limit;  // the last limit repeats
    }
  }
  // c10d appends the partly filled buckets by walking its std::unordered_map of open
  // buckets; libstdc++ links each new key in front of the earlier ones (when their hash
  // buckets differ), so the dtype seen last comes first. Only mixed-dtype models notice.
  for (auto dtype = dtype_order.rbegin(); dtype != dtype_order.rend(); ++dtype) {
    if (!open[*dtype].params.empty()) closed.push_back(std::move(open[*dtype].params));
  }
  return closed;
}

std::vector<int> gradient_ready_order(const WorkloadModel& model) {
  const std::vector<double>& ready = model.costs.at(0).at(0).grad_ready_s;
  const int num_params = static_cast<int>(model.source_meta.parameters.size());
  std::vector<int> order(static_cast<std::size_t>(num_params));
  std::iota(order.begin(), order.end(), 0);
  const auto ready_of = [&](int p) {
    const double t = static_cast<std::size_t>(p) < ready.size() ? ready[static_cast<std::size_t>(p)] : -1;
    return t < 0 ? 1e300 : t;
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (ready_of(a) != ready_of(b)) return ready_of(a) < ready_of(b);
    return a > b;
  });
  return order;
}

WorkloadModel rebucket(const WorkloadModel& model, const BucketCaps& caps) {
  if (caps.bucket_cap_bytes <= 0 || caps.first_bucket_cap_bytes <= 0) {
    throw WorkloadError("--bucket-cap-mb: expected positive bucket caps");
  }
  for (std::int64_t cap : caps.cap_list_bytes) {
    if (cap <= 0) throw WorkloadError("--bucket-caps-mb: expected positive bucket caps");
  }
  const auto& parameters = model.source_meta.parameters;
  for (const auto& per_rank : model.costs) {
    for (const auto& costs : per_rank) {
      for (std::size_t p = 0; p < parameters.size(); ++p) {
        if (p >= costs.grad_ready_s.size() || costs.grad_ready_s[p] < 0) {
          throw WorkloadError(model.source_dir + ": expected a grad_ready event for every parameter to re-bucket, got none for parameter " +
                              std::to_string(p) + " (" + parameters[p].name + ")");
        }
      }
    }
  }

  // Measured lag between a bucket's last gradient and its bucket_ready, and the wire ratio.
  std::vector<double> lags;
  std::int64_t wire_bytes = 0;
  std::int64_t parameter_bytes = 0;
  const trace::BucketAssignment measured_layout{0, model.buckets};
  for (std::size_t b = 0; b < model.buckets.size(); ++b) {
    wire_bytes += model.bucket_bytes[b];
    parameter_bytes += model.source_meta.bucket_bytes(measured_layout, static_cast<int>(b));
    for (const auto& per_rank : model.costs) {
      for (const auto& costs : per_rank) {
        double last = 0;
        for (int p : model.buckets[b]) last = std::max(last, costs.grad_ready_s[static_cast<std::size_t>(p)]);
        lags.push_back(std::max(0.0, costs.bucket_ready_s[b] - last));
      }
    }
  }
  const double lag_s = median_of(lags);
  const double wire_ratio = parameter_bytes > 0 ? static_cast<double>(wire_bytes) / static_cast<double>(parameter_bytes) : 1.0;

  WorkloadModel result = model;
  result.buckets = compute_bucket_assignment(parameters, gradient_ready_order(model), caps);
  result.source_meta.bucket_cap_bytes = caps.bucket_cap_bytes;
  result.source_meta.first_bucket_cap_bytes = caps.first_bucket_cap_bytes;
  result.source_meta.bucket_cap_bytes_list = caps.cap_list_bytes;
  const trace::BucketAssignment new_layout{0, result.buckets};
  result.bucket_bytes.clear();
  for (std::size_t b = 0; b < result.buckets.size(); ++b) {
    result.bucket_bytes.push_back(static_cast<std::int64_t>(
        static_cast<double>(result.source_meta.bucket_bytes(new_layout, static_cast<int>(b))) * wire_ratio));
  }
  for (auto& per_rank : result.costs) {
    for (auto& costs : per_rank) {
      costs.bucket_ready_s.clear();
      for (const auto& bucket : result.buckets) {
        double last = 0;
        for (int p : bucket) last = std::max(last, costs.grad_ready_s[static_cast<std::size_t>(p)]);
        costs.bucket_ready_s.push_back(last + lag_s);
        costs.backward_compute_s = std::max(costs.backward_compute_s, last + lag_s);
      }
    }
  }
  return result;
}

}  // namespace ddpsim::sim
