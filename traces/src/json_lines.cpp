// JSON documents read with errors that point near their cause (json_lines.hpp).
#include "json_lines.hpp"

#include <algorithm>
#include <cstddef>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/json_depth.hpp"

namespace ddpsim::trace::detail {
namespace {

using nlohmann::json;

// The line of a byte offset.
long line_of_offset(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<long>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// "syntax error while parsing value - invalid literal; last read: 'x'" -> the part after " - ".
std::string syntax_problem(const json::parse_error& error) {
  const std::string what = error.what();
  const std::size_t dash = what.find(" - ");
  if (dash != std::string::npos) return what.substr(dash + 3);
  const std::size_t colon = what.rfind(": ");
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

long json_key_line(const std::string& text, const std::string& key) {
  const std::string quoted = "\"" + key + "\"";
  std::size_t pos = 0;
  while ((pos = text.find(quoted, pos)) != std::string::npos) {
    std::size_t after = pos + quoted.size();
    while (after < text.size() &&
           (text[after] == ' ' || text[after] == '\t' || text[after] == '\n' || text[after] == '\r')) {
      ++after;
    }
    if (after < text.size() && text[after] == ':') return line_of_offset(text, pos);
    pos = after;
  }
  return 1;
}

json parse_json(const std::string& text, const std::string& file, const std::string& expected) {
  if (const auto at = json_too_deep_at(text)) {
    throw TraceError(file, line_of_offset(text, *at), "JSON nested at most " + std::to_string(kMaxJsonDepth) + " deep",
                     "deeper nesting");
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& error) {
    throw TraceError(file, line_of_offset(text, error.byte == 0 ? 0 : error.byte - 1), expected,
                     syntax_problem(error));
  } catch (const json::exception& error) {
    // Not a syntax error: a number too large for a double ("number overflow parsing
    // '1e999'"), which carries no position; find the number in the text instead.
    const std::string what = error.what();
    const std::size_t open = what.find('\'');
    const std::size_t close = what.rfind('\'');
    long line = 1;
    if (open != std::string::npos && close > open) {
      const std::size_t at = text.find(what.substr(open + 1, close - open - 1));
      if (at != std::string::npos) line = line_of_offset(text, at);
    }
    const std::size_t bracket = what.find("] ");
    throw TraceError(file, line, expected, bracket == std::string::npos ? what : what.substr(bracket + 2));
  }
}

}  // namespace ddpsim::trace::detail
