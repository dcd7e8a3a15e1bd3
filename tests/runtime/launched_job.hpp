// Runs ddp-train under the real ddp-launch for the tests: 1-2 ranks on this machine, Gloo over
// loopback, file:// rendezvous (no port to race for), everything in a scratch directory.
#pragma once

#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"
#include "temp_dir.hpp"

namespace ddpsim::runtime::testing {

// The tests' one scratch directory (tests/common/temp_dir.hpp).
using TempDir = ddpsim::test_support::TempDir;

struct JobResult {
  int exit_code = -1;  // the launcher's; -1 when it did not exit normally
  double seconds = 0;
  std::string output;  // the launcher's stdout and stderr (worker lines prefixed "[rank R] ")
};

// Single-quotes a word for sh.
std::string shell_quote(const std::string& word);

// ddp-launch --nproc-per-node N -- WORKER, where `worker` is a shell command line (quoted words).
JobResult launch(const std::string& worker, const TempDir& dir, int nproc = 2,
                 const std::string& tag = "job");

// The ddp-train command line for a small MLP job writing its trace to DIR/TAG (and rendezvous
// through DIR/TAG.store), followed by `extra`.
std::string train_command(const TempDir& dir, const std::string& tag,
                          const std::vector<std::string>& extra);

// DIR/TAG's rank-R trace files, read and validated.
trace::RankTrace read_rank(const TempDir& dir, const std::string& tag, int rank);

// The events of one type, in file order.
std::vector<const trace::Event*> events_of(const trace::RankTrace& t, trace::EventType type);

}  // namespace ddpsim::runtime::testing
