#include "advice_read.hpp"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace ddpsim::experiment {
namespace {

using nlohmann::json;

std::optional<double> number_at(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return std::nullopt;
  return object[key].get<double>();
}

// A section advise answered: present, an object, and not "available": false.
const json* section(const json& root, const char* key) {
  if (!root.contains(key) || !root[key].is_object()) return nullptr;
  const json& s = root[key];
  if (s.contains("available") && s["available"].is_boolean() && !s["available"].get<bool>()) return nullptr;
  return &s;
}

// A [lo, hi] pair of numbers at `key`, if there is one.
std::optional<std::pair<double, double>> pair_at(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_array() || object[key].size() != 2 ||
      !object[key][0].is_number() || !object[key][1].is_number())
    return std::nullopt;
  return std::make_pair(object[key][0].get<double>(), object[key][1].get<double>());
}

// {"bucket_cap_mb", "buckets", "median_iteration_s", "interval_s": [lo, hi]}, one cap's replay,
// with its paired "gain" over the own cap and "gain_interval" when advise gives them.
struct CapAnswer {
  double cap_mb = 0;
  int buckets = 0;
  double median_s = 0;
  double lo_s = 0, hi_s = 0;
  std::optional<double> gain{};
  std::optional<std::pair<double, double>> gain_interval{};
  std::optional<std::pair<double, double>> drift_gain_interval{};
};
std::optional<CapAnswer> cap_answer(const json& object) {
  const auto cap = number_at(object, "bucket_cap_mb");
  const auto median = number_at(object, "median_iteration_s");
  if (!cap || !median || !object.contains("interval_s") || !object["interval_s"].is_array() ||
      object["interval_s"].size() != 2 || !object["interval_s"][0].is_number() || !object["interval_s"][1].is_number())
    return std::nullopt;
  const auto buckets = number_at(object, "buckets");
  return CapAnswer{*cap,
                   buckets ? static_cast<int>(*buckets) : 0,
                   *median,
                   object["interval_s"][0].get<double>(),
                   object["interval_s"][1].get<double>(),
                   number_at(object, "gain"),
                   pair_at(object, "gain_interval"),
                   pair_at(object, "drift_gain_interval")};
}

void read_timeout(const json& t, AdvisedValues& out) {
  out.timeout_s = number_at(t, "timeout_s");
  out.replayed_detect_s = number_at(t, "time_to_detect_s");
  out.detect_s = number_at(t, "detection_time_s");
  if (!out.detect_s) out.detect_s = out.replayed_detect_s;
  if (const auto rank = number_at(t, "hang_rank")) out.hang_rank = static_cast<int>(*rank);
}

// The gain of `other` over `own` and its interval: advise's own paired gain and interval when
// it gives them for that cap (the candidate's "gain" and "drift_gain_interval" -- where runs
// compared should fall, with --repeats -- else "gain_interval"; or the section's, of
// "best" over "own"), else 1 - other / own with the widest interval the two caps' intervals
// allow (each end against the other's far end, as if the two replays varied independently).
void read_bucket(const json& b, AdvisedValues& out) {
  const auto own = b.contains("own") ? cap_answer(b["own"]) : std::nullopt;
  out.advised_cap_mb = number_at(b, "recommended_bucket_cap_mb");
  if (b.contains("keep") && b["keep"].is_boolean()) out.keep = b["keep"].get<bool>();
  if (!own) return;
  out.own_cap_mb = own->cap_mb;
  std::optional<CapAnswer> other;
  if (out.keep == false && out.advised_cap_mb && b.contains("candidates") && b["candidates"].is_array()) {
    for (const auto& c : b["candidates"])
      if (auto a = cap_answer(c); a && a->cap_mb == *out.advised_cap_mb) other = a;
  } else if (b.contains("candidates") && b["candidates"].is_array()) {
    // "Keep yours": the fastest cap that buckets the gradients otherwise (caps with the
    // own bucket layout replay the same job).
    for (const auto& c : b["candidates"]) {
      auto a = cap_answer(c);
      if (!a || a->cap_mb == own->cap_mb || (a->buckets > 0 && a->buckets == own->buckets)) continue;
      if (!other || a->median_s < other->median_s) other = a;
    }
  }
  if (!other) return;
  out.compared_cap_mb = other->cap_mb;
  // advise's section "gain" / "gain_interval" are the paired gain of "best" over "own".
  const auto best = b.contains("best") ? cap_answer(b["best"]) : std::nullopt;
  out.predicted_gain = 1 - other->median_s / own->median_s;
  out.predicted_gain_interval = {1 - other->hi_s / own->lo_s, 1 - other->lo_s / own->hi_s};
  const auto section_interval = pair_at(b, "gain_interval");
  if (other->gain && other->gain_interval) {
    out.predicted_gain = other->gain;
    out.predicted_gain_interval = other->drift_gain_interval ? other->drift_gain_interval : other->gain_interval;
  } else if (best && best->cap_mb == other->cap_mb && section_interval) {
    if (const auto gain = number_at(b, "gain")) out.predicted_gain = gain;
    const auto section_drift = pair_at(b, "drift_gain_interval");
    out.predicted_gain_interval = section_drift ? section_drift : section_interval;
  }
}

void read_stragglers(const json& s, AdvisedValues& out) {
  if (!s.contains("named") || !s["named"].is_array()) return;
  std::vector<int> ranks;
  for (const auto& r : s["named"])
    if (r.is_number_integer()) ranks.push_back(r.get<int>());
  std::sort(ranks.begin(), ranks.end());
  out.named_stragglers = ranks;
}

}  // namespace

AdvisedValues read_advice(const std::string& json_text, const std::string& source) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception&) {  // a syntax error, or a number too large for a double
    throw std::runtime_error(source + ": expected ddp-sim advise's JSON, got text that is not JSON");
  }
  if (!root.is_object()) throw std::runtime_error(source + ": expected ddp-sim advise's JSON object, got another value");
  AdvisedValues out;
  if (const auto* t = section(root, "timeout")) read_timeout(*t, out);
  if (const auto* b = section(root, "bucket")) read_bucket(*b, out);
  if (const auto* s = section(root, "stragglers")) read_stragglers(*s, out);
  return out;
}

}  // namespace ddpsim::experiment
