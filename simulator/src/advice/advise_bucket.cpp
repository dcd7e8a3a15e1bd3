// Advice 1: the bucket cap of the largest paired gain over the trace's own, and as a second
// answer the best per-bucket list of caps (advise.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>

#include "ddpsim/sim/advise.hpp"
#include "ddpsim/sim/rebucket.hpp"
#include "stats.hpp"

namespace ddpsim::sim {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::int64_t bytes_of(double cap_mb) { return static_cast<std::int64_t>(cap_mb * kMiB); }

BucketCaps single_cap(const AdviceSetup& setup, double cap_mb) {
  return BucketCaps::for_cap(setup.model.source_meta, bytes_of(cap_mb));
}

struct Replayed {
  int buckets = 0;
  double median_s = 0;
  Interval interval;
  std::vector<double> replicate_medians_s;
};

// Bootstrapped replays of the model re-bucketed for `caps` (all `runs`).
Replayed replay_caps(const AdviceSetup& setup, const BucketCaps& caps, int runs, std::uint64_t seed) {
  const WorkloadModel model = rebucket(setup.model, caps);
  const std::vector<RunOutcome> outcomes = bootstrap_replays(model, setup.options, runs, seed);
  Replayed replayed;
  replayed.buckets = static_cast<int>(model.buckets.size());
  replayed.median_s = median_of(outcomes.front().iteration_times_s);
  const MedianInterval interval = median_interval({outcomes.begin() + 1, outcomes.end()});
  replayed.interval = {interval.low_s, interval.high_s};
  for (std::size_t run = 1; run < outcomes.size(); ++run) {
    replayed.replicate_medians_s.push_back(median_of(outcomes[run].iteration_times_s));
  }
  return replayed;
}

BucketCandidate replay_cap(const AdviceSetup& setup, double cap_mb, int runs, std::uint64_t seed) {
  const Replayed replayed = replay_caps(setup, single_cap(setup, cap_mb), runs, seed);
  BucketCandidate candidate;
  candidate.cap_mb = cap_mb;
  candidate.buckets = replayed.buckets;
  candidate.median_s = replayed.median_s;
  candidate.median_interval_s = replayed.interval;
  candidate.replicate_medians_s = replayed.replicate_medians_s;
  return candidate;
}

BucketCaps list_caps(const std::vector<double>& caps_mb) {
  std::vector<std::int64_t> bytes;
  for (double cap_mb : caps_mb) bytes.push_back(bytes_of(cap_mb));
  return BucketCaps::list(std::move(bytes));
}

// The second answer: every list of the family re-bucketed; one in-order replay per distinct
// layout (lists with the same layout predict the same); the fastest bootstrapped like a
// single cap and compared with the best single cap.
BucketListAdvice search_lists(const AdviceSetup& setup, const std::vector<double>& caps_mb, const BucketCandidate& best_single,
                              int runs, std::uint64_t seed) {
  BucketListAdvice advice;
  const std::vector<std::vector<double>> family = bucket_list_family(caps_mb);
  std::ostringstream description;
  description << "[S]*k + [L]: the first k buckets capped at S, the rest at L; S in {";
  for (std::size_t i = 0; i < kListSmallCapsMb.size(); ++i) description << (i > 0 ? ", " : "") << kListSmallCapsMb[i];
  description << "} MiB, k in 1.." << kListMaxSmallBuckets << ", L any single cap searched above S";
  advice.family = description.str();
  advice.lists = static_cast<int>(family.size());
  if (family.empty()) return advice;
  advice.searched = true;
  std::map<std::vector<std::vector<int>>, std::size_t> seen;  // layout -> its candidate
  for (const std::vector<double>& caps : family) {
    const WorkloadModel model = rebucket(setup.model, list_caps(caps));
    if (seen.count(model.buckets)) continue;
    seen.emplace(model.buckets, advice.candidates.size());
    BucketListCandidate candidate;
    candidate.caps_mb = caps;
    candidate.buckets = static_cast<int>(model.buckets.size());
    // Run 0 of bootstrap_replays: the trace's iterations in order, as every candidate's median.
    candidate.median_s = median_of(bootstrap_replays(model, setup.options, 1, seed).front().iteration_times_s);
    advice.candidates.push_back(candidate);
  }
  advice.distinct_layouts = static_cast<int>(advice.candidates.size());
  // Fastest first; ties keep the family's order (fewer small buckets, smaller caps first).
  std::stable_sort(advice.candidates.begin(), advice.candidates.end(),
                   [](const BucketListCandidate& a, const BucketListCandidate& b) { return a.median_s < b.median_s; });
  advice.best = advice.candidates.front();
  const Replayed best = replay_caps(setup, list_caps(advice.best.caps_mb), runs, seed);
  advice.best.median_interval_s = best.interval;
  advice.best.replicate_medians_s = best.replicate_medians_s;
  advice.candidates.front().median_interval_s = best.interval;
  const PairedGain gain = paired_gain(best_single.replicate_medians_s, best.replicate_medians_s);
  advice.gain = gain.gain;
  advice.gain_interval = gain.interval;
  // The same rule as the single cap's: within the noise (or no better), keep one cap.
  advice.keep = !bucket_gain_worth_it(gain.gain, gain.interval);
  return advice;
}

}  // namespace

PairedGain paired_gain(const std::vector<double>& own_replicates_s, const std::vector<double>& other_replicates_s) {
  std::vector<double> gains;
  for (std::size_t k = 0; k < std::min(own_replicates_s.size(), other_replicates_s.size()); ++k) {
    if (own_replicates_s[k] > 0) gains.push_back(1 - other_replicates_s[k] / own_replicates_s[k]);
  }
  PairedGain paired;
  paired.pairs = static_cast<int>(gains.size());
  if (gains.empty()) return paired;
  // percentile_of's 0.5 is median_of, so the median lies between the interval's percentiles.
  paired.gain = median_of(gains);
  paired.interval = interval_of(gains);
  return paired;
}

Interval widened_gain(const Interval& gain_interval, const RunToRunSpread& spread) {
  return {1 - (1 - gain_interval.low) * spread.ratio_high, 1 - (1 - gain_interval.high) * spread.ratio_low};
}

void widen_by_drift(BucketAdvice& advice, const RunToRunSpread& spread) {
  advice.drift = spread;
  if (!advice.available) return;
  const bool own_is_a_candidate = advice.own_caps_mb.empty();
  for (BucketCandidate& candidate : advice.candidates) {
    if (own_is_a_candidate && std::abs(candidate.cap_mb - advice.own_cap_mb) < 1e-9) continue;
    candidate.drift_gain_interval = widened_gain(candidate.gain_interval, spread);
  }
  if (advice.best.gain > 0) {  // a candidate replaced the own cap as best (advise_bucket_cap)
    advice.best.drift_gain_interval = widened_gain(advice.best.gain_interval, spread);
    advice.drift_gain_interval = advice.best.drift_gain_interval;
  }
  if (advice.list.searched) advice.list.drift_gain_interval = widened_gain(advice.list.gain_interval, spread);
}

std::vector<std::vector<double>> bucket_list_family(const std::vector<double>& caps_mb) {
  std::vector<std::vector<double>> family;
  for (double small : kListSmallCapsMb) {
    for (int k = 1; k <= kListMaxSmallBuckets; ++k) {
      for (double large : caps_mb) {
        if (large <= small) continue;
        std::vector<double> list(static_cast<std::size_t>(k), small);
        list.push_back(large);
        family.push_back(std::move(list));
      }
    }
  }
  return family;
}

BucketAdvice advise_bucket_cap(const AdviceSetup& setup, std::vector<double> caps_mb, int runs, std::uint64_t seed,
                               bool search_lists_too) {
  BucketAdvice advice;
  const auto& meta = setup.model.source_meta;
  advice.model = setup.model_description + "; re-bucketed with c10d's rule from the measured gradient times, first bucket " +
                 (meta.first_bucket_cap_bytes == meta.bucket_cap_bytes
                      ? std::string("capped like the others (as in the trace)")
                      : "at the trace's " + std::to_string(static_cast<double>(meta.first_bucket_cap_bytes) / kMiB).substr(0, 4) + " MiB");
  const auto& settings = meta.settings;
  const auto parameters = settings.find("parameters");
  if (parameters != settings.end() && parameters->second == "per-bucket") {
    const auto reason = settings.find("parameters_reason");
    advice.unavailable_reason =
        "the trace has one pseudo-parameter per bucket (a profiler import): no per-parameter sizes to re-bucket" +
        (reason != settings.end() && !reason->second.empty() ? " (" + reason->second + ")" : std::string());
    return advice;
  }
  advice.own_cap_mb = static_cast<double>(meta.bucket_cap_bytes) / kMiB;
  for (std::int64_t bytes : meta.bucket_cap_bytes_list) advice.own_caps_mb.push_back(static_cast<double>(bytes) / kMiB);
  if (caps_mb.empty()) caps_mb = kDefaultBucketCapsMb;
  std::sort(caps_mb.begin(), caps_mb.end());
  caps_mb.erase(std::unique(caps_mb.begin(), caps_mb.end()), caps_mb.end());
  try {
    if (advice.own_caps_mb.empty()) {
      advice.own = replay_cap(setup, advice.own_cap_mb, runs, seed);
    } else {
      // A trace recorded with a list: its own layout is the list's.
      const Replayed own = replay_caps(setup, list_caps(advice.own_caps_mb), runs, seed);
      advice.own.cap_mb = advice.own_cap_mb;
      advice.own.buckets = own.buckets;
      advice.own.median_s = own.median_s;
      advice.own.median_interval_s = own.interval;
      advice.own.replicate_medians_s = own.replicate_medians_s;
    }
    for (double cap_mb : caps_mb) {
      advice.candidates.push_back(advice.own_caps_mb.empty() && std::abs(cap_mb - advice.own_cap_mb) < 1e-9
                                      ? advice.own
                                      : replay_cap(setup, cap_mb, runs, seed));
    }
  } catch (const WorkloadError& error) {
    advice.unavailable_reason = error.what();
    advice.candidates.clear();
    return advice;
  }
  advice.available = true;
  // Paired: replicate k of every candidate resampled the same iterations. The own cap's gain is
  // 0 with the interval [0, 0]; the best is the largest gain, the first (smallest cap) on a tie.
  advice.best = advice.own;
  for (BucketCandidate& candidate : advice.candidates) {
    if (advice.own_caps_mb.empty() && std::abs(candidate.cap_mb - advice.own_cap_mb) < 1e-9) continue;
    const PairedGain gain = paired_gain(advice.own.replicate_medians_s, candidate.replicate_medians_s);
    candidate.gain = gain.gain;
    candidate.gain_interval = gain.interval;
    if (candidate.gain > advice.best.gain) advice.best = candidate;
  }
  advice.gain = advice.best.gain;
  advice.gain_interval = advice.best.gain_interval;
  advice.keep = !bucket_gain_worth_it(advice.gain, advice.gain_interval);
  advice.recommended_cap_mb = advice.keep ? advice.own_cap_mb : advice.best.cap_mb;
  if (search_lists_too) advice.list = search_lists(setup, caps_mb, advice.best, runs, seed);
  return advice;
}

}  // namespace ddpsim::sim
