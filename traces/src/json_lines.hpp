// Line numbers inside a metadata file, so that errors point near their cause (internal).
#pragma once

#include <string>

namespace ddpsim::trace::detail {

// The 1-based line of the first `"key":` in a JSON text; 1 when the key is absent.
long json_key_line(const std::string& text, const std::string& key);

}  // namespace ddpsim::trace::detail
