// Advice 1: the bucket cap of the lowest predicted median iteration (advise.hpp).
#include <algorithm>
#include <cmath>
#include <string>

#include "ddpsim/sim/advise.hpp"
#include "ddpsim/sim/rebucket.hpp"
#include "stats.hpp"

namespace ddpsim::sim {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

BucketCandidate replay_cap(const AdviceSetup& setup, double cap_mb, int runs, std::uint64_t seed) {
  BucketCaps caps;
  caps.bucket_cap_bytes = static_cast<std::int64_t>(cap_mb * kMiB);
  // A trace whose first bucket had the same cap as the others (--first-bucket-cap-mb = cap)
  // keeps them equal; otherwise the first bucket keeps the trace's cap (DDP's 1 MiB default).
  const auto& meta = setup.model.source_meta;
  caps.first_bucket_cap_bytes =
      meta.first_bucket_cap_bytes == meta.bucket_cap_bytes ? caps.bucket_cap_bytes : meta.first_bucket_cap_bytes;
  const WorkloadModel model = rebucket(setup.model, caps);
  const std::vector<RunOutcome> outcomes = bootstrap_replays(model, setup.options, runs, seed);
  BucketCandidate candidate;
  candidate.cap_mb = cap_mb;
  candidate.buckets = static_cast<int>(model.buckets.size());
  candidate.median_s = median_of(outcomes.front().iteration_times_s);
  const MedianInterval interval = median_interval({outcomes.begin() + 1, outcomes.end()});
  candidate.median_interval_s = {interval.low_s, interval.high_s};
  return candidate;
}

}  // namespace

BucketAdvice advise_bucket_cap(const AdviceSetup& setup, std::vector<double> caps_mb, int runs, std::uint64_t seed) {
  BucketAdvice advice;
  advice.model = setup.model_description + "; re-bucketed with c10d's rule from the measured gradient times, first bucket " +
                 (setup.model.source_meta.first_bucket_cap_bytes == setup.model.source_meta.bucket_cap_bytes
                      ? std::string("capped like the others (as in the trace)")
                      : "at the trace's " + std::to_string(static_cast<double>(setup.model.source_meta.first_bucket_cap_bytes) / kMiB).substr(0, 4) + " MiB");
  const auto& settings = setup.model.source_meta.settings;
  const auto parameters = settings.find("parameters");
  if (parameters != settings.end() && parameters->second == "per-bucket") {
    advice.unavailable_reason = "the trace has one pseudo-parameter per bucket (a profiler import): no per-parameter sizes to re-bucket";
    return advice;
  }
  advice.own_cap_mb = static_cast<double>(setup.model.source_meta.bucket_cap_bytes) / kMiB;
  if (caps_mb.empty()) caps_mb = kDefaultBucketCapsMb;
  std::sort(caps_mb.begin(), caps_mb.end());
  caps_mb.erase(std::unique(caps_mb.begin(), caps_mb.end()), caps_mb.end());
  try {
    advice.own = replay_cap(setup, advice.own_cap_mb, runs, seed);
    for (double cap_mb : caps_mb) {
      advice.candidates.push_back(std::abs(cap_mb - advice.own_cap_mb) < 1e-9 ? advice.own
                                                                             : replay_cap(setup, cap_mb, runs, seed));
    }
  } catch (const WorkloadError& error) {
    advice.unavailable_reason = error.what();
    advice.candidates.clear();
    return advice;
  }
  advice.available = true;
  advice.best = advice.own;
  for (const BucketCandidate& candidate : advice.candidates) {
    if (candidate.median_s < advice.best.median_s) advice.best = candidate;
  }
  advice.gain = advice.own.median_s > 0 ? 1 - advice.best.median_s / advice.own.median_s : 0;
  const Interval& own = advice.own.median_interval_s;
  const Interval& best = advice.best.median_interval_s;
  advice.keep = best.high >= own.low && own.high >= best.low;
  advice.recommended_cap_mb = advice.keep ? advice.own_cap_mb : advice.best.cap_mb;
  return advice;
}

}  // namespace ddpsim::sim
