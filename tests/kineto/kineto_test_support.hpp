// What the importer's tests share: the one-line error an import gives, and a scratch folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

// An empty folder under the system's temporary one, distinct per test run.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ddpsim-kineto-" + name + "-" +
       std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace kineto_test
