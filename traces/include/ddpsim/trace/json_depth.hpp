// How deep a JSON text nests, for readers to check before parsing it: nlohmann-json's dump()
// and the checks that print a value recurse per level, so a file of "[[[[…" a million deep
// blows the stack. The files ddpsim reads nest four levels at most.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace ddpsim::trace {

inline constexpr int kMaxJsonDepth = 64;

// The offset of the first '[' or '{' outside a string that opens level `max_depth` + 1, or
// nullopt when `text` nests no deeper than `max_depth`.
inline std::optional<std::size_t> json_too_deep_at(const std::string& text, int max_depth = kMaxJsonDepth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace ddpsim::trace
