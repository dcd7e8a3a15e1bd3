// --repeats: read and check other runs of the source trace's configuration (repeats.hpp).
#include "repeats.hpp"

#include <filesystem>
#include <set>

#include "command.hpp"
#include "ddpsim/trace/configuration.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/summary.hpp"

namespace ddpsim::cli {

std::vector<trace::Trace> read_repeats(const std::vector<std::string>& dirs, const std::string& source_dir,
                                       const trace::Trace& source, const std::string& source_name) {
  namespace fs = std::filesystem;
  std::vector<trace::Trace> runs;
  std::set<fs::path> seen = {fs::weakly_canonical(source_dir)};
  for (const std::string& dir : dirs) {
    if (!seen.insert(fs::weakly_canonical(dir)).second) {
      throw UsageError("--repeats " + dir + ": expected another run, got " + source_name + " or a repeat given twice");
    }
    trace::Trace run;
    try {
      run = trace::read_trace(dir);
    } catch (const trace::TraceError& error) {
      throw UsageError(std::string("--repeats ") + dir + ": " + error.what());
    }
    const std::string difference =
        trace::configuration_difference(run.ranks.front().meta, source.ranks.front().meta, source_name + "'s");
    if (!difference.empty()) {
      throw UsageError("--repeats " + dir + ": expected a run of " + source_name + "'s configuration, got " + difference);
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

void add_pool_flag(CLI::App* command, bool& pool, CLI::Option* repeats, const std::string& description) {
  command->add_flag("--pool", pool, description)->needs(repeats)->group(repeats->get_group());
}

void add_pool_flag(CLI::App* command, bool& pool, CLI::Option* repeats) {
  add_pool_flag(command, pool, repeats,
                "Replay the trace and its --repeats as one run, their iterations one run after another: a "
                "prediction at the machine's typical speed, not at the one run's (on a machine whose speed "
                "drifts between runs)");
}

sim::RunToRunSpread run_to_run_of_repeats(const std::vector<std::string>& dirs, const std::string& replayed_dir,
                                          const trace::Trace& replayed, double replayed_median_s) {
  return run_to_run_of_repeats(dirs, read_repeats(dirs, replayed_dir, replayed, "the replayed trace"), replayed_median_s);
}

sim::RunToRunSpread run_to_run_of_repeats(const std::vector<std::string>& dirs, const std::vector<trace::Trace>& runs,
                                          double replayed_median_s) {
  if (!(replayed_median_s > 0)) throw UsageError("--repeats: expected the replayed trace to have complete iterations, got none");
  std::vector<double> medians = {replayed_median_s};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double median = trace::summarize(runs[i]).median_iteration_s;
    if (!(median > 0)) throw UsageError("--repeats " + dirs[i] + ": expected a run with complete iterations, got none");
    medians.push_back(median);
  }
  return sim::run_to_run_spread(medians);
}

}  // namespace ddpsim::cli
