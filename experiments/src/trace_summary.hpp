// What the runner needs from `ddp-trace summary DIR --json` (traces/include/ddpsim/trace/summary.hpp:
// the JSON mirrors struct Summary's field names).
#pragma once

#include <string>
#include <vector>

namespace ddpsim::experiment {

struct TraceSummary {
  int world_size = 0;
  int complete_iterations = 0;
  double median_iteration_s = 0;  // 0 when no iteration completed
  std::vector<std::string> failures;  // "rank R iteration I bucket B: kind: message"
};

// Parses the JSON text; throws std::runtime_error naming `source` and the missing or
// mistyped field.
TraceSummary parse_trace_summary(const std::string& json_text, const std::string& source);

}  // namespace ddpsim::experiment
