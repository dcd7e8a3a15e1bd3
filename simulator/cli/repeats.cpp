// --repeats: read and check other runs of the source trace's configuration (repeats.hpp).
#include "repeats.hpp"

#include <filesystem>
#include <set>

#include "command.hpp"
#include "ddpsim/trace/configuration.hpp"
#include "ddpsim/trace/io.hpp"

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

}  // namespace ddpsim::cli
