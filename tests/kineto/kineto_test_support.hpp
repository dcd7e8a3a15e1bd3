// What the importer's tests share: the one-line error an import gives. Scratch folders are
// tests/common's TempDir, removed when the test ends, also when it fails.
#pragma once

#include <string>
#include <vector>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"

namespace kineto_test {

// The TraceError message of importing these rank files, or "" when the import succeeds.
inline std::string import_error(const std::vector<std::string>& rank_files) {
  try {
    ddpsim::trace::import_kineto(rank_files);
  } catch (const ddpsim::trace::TraceError& error) {
    return error.what();
  }
  return "";
}

}  // namespace kineto_test
