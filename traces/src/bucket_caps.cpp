// The bucket caps a recorded layout admits (bucket_caps.hpp).
#include "ddpsim/trace/bucket_caps.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

namespace ddpsim::trace {
namespace {

constexpr std::int64_t kMiB = 1024LL * 1024;

void narrow(CapRange& range, std::int64_t above, std::optional<std::int64_t> at_most) {
  range.constrained = true;
  range.above = std::max(range.above, above);
  if (at_most && (range.at_most < 0 || *at_most < range.at_most)) range.at_most = *at_most;
}

std::string mib(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", static_cast<double>(bytes) / static_cast<double>(kMiB));
  return text;
}

// A value in a non-empty range, preferring `preferred` in order, then the roundest size: the
// smallest multiple of 1 MiB in it, else of 1/2 MiB, 1/4, ... down to 1/64 MiB.
std::int64_t choose(const CapRange& range, const std::vector<std::int64_t>& preferred) {
  for (std::int64_t value : preferred) {
    if (range.contains(value)) return value;
  }
  for (std::int64_t step = kMiB; step >= kMiB / 64; step /= 2) {
    const std::int64_t value = (range.above / step + 1) * step;  // the first multiple above
    if (range.contains(value)) return value;
  }
  return range.at_most;
}

std::string describe_range(const CapRange& range) {
  if (!range.constrained) return "any";
  if (range.at_most < 0) return "any above " + mib(range.above);
  return "any in (" + mib(range.above) + ", " + mib(range.at_most) + "]";
}

}  // namespace

InferredCaps infer_bucket_caps(const std::vector<Parameter>& parameters, const BucketAssignment& layout) {
  InferredCaps caps;
  // Per dtype: its buckets in layout order (c10d keeps one limit iterator per dtype).
  std::map<std::string, std::vector<const std::vector<int>*>> by_dtype;
  for (const auto& bucket : layout.buckets) {
    // A parameter alone (Parameter::alone) neither fills its dtype's bucket nor moves its limit.
    if (bucket.empty() || (bucket.size() == 1 && parameters.at(static_cast<std::size_t>(bucket.front())).alone)) continue;
    by_dtype[parameters.at(static_cast<std::size_t>(bucket.front())).dtype].push_back(&bucket);
  }
  for (const auto& [dtype, buckets] : by_dtype) {
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      std::int64_t bytes = 0;
      for (int p : *buckets[i]) bytes += parameters.at(static_cast<std::size_t>(p)).bytes();
      const std::int64_t before_last = bytes - parameters.at(static_cast<std::size_t>(buckets[i]->back())).bytes();
      const bool closed = i + 1 < buckets.size();
      narrow(i == 0 ? caps.first : caps.cap, before_last, closed ? std::optional<std::int64_t>(bytes) : std::nullopt);
    }
  }
  caps.consistent = !caps.first.empty() && !caps.cap.empty();
  if (!caps.consistent) return caps;
  caps.cap_bytes = choose(caps.cap, {25 * kMiB});
  caps.first_bytes = choose(caps.first, {kMiB, caps.cap_bytes});
  return caps;
}

std::string InferredCaps::describe() const {
  if (!consistent) {
    return "no pair of caps gives the recorded buckets by DDP's rule (first bucket " + describe_range(first) +
           " MiB, later buckets " + describe_range(cap) + " MiB)";
  }
  const std::string caps_that_fit = cap.constrained ? describe_range(cap) + " MiB" : std::string("any cap");
  return "bucket_cap_mb " + mib(cap_bytes) + " (" + caps_that_fit + " gives the recorded buckets), " +
         "first bucket " + mib(first_bytes) + " MiB (" + describe_range(first) + ")";
}

}  // namespace ddpsim::trace
