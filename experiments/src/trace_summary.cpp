#include "trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/stats.hpp"

namespace ddpsim::experiment {

namespace {

nlohmann::json parse_object(const std::string& json_text, const std::string& source, const char* what) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(source + ": expected " + what + ", got a parse error (" + std::string(e.what()) + ")");
  }
  if (!json.is_object()) throw std::runtime_error(source + ": expected a JSON object");
  return json;
}

// `json` is a trace::summary_to_json object; `where` prefixes the field names in errors.
TraceSummary summary_from_json(const nlohmann::json& json, const std::string& source, const std::string& where) {
  auto number = [&](const char* key) -> const nlohmann::json& {
    auto it = json.find(key);
    if (it == json.end() || !it->is_number())
      throw std::runtime_error(source + ": expected a number field '" + where + key + "'");
    return *it;
  };
  TraceSummary summary;
  summary.world_size = number("world_size").get<int>();
  summary.median_iteration_s = number("median_iteration_s").get<double>();
  if (auto it = json.find("num_complete_iterations"); it != json.end() && it->is_number()) {
    summary.complete_iterations = it->get<int>();
  } else if (auto list = json.find("iterations"); list != json.end() && list->is_array()) {
    summary.complete_iterations = static_cast<int>(list->size());
  }
  if (auto list = json.find("iterations"); list != json.end() && list->is_array()) {
    for (const auto& it : *list) {
      if (!it.is_object()) continue;
      const auto index = it.find("iteration");
      const auto time = it.find("time_s");
      if (time == it.end() || !time->is_number()) continue;
      if (index != it.end() && index->is_number() && index->get<double>() < 1) continue;
      summary.iteration_times_s.push_back(time->get<double>());
    }
  }
  if (auto it = json.find("failures"); it != json.end()) {
    if (!it->is_array()) throw std::runtime_error(source + ": expected '" + where + "failures' to be an array");
    for (const auto& failure : *it)
      summary.failures.push_back(failure.is_string() ? failure.get<std::string>() : failure.dump());
  }
  return summary;
}

}  // namespace

TraceSummary parse_trace_summary(const std::string& json_text, const std::string& source) {
  return summary_from_json(parse_object(json_text, source, "ddp-trace summary JSON"), source, "");
}

namespace {

// json[key].median_iteration_s = [lo, hi]; nullopt when the report has no `key`.
std::optional<std::pair<double, double>> median_interval_of(const nlohmann::json& json, const char* key,
                                                            const std::string& source) {
  const auto interval = json.find(key);
  if (interval == json.end()) return std::nullopt;
  const auto median = interval->is_object() ? interval->find("median_iteration_s") : interval->end();
  if (median == interval->end() || !median->is_array() || median->size() != 2 ||
      !(*median)[0].is_number() || !(*median)[1].is_number())
    throw std::runtime_error(source + ": expected " + key + ".median_iteration_s = [lo, hi]");
  return std::make_pair((*median)[0].get<double>(), (*median)[1].get<double>());
}

}  // namespace

ReplayReport parse_replay_report(const std::string& json_text, const std::string& source) {
  const nlohmann::json json = parse_object(json_text, source, "ddp-sim replay's JSON report");
  const auto predicted = json.find("predicted");
  if (predicted == json.end() || !predicted->is_object())
    throw std::runtime_error(source + ": expected an object 'predicted' (the predicted trace's summary)");
  ReplayReport report;
  report.predicted = summary_from_json(*predicted, source, "predicted.");
  const auto distribution = json.find("distribution");
  if (distribution != json.end() && distribution->is_object()) {
    const auto runs = distribution->find("runs");
    if (runs != distribution->end() && runs->is_number_integer()) report.runs = runs->get<int>();
    const auto times = distribution->find("iteration_times_s");
    if (times != distribution->end()) {
      if (!times->is_array()) throw std::runtime_error(source + ": expected distribution.iteration_times_s as an array");
      for (const auto& time : *times) {
        if (!time.is_number()) throw std::runtime_error(source + ": expected numbers in distribution.iteration_times_s");
        report.pooled_iteration_times_s.push_back(time.get<double>());
      }
    }
  }
  report.interval = median_interval_of(json, "interval", source);
  report.run_to_run_interval = median_interval_of(json, "run_to_run_interval", source);
  return report;
}

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  if (values.empty()) return std::nan("");
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t low = static_cast<size_t>(position);
  const size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (values[high] - values[low]) * (position - static_cast<double>(low));
}

DistributionErrors compare_distributions(const std::vector<double>& measured,
                                         const std::vector<double>& predicted) {
  std::vector<double> a = measured, b = predicted;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  DistributionErrors out;
  // The largest gap between the two empirical CDFs, evaluated at every sample value.
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    out.ks = std::max(out.ks, std::fabs(static_cast<double>(i) / static_cast<double>(a.size()) -
                                        static_cast<double>(j) / static_cast<double>(b.size())));
  }
  auto error = [&](double q) { return 100.0 * trace::relative_error(quantile(b, q), quantile(a, q)); };
  out.p50_error_pct = error(0.5);
  out.p90_error_pct = error(0.9);
  out.p99_error_pct = error(0.99);
  return out;
}

}  // namespace ddpsim::experiment
