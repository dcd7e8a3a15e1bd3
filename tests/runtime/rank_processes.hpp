// Runs a real multi-process ddp-train job on this machine for the tests: one process per rank,
// each told its place through the same environment variables torchrun sets.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace ddpsim::runtime::testing {

struct RankResult {
  int exit_code = -1;  // -1: killed at the deadline or by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// The tests' one scratch directory (tests/common/temp_dir.hpp).
using TempDir = ddpsim::test_support::TempDir;

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it, close).
int free_port();

// Starts `world_size` copies of `program args...` with RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, and (when `master_port` > 0) MASTER_ADDR=127.0.0.1 and MASTER_PORT set
// (otherwise rendezvous must come from the arguments, e.g. --init file://), waits for all of
// them (started through ddpsim::process), and kills any still running at `deadline`. Output goes
// through files in `scratch_dir`.
std::vector<RankResult> run_ranks(const std::string& program, const std::vector<std::string>& args,
                                  int world_size, int master_port, const std::string& scratch_dir,
                                  std::chrono::seconds deadline);

// All of a file's text; "" if it cannot be read.
std::string read_text(const std::string& path);

}  // namespace ddpsim::runtime::testing
