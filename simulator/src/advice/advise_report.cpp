// What `ddp-sim advise` prints and writes with --json (advise.hpp).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "ddpsim/sim/advise.hpp"
#include "ddpsim/sim/run_to_run.hpp"

namespace ddpsim::sim {

namespace {

std::string format(const char* pattern, double value) {
  if (std::isnan(value)) return "n/a";
  char text[96];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string interval_ms(const Interval& interval) {
  return "[" + format("%.3f", interval.low * 1e3) + ", " + format("%.3f", interval.high * 1e3) + "]";
}

nlohmann::json number(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr); }

nlohmann::json interval_json(const Interval& interval) { return {number(interval.low), number(interval.high)}; }

nlohmann::json candidate_json(const BucketCandidate& candidate) {
  nlohmann::json json = {{"bucket_cap_mb", candidate.cap_mb},
          {"buckets", candidate.buckets},
          {"median_iteration_s", number(candidate.median_s)},
          {"interval_s", interval_json(candidate.median_interval_s)},
          {"gain", number(candidate.gain)},
          {"gain_interval", interval_json(candidate.gain_interval)}};
  if (candidate.drift_gain_interval) json["drift_gain_interval"] = interval_json(*candidate.drift_gain_interval);
  return json;
}

// A gain interval in percent: "[-2.7, +3.0]".
std::string percent_interval(const Interval& interval) {
  return "[" + format("%+.1f", 100 * interval.low) + ", " + format("%+.1f", 100 * interval.high) + "]";
}

// Where the gain intervals' width comes from: the replicates alone, or widened by the drift
// between the trace's runs (advise --repeats, widen_by_drift).
std::string drift_text(const BucketAdvice& advice) {
  if (!advice.drift) {
    return "  a run at the new cap against a run at yours will differ by more: the paired interval holds the "
           "recorded iterations' noise only; give --repeats (other runs of this configuration) for the drift "
           "between runs\n";
  }
  const RunToRunSpread& drift = *advice.drift;
  std::string text = "  drift between " + std::to_string(drift.runs) +
                     " runs of this configuration (the trace and its --repeats; one run's median over another's: " +
                     format("%.3f", drift.ratio_low) + "-" + format("%.3f", drift.ratio_high) + ")";
  if (advice.drift_gain_interval) {
    text += ": a run at " + format("%g", advice.best.cap_mb) + " MiB against a run at yours should gain within " +
            percent_interval(*advice.drift_gain_interval) + " %";
  }
  return text + "\n";
}

// "  [-5.8, +8.9]": a gain interval widened by the drift between runs, or "" without one.
std::string drift_interval_text(const std::optional<Interval>& interval) {
  return interval ? "  " + percent_interval(*interval) : "";
}

// A paired gain as "+1.6 % [-2.7, +3.0]" (advise.hpp's paired_gain).
std::string gain_text(double gain, const Interval& interval) {
  return format("%+.1f", 100 * gain) + " % " + percent_interval(interval);
}

nlohmann::json cost_json(const RankCost& cost) {
  nlohmann::json json = {{"per_iteration_s", number(cost.per_iteration_s)},
                         {"interval_s", interval_json(cost.per_iteration_interval_s)},
                         {"total_s", number(cost.total_s)},
                         {"fraction", number(cost.fraction)}};
  if (cost.rank >= 0) {
    json["rank"] = cost.rank;
    json["excess_interval_s"] = interval_json(cost.excess_interval_s);
    json["excess_fraction"] = number(cost.excess_fraction);
    json["alone_fraction"] = number(cost.alone_fraction);
    json["alone_excess_interval_s"] = interval_json(cost.alone_excess_interval_s);
    json["alone_excess_fraction"] = number(cost.alone_excess_fraction);
    json["straggler"] = cost.straggler;
  }
  return json;
}

nlohmann::json kind_json(const CollectiveWaits& kind) {
  nlohmann::json waits = nlohmann::json::array();
  for (double wait : kind.waits_s) waits.push_back(number(wait));
  nlohmann::json json = {{"kind", kind.kind},
                         {"what", kind.what},
                         {"bound", kind.bound},
                         {"observations", kind.waits_s.size()},
                         {"waits_s", waits},
                         {"wait_p50_s", number(kind.p50_s)},
                         {"wait_max_s", number(kind.max_s)},
                         {"occurrences_per_iteration", number(kind.occurrences_per_iteration)},
                         {"floor_s", number(kind.floor_s)},
                         {"phase_max_s", number(kind.phase_max_s)},
                         {"fitted", kind.fitted},
                         {"probability_per_occurrence", number(kind.probability)},
                         {"needed_s", number(kind.needed_s)}};
  if (kind.fitted) {
    json["tail"] = {{"threshold_s", number(kind.tail_threshold_s)},
                    {"scale_s", number(kind.tail_scale_s)},
                    {"scale_upper_s", number(kind.tail_scale_upper_s)},
                    {"exceedances", kind.exceedances},
                    {"timeout_s", number(kind.tail_s)},
                    {"extrapolated", kind.extrapolated},
                    {"iterations_to_support", number(kind.iterations_to_support)}};
  }
  return json;
}

std::string list_text(const std::vector<double>& caps_mb) {
  std::ostringstream text;
  for (std::size_t i = 0; i < caps_mb.size(); ++i) text << (i > 0 ? "," : "") << caps_mb[i];
  return text.str();
}

nlohmann::json list_candidate_json(const BucketListCandidate& candidate, bool with_interval) {
  nlohmann::json json = {{"bucket_caps_mb", candidate.caps_mb},
                         {"buckets", candidate.buckets},
                         {"median_iteration_s", number(candidate.median_s)}};
  if (with_interval) json["interval_s"] = interval_json(candidate.median_interval_s);
  return json;
}

// The second answer: the best per-bucket list of caps against the best single cap.
void list_answer_text(const BucketAdvice& advice, std::ostringstream& text) {
  const BucketListAdvice& list = advice.list;
  text << "  per-bucket list of caps (second answer, DDP's bucket_cap_mb_list / ddp-train --bucket-caps-mb)\n";
  text << "    searched: " << list.family << ": " << list.lists << " lists, " << list.distinct_layouts
       << " distinct layouts (each replayed in order; the fastest bootstrapped)\n";
  if (!list.searched) {
    text << "    nothing to search: no single cap above the small caps\n";
    return;
  }
  const std::size_t shown = std::min<std::size_t>(5, list.candidates.size());
  text << "    fastest " << shown << ": ";
  for (std::size_t i = 0; i < shown; ++i) {
    text << (i > 0 ? "; " : "") << "[" << list_text(list.candidates[i].caps_mb) << "] "
         << format("%.3f", list.candidates[i].median_s * 1e3) << " ms";
  }
  text << "\n";
  text << "    best list [" << list_text(list.best.caps_mb) << "] MiB (" << list.best.buckets << " buckets): "
       << format("%.3f", list.best.median_s * 1e3) << " ms " << interval_ms(list.best.median_interval_s)
       << "; best single cap " << format("%g", advice.best.cap_mb) << " MiB: " << format("%.3f", advice.best.median_s * 1e3)
       << " ms " << interval_ms(advice.best.median_interval_s) << ", gain " << gain_text(list.gain, list.gain_interval)
       << " (paired)" << (list.drift_gain_interval ? "; with the drift between runs " + percent_interval(*list.drift_gain_interval) + " %" : "")
       << "\n";
  if (list.keep) {
    text << "    keep one cap: bucket_cap_mb=" << format("%g", advice.recommended_cap_mb)
         << " (a list gains nothing worth it: the paired gain's interval reaches 0, or the gain is below "
         << format("%g", 100 * kMinBucketGain) << " %)\n";
  } else {
    text << "    recommended: bucket_cap_mb_list=[" << list_text(list.best.caps_mb) << "] (ddp-train --bucket-caps-mb "
         << list_text(list.best.caps_mb) << "; expected " << format("%.1f", 100 * list.gain)
         << " % shorter median iteration than the best single cap)\n";
  }
}

void bucket_text(const BucketAdvice& advice, const std::string& network_note, std::ostringstream& text) {
  text << "bucket size\n  model: " << advice.model << "\n";
  if (!advice.available) {
    text << "  not available: " << advice.unavailable_reason << "\n";
    return;
  }
  text << "  cap (MiB)  buckets  median (ms)  90 % interval (ms)  gain over the trace's, paired [90 %]"
       << (advice.drift ? "  [with the drift between runs]" : "") << "\n";
  for (const BucketCandidate& candidate : advice.candidates) {
    char row[200];
    const bool own = std::abs(candidate.cap_mb - advice.own_cap_mb) < 1e-9;
    std::snprintf(row, sizeof row, "  %9g  %7d  %11.3f  %-18s  %s\n", candidate.cap_mb, candidate.buckets,
                  candidate.median_s * 1e3, interval_ms(candidate.median_interval_s).c_str(),
                  own && advice.own_caps_mb.empty()
                      ? "(the trace's)"
                      : (gain_text(candidate.gain, candidate.gain_interval) + drift_interval_text(candidate.drift_gain_interval) +
                         (own ? "  (the trace's)" : ""))
                            .c_str());
    text << row;
  }
  if (!advice.own_caps_mb.empty()) {
    text << "  the trace was recorded with the list [" << list_text(advice.own_caps_mb) << "] MiB (its layout is \"the trace's\" below)\n";
  }
  text << "  the trace's cap " << format("%g", advice.own_cap_mb) << " MiB: " << format("%.3f", advice.own.median_s * 1e3)
       << " ms " << interval_ms(advice.own.median_interval_s) << "; best " << format("%g", advice.best.cap_mb)
       << " MiB: " << format("%.3f", advice.best.median_s * 1e3) << " ms " << interval_ms(advice.best.median_interval_s)
       << ", gain " << gain_text(advice.gain, advice.gain_interval) << " (paired: the median and 90 % interval of the "
       << "replicates' 1 - best / own)\n";
  text << drift_text(advice);
  // The answer's own line says when it rests on a network fitted to too few sizes.
  const std::string note = network_note.empty() ? "" : "  <- " + network_note;
  if (advice.keep) {
    text << "  keep what you have: bucket_cap_mb=" << format("%g", advice.recommended_cap_mb)
         << " (the gain is within the noise or too small: its paired interval reaches 0, or it is below "
         << format("%g", 100 * kMinBucketGain) << " %)" << note << "\n";
  } else {
    text << "  recommended: bucket_cap_mb=" << format("%g", advice.recommended_cap_mb) << " (expected "
         << format("%.1f", 100 * advice.gain) << " % shorter median iteration)" << note << "\n";
  }
  if (advice.list.lists > 0 || advice.list.searched) list_answer_text(advice, text);
}

void timeout_text(const TimeoutAdvice& advice, std::ostringstream& text) {
  text << "\ntimeout\n  model: " << advice.model << "\n";
  if (!advice.available) {
    text << "  not available: " << advice.unavailable_reason << "\n";
    return;
  }
  text << "  P(false timeout) <= " << advice.epsilon << " per day of " << format("%.0f", advice.iterations_per_day)
       << " iterations" << (advice.iterations_per_day_assumed ? " (assumed: 86400 s / the measured median iteration; "
                                                               "set --iterations-per-day)"
                                                             : "")
       << ", split over the fitted kinds; gradient all-reduces <= " << format("%.3g", advice.per_iteration_probability)
       << " per iteration\n";
  text << "  longest all-reduce wait per iteration over " << advice.wait_samples << " iterations: median "
       << format("%.3f", advice.wait_p50_s * 1e3) << " ms, max " << format("%.3f", advice.wait_max_s * 1e3) << " ms";
  if (advice.stall_dist.empty()) {
    if (advice.tail_fitted) {
      text << "; tail above " << format("%.3f", advice.tail_threshold_s * 1e3) << " ms with scale "
           << format("%.3f", advice.tail_scale_s * 1e3) << " ms\n";
    } else {
      text << "; too few to fit a tail\n";
    }
    text << "  stall model: observed (the trace's own waits; give one with --stall-dist)\n";
  } else {
    std::string given;
    for (const std::string& dist : advice.stall_dist) given += (given.empty() ? "" : ", ") + dist;
    text << "\n  stall model: given (" << given << "), not the trace's stalls: a stall longer than "
         << format("%.3f", advice.stall_quantile_s * 1e3) << " ms has that per-iteration probability; timeout = median wait "
         << format("%.3f", advice.wait_p50_s * 1e3) << " ms + that stall\n";
    if (advice.measured_exceeds) {
      text << "  note: the trace's longest wait (" << format("%.3f", advice.wait_max_s * 1e3)
           << " ms) exceeds this timeout: the given model is lighter than what was measured\n";
    }
  }
  text << "  every collective the trace shows (need: " << format("%g", kFloorFactor)
       << "x the longest wait; with >= " << kMinTailObservations << " waits also the tail at "
       << format("%g", 100 * advice.confidence) << " % confidence on its scale; with fewer, "
       << format("%g", kFloorFactor) << "x the longest phase around it)\n";
  text << "    kind                 waits  median (ms)    max (ms)  phase (ms)  upper scale (ms)  need (ms)\n";
  for (const CollectiveWaits& kind : advice.kinds) {
    char row[240];
    std::snprintf(row, sizeof row, "    %-19s  %5zu  %11.3f  %10.3f  %10s  %16s  %9.3f%s%s\n", kind.kind.c_str(),
                  kind.waits_s.size(), kind.p50_s * 1e3, kind.max_s * 1e3,
                  kind.phase_max_s > 0 ? format("%.3f", kind.phase_max_s * 1e3).c_str() : "-",
                  kind.fitted ? format("%.3f", kind.tail_scale_upper_s * 1e3).c_str() : "-", kind.needed_s * 1e3,
                  kind.bound ? "  (bound)" : "", kind.kind == advice.limiting_kind ? "  <- the timeout" : "");
    text << row;
  }
  for (const UnaccountedKind& kind : advice.unaccounted) text << "  unaccounted: " << kind.kind << ": " << kind.reason << "\n";
  for (const std::string& assumption : advice.assumes) text << "  assumes: " << assumption << "\n";
  for (const std::string& warning : advice.warnings) text << "  warning: " << warning << "\n";
  text << "  " << timeout_line(advice.timeout_s) << "\n";
  text << "  a hung rank is detected within " << format("%.3f", advice.detection_time_s) << " s (the timeout + "
       << format("%.3f", advice.longest_between_collectives_s)
       << " s, the longest a rank runs between collectives); replayed, a hung rank " << advice.hang_rank << " is detected "
       << format("%.3f", advice.time_to_detect_s) << " s after it stops; the trace replayed with this timeout "
       << (advice.replay_survives ? "completes" : "FAILS") << "\n";
}

void stragglers_text(const StragglerAdvice& advice, std::ostringstream& text) {
  text << "\nstragglers\n  model: " << advice.model << "\n";
  text << "  cost = iteration time saved when the rank computes like the typical rank (replayed mean "
       << format("%.3f", advice.replayed_mean_s * 1e3) << " ms)\n";
  text << "  rank  per iteration (ms)  90 % interval (ms)    total over " << advice.iterations
       << " iterations (s)  share  alone\n";
  std::string named;
  for (const RankCost& cost : advice.ranks) {
    char row[200];
    std::snprintf(row, sizeof row, "  %4d  %18.3f  %-20s  %27.4f  %5.1f %%  %5.1f %%%s\n", cost.rank,
                  cost.per_iteration_s * 1e3, interval_ms(cost.per_iteration_interval_s).c_str(), cost.total_s,
                  100 * cost.fraction, 100 * cost.alone_fraction, cost.straggler ? "  straggler" : "");
    text << row;
    if (cost.straggler) named += (named.empty() ? "" : ", ") + std::to_string(cost.rank);
  }
  char row[200];
  std::snprintf(row, sizeof row, "   all  %18.3f  %-20s  %27.4f  %5.1f %%\n", advice.all.per_iteration_s * 1e3,
                interval_ms(advice.all.per_iteration_interval_s).c_str(), advice.all.total_s, 100 * advice.all.fraction);
  text << row;
  text << "  stragglers: " << (named.empty() ? "none" : "rank " + named)
       << " (a straggler's cost interval excludes 0 and the typical rank's cost, and it exceeds the typical "
       << "rank's cost by >= " << format("%.0f", 100 * kMinStragglerShare)
       << " % of the iteration; among the others as recorded, or alone: the others made typical)\n";
}

std::string runs_text(const std::vector<double>& values, const char* pattern) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + format(pattern, values[i]);
  return text;
}

std::string ranks_text(const std::vector<int>& ranks) {
  if (ranks.empty()) return "none";
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "rank ") + std::to_string(ranks[i]);
  return text;
}

void across_runs_text(const AdviceAcrossRuns& across, std::ostringstream& text) {
  const std::size_t runs = across.trace_dirs.size();
  const std::string of_runs = " of " + std::to_string(runs) + " runs";
  text << "\nacross " << runs << " runs of this configuration (this trace, then --repeats; what changes "
       << "between them is the machine's drift, not the job)\n";
  text << "  bucket cap   " << runs_text(across.recommended_caps_mb, "%g") << " MiB: the advised run's "
       << format("%g", across.recommended_caps_mb.front()) << " MiB in " << across.runs_with_advised_cap << of_runs
       << "\n";
  text << "  timeout      " << runs_text(across.timeouts_s, "%.3f") << " s";
  if (std::isnan(across.safe_timeout_s)) {
    text << ": no run could advise one\n";
  } else {
    text << ": " << timeout_line(across.safe_timeout_s) << " is long enough on every run\n";
  }
  text << "  stragglers  ";
  for (std::size_t i = 0; i < runs; ++i) text << (i ? "; " : " ") << ranks_text(across.stragglers[i]);
  bool any = false;
  for (std::size_t rank = 0; rank < across.straggler_runs.size(); ++rank) {
    if (across.straggler_runs[rank] == 0) continue;
    text << (any ? ", " : ": ") << "rank " << rank << " named in " << across.straggler_runs[rank] << of_runs;
    any = true;
  }
  text << (any ? "" : ": none in any run") << "\n";
}

nlohmann::json across_runs_json(const AdviceAcrossRuns& across) {
  nlohmann::json caps = nlohmann::json::array();
  for (double cap : across.recommended_caps_mb) caps.push_back(number(cap));
  nlohmann::json timeouts = nlohmann::json::array();
  for (double timeout : across.timeouts_s) timeouts.push_back(number(timeout));
  return {{"traces", across.trace_dirs},
          {"recommended_bucket_cap_mb", caps},
          {"runs_with_advised_cap", across.runs_with_advised_cap},
          {"timeout_s", timeouts},
          {"safe_timeout_s", number(across.safe_timeout_s)},
          {"stragglers", across.stragglers},
          {"straggler_runs", across.straggler_runs}};
}

}  // namespace

std::string advice_to_text(const Advice& advice) {
  std::ostringstream text;
  text << "ddp-sim advise " << advice.trace_dir << "\n";
  if (advice.pooled_runs > 0) {
    text << pooled_runs_to_text(advice.pooled_runs, advice.pooled_iterations)
         << "; the answers below are of them as one run\n";
  }
  text << "\n";
  if (!advice.few_iterations.empty()) text << "warning: " << advice.few_iterations << "\n";
  for (const std::string& lack : advice.import_lacks) text << "profiler import: " << lack << "\n";
  if (!advice.import_lacks.empty() || !advice.few_iterations.empty()) text << "\n";
  bucket_text(advice.bucket, advice.network_note, text);
  timeout_text(advice.timeout, text);
  stragglers_text(advice.stragglers, text);
  if (advice.across_runs) across_runs_text(*advice.across_runs, text);
  return text.str();
}

std::string advice_to_json(const Advice& advice) {
  nlohmann::json json;
  json["trace"] = advice.trace_dir;
  if (!advice.network_note.empty()) json["headline_note"] = advice.network_note;
  if (advice.pooled_runs > 0) json["pooled"] = {{"runs", advice.pooled_runs}, {"iterations", advice.pooled_iterations}};
  const BucketAdvice& bucket = advice.bucket;
  json["bucket"] = {{"available", bucket.available}, {"model", bucket.model}};
  if (bucket.available) {
    json["bucket"]["own"] = candidate_json(bucket.own);
    json["bucket"]["best"] = candidate_json(bucket.best);
    json["bucket"]["gain"] = number(bucket.gain);
    json["bucket"]["gain_interval"] = interval_json(bucket.gain_interval);
    json["bucket"]["keep"] = bucket.keep;
    json["bucket"]["recommended_bucket_cap_mb"] = bucket.recommended_cap_mb;
    if (bucket.drift_gain_interval) json["bucket"]["drift_gain_interval"] = interval_json(*bucket.drift_gain_interval);
    json["bucket"]["drift"] = bucket.drift ? nlohmann::json{{"runs", bucket.drift->runs},
                                                            {"level", bucket.drift->level},
                                                            {"ratio_low", number(bucket.drift->ratio_low)},
                                                            {"ratio_high", number(bucket.drift->ratio_high)}}
                                           : nlohmann::json(nullptr);
    json["bucket"]["candidates"] = nlohmann::json::array();
    for (const BucketCandidate& candidate : bucket.candidates) json["bucket"]["candidates"].push_back(candidate_json(candidate));
    if (!bucket.own_caps_mb.empty()) json["bucket"]["own_bucket_caps_mb"] = bucket.own_caps_mb;
    const BucketListAdvice& list = bucket.list;
    json["bucket"]["list"] = {{"searched", list.searched},
                              {"family", list.family},
                              {"lists", list.lists},
                              {"distinct_layouts", list.distinct_layouts}};
    if (list.searched) {
      json["bucket"]["list"]["best"] = list_candidate_json(list.best, true);
      json["bucket"]["list"]["gain_over_best_single_cap"] = number(list.gain);
      json["bucket"]["list"]["gain_interval"] = interval_json(list.gain_interval);
      if (list.drift_gain_interval) json["bucket"]["list"]["drift_gain_interval"] = interval_json(*list.drift_gain_interval);
      json["bucket"]["list"]["keep"] = list.keep;
      json["bucket"]["list"]["recommended_bucket_caps_mb"] =
          list.keep ? nlohmann::json(nullptr) : nlohmann::json(list.best.caps_mb);
      json["bucket"]["list"]["candidates"] = nlohmann::json::array();
      for (std::size_t i = 0; i < list.candidates.size(); ++i) {
        json["bucket"]["list"]["candidates"].push_back(list_candidate_json(list.candidates[i], i == 0));
      }
    }
  } else {
    json["bucket"]["reason"] = bucket.unavailable_reason;
  }
  const TimeoutAdvice& timeout = advice.timeout;
  json["timeout"] = {{"available", timeout.available},
                     {"model", timeout.model},
                     {"epsilon", timeout.epsilon},
                     {"iterations_per_day", number(timeout.iterations_per_day)},
                     {"iterations_per_day_assumed", timeout.iterations_per_day_assumed}};
  if (timeout.available) {
    json["timeout"].update({{"per_iteration_probability", number(timeout.per_iteration_probability)},
                            {"wait_samples", timeout.wait_samples},
                            {"wait_p50_s", number(timeout.wait_p50_s)},
                            {"wait_max_s", number(timeout.wait_max_s)},
                            {"tail_fitted", timeout.tail_fitted},
                            {"tail_threshold_s", number(timeout.tail_threshold_s)},
                            {"tail_scale_s", number(timeout.tail_scale_s)},
                            {"timeout_s", number(timeout.timeout_s)},
                            {"line", timeout_line(timeout.timeout_s)},
                            {"stall_model", timeout.stall_dist.empty() ? "observed" : "given"},
                            {"stall_dist", timeout.stall_dist},
                            {"stall_quantile_s", number(timeout.stall_quantile_s)},
                            {"measured_wait_exceeds_timeout", timeout.measured_exceeds},
                            {"hang_rank", timeout.hang_rank},
                            {"time_to_detect_s", number(timeout.time_to_detect_s)},
                            {"replay_survives", timeout.replay_survives},
                            {"limiting_kind", timeout.limiting_kind},
                            {"confidence", timeout.confidence},
                            {"longest_between_collectives_s", number(timeout.longest_between_collectives_s)},
                            {"detection_time_s", number(timeout.detection_time_s)},
                            {"extrapolated", timeout.extrapolated},
                            {"iterations_to_support", number(timeout.iterations_to_support)},
                            {"covers", timeout.covers},
                            {"assumes", timeout.assumes}});
    json["timeout"]["kinds"] = nlohmann::json::array();
    for (const CollectiveWaits& kind : timeout.kinds) json["timeout"]["kinds"].push_back(kind_json(kind));
  } else {
    json["timeout"]["reason"] = timeout.unavailable_reason;
  }
  json["timeout"]["warnings"] = timeout.warnings;
  json["timeout"]["unaccounted"] = nlohmann::json::array();
  for (const UnaccountedKind& kind : timeout.unaccounted) {
    json["timeout"]["unaccounted"].push_back({{"kind", kind.kind}, {"reason", kind.reason}});
  }
  if (!advice.import_lacks.empty()) json["import_lacks"] = advice.import_lacks;
  if (!advice.few_iterations.empty()) json["few_iterations"] = advice.few_iterations;
  const StragglerAdvice& stragglers = advice.stragglers;
  json["stragglers"] = {{"model", stragglers.model},
                        {"iterations", stragglers.iterations},
                        {"replayed_mean_iteration_s", number(stragglers.replayed_mean_s)},
                        {"all", cost_json(stragglers.all)},
                        {"ranks", nlohmann::json::array()},
                        {"named", nlohmann::json::array()}};
  for (const RankCost& cost : stragglers.ranks) {
    json["stragglers"]["ranks"].push_back(cost_json(cost));
    if (cost.straggler) json["stragglers"]["named"].push_back(cost.rank);
  }
  if (advice.across_runs) json["across_runs"] = across_runs_json(*advice.across_runs);
  return json.dump(2);
}

}  // namespace ddpsim::sim
