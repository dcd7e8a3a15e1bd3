// ddp-trace validate DIR: read the whole trace with every FORMAT.md check.
#include <algorithm>
#include <iostream>
#include <iterator>
#include <memory>

#include "commands.hpp"
#include "ddpsim/trace/io.hpp"

namespace ddpsim::trace::cli {

Command add_validate_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("validate", "Check a trace directory against FORMAT.md");
  sub->add_option("DIR", *dir, "trace directory (rank-R.meta.json, rank-R.events.csv)")
      ->required();
  return {sub, [dir] {
            const Trace trace = read_trace(*dir);
            const std::vector<std::int64_t> complete = trace.complete_iterations();
            bool truncated = false;
            for (const RankTrace& rank : trace.ranks) truncated = truncated || rank.truncated;
            std::cout << "ok: " << trace.world_size() << " ranks, " << complete.size()
                      << " complete iterations" << (truncated ? " (a rank's file ends in a cut line)" : "")
                      << "\n";
            return 0;
          }};
}

}  // namespace ddpsim::trace::cli
