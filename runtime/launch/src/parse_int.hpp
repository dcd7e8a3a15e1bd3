#pragma once
// Strict integer parsing for environment variables and list fields (private to ddpsim_launch_env).
#include <optional>
#include <string>

namespace ddpsim::launch::detail {

// The whole string as a decimal int (optional leading '-'), or nullopt: no spaces, no
// trailing characters, no overflow. std::stoi would accept "12abc" and " 12".
std::optional<int> parse_int(const std::string& text);

}  // namespace ddpsim::launch::detail
