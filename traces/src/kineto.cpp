// Placeholder until the Kineto importer lands (issue 10); replaced by its owner.
#include "ddpsim/trace/kineto.hpp"

#include "ddpsim/trace/io.hpp"

namespace ddpsim::trace {

Trace import_kineto(const std::vector<std::string>& rank_files) {
  throw TraceError(rank_files.empty() ? std::string("<none>") : rank_files.front(), 0,
                   "a supported Kineto trace", "an importer that is not built yet");
}

}  // namespace ddpsim::trace
