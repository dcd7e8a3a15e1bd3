// JSON documents read with errors that point near their cause: the metadata files and the
// machine profile (internal).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ddpsim::trace::detail {

// The 1-based line of the first `"key":` in a JSON text; 1 when the key is absent.
long json_key_line(const std::string& text, const std::string& key);

// `text` parsed as one JSON document, or a TraceError naming `file`, the line near the problem,
// `expected` and what was found there: a syntax error, a number too large for a double, or
// nesting deeper than kMaxJsonDepth (json_depth.hpp).
nlohmann::json parse_json(const std::string& text, const std::string& file, const std::string& expected);

}  // namespace ddpsim::trace::detail
