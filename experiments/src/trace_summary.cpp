#include "trace_summary.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace ddpsim::experiment {

TraceSummary parse_trace_summary(const std::string& json_text, const std::string& source) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(source + ": expected ddp-trace summary JSON, got a parse error (" +
                             std::string(e.what()) + ")");
  }
  if (!json.is_object()) throw std::runtime_error(source + ": expected a JSON object");
  auto number = [&](const char* key) -> const nlohmann::json& {
    auto it = json.find(key);
    if (it == json.end() || !it->is_number())
      throw std::runtime_error(source + ": expected a number field '" + std::string(key) + "'");
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
  if (auto it = json.find("failures"); it != json.end()) {
    if (!it->is_array()) throw std::runtime_error(source + ": expected 'failures' to be an array");
    for (const auto& failure : *it)
      summary.failures.push_back(failure.is_string() ? failure.get<std::string>() : failure.dump());
  }
  return summary;
}

}  // namespace ddpsim::experiment
