#include "profile_file.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace ddpsim::experiment {

std::optional<nlohmann::json> read_profile_file(const std::string& file, const std::string& script,
                                                const std::string& key) {
  if (!std::filesystem::exists(file)) return std::nullopt;
  std::ifstream in(file);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(file + ": expected " + script + "'s JSON, got text that is not JSON");
  }
  if (!json.is_object() || !json.contains(key) || !json[key].is_array() || json[key].empty())
    throw std::runtime_error(file + ": expected " + script + "'s JSON with a non-empty \"" + key + "\" array");
  return json;
}

}  // namespace ddpsim::experiment
