// Reading one file of a machine profile measured in the sitting (corun_bench.sh's rounds,
// sleep_resume_cost.py's pairs): the one place that says what such a file must at least be.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ddpsim::experiment {

// The JSON object of `file`, which `script` wrote with a non-empty array `key`; nullopt when
// the file does not exist (a round not measured). Throws std::runtime_error, one line naming
// the file, for text that is not JSON or an object without that array.
std::optional<nlohmann::json> read_profile_file(const std::string& file, const std::string& script,
                                                const std::string& key);

}  // namespace ddpsim::experiment
