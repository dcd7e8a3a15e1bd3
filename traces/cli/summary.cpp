// ddp-trace summary DIR [--json]: iteration times, phases, per-bucket all-reduce bandwidth.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/summary.hpp"

namespace ddpsim::trace::cli {

namespace {

struct SummaryOptions {
  std::string dir;
  bool json = false;
};

}  // namespace

Command add_summary_command(CLI::App& app) {
  auto options = std::make_shared<SummaryOptions>();
  CLI::App* sub = app.add_subcommand("summary", "Print the statistics of a trace");
  sub->add_option("DIR", options->dir, "trace directory")->required();
  sub->add_flag("--json", options->json, "print JSON instead of a table")->group("Output");
  return {sub, [options] {
            const Summary summary = summarize(read_trace(options->dir));
            std::cout << (options->json ? summary_to_json(summary) : summary_to_table(summary));
            return 0;
          }};
}

}  // namespace ddpsim::trace::cli
