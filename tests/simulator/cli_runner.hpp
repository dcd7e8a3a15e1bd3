// Runs the real ddp-sim binary through the shell, capturing its exit status, stdout and
// stderr: what the CLI tests assert on.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "temp_dir.hpp"

namespace ddpsim::sim {

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline Outcome run_cli(const test_support::TempDir& dir, const std::string& arguments) {
  const std::string out = dir / "stdout.txt";
  const std::string err = dir / "stderr.txt";
  const std::string command = std::string(DDPSIM_SIM_BINARY) + " " + arguments + " >" + out + " 2>" + err;
  const int raw = std::system(command.c_str());
  Outcome outcome;
  outcome.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  outcome.out = slurp(out);
  outcome.err = slurp(err);
  return outcome;
}

inline int count_lines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  return lines;
}

inline void expect_one_line_error(const Outcome& outcome, const std::string& needle) {
  EXPECT_EQ(outcome.status, 2) << outcome.err;
  EXPECT_EQ(count_lines(outcome.err), 1) << outcome.err;
  EXPECT_NE(outcome.err.find(needle), std::string::npos) << outcome.err;
}

}  // namespace ddpsim::sim
