// Small text helpers shared by the runner: numbers and names as they appear in paths and CSV.
#pragma once

#include <string>
#include <vector>

namespace ddpsim::experiment {

// Shortest text that reads back as the same double: 0.25 -> "0.25", 25.0 -> "25".
std::string format_number(double value);
// Letters, digits, '.', '_', '-' only, not empty: safe as a file name and a CSV field.
bool is_safe_name(const std::string& name);
// Replaces what is not safe in a file name: "1=500@5" -> "1-500at5".
std::string sanitize_for_path(const std::string& text);
std::string join(const std::vector<std::string>& parts, const std::string& separator);

}  // namespace ddpsim::experiment
