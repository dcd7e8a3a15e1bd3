// The check before a replay (resource_check.hpp).
#include "resource_check.hpp"

#include <iostream>

#include "ddpsim/sim/resource_estimate.hpp"
#include "ddpsim/trace/memory_limit.hpp"
#include "ddpsim/trace/one_line.hpp"

namespace ddpsim::cli {
namespace {

// Longer than this, a replay says how long before it starts.
constexpr double kLongReplayS = 600;

}  // namespace

void add_max_memory_option(CLI::App* command, std::optional<double>& bytes) {
  const CLI::Validator size(
      [](std::string& text) -> std::string {
        if (trace::parse_memory_size(text)) return "";
        return "expected a size such as 2G, 512M or 1073741824 (bytes), got " + trace::one_line(text);
      },
      "SIZE");
  command
      ->add_option_function<std::string>(
          "--max-memory", [&bytes](const std::string& text) { bytes = trace::parse_memory_size(text); },
          "Refuse, before it starts, work estimated to need more memory than SIZE (e.g. 2G, 512M); "
          "ulimit -v, a cgroup's limit and the machine's available memory are checked without it")
      ->check(size)
      ->group("Runs");
}

void check_resources(const sim::ResourceEstimate& estimate, std::optional<double> max_memory, const std::string& what,
                     int processes) {
  sim::check_fits(estimate, trace::memory_limits(max_memory), what, processes);
  if (estimate.wall_s > kLongReplayS) {
    std::cerr << "ddp-sim: warning: " << what << " will take about " << sim::duration_text(estimate.wall_s) << " ("
              << estimate.size.ranks << " ranks, " << estimate.size.iterations << " iterations, " << estimate.runs
              << (estimate.runs == 1 ? " run" : " runs") << ")\n";
  }
}

void check_replay_resources(const sim::PreparedReplay& prepared, int runs, std::optional<double> max_memory,
                            const std::string& what, sim::RankOutputs outputs) {
  check_resources(sim::estimate_replay(prepared, runs, outputs), max_memory, what);
}

}  // namespace ddpsim::cli
