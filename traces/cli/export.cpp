// ddp-trace export --chrome OUT.json DIR: a Chrome trace for chrome://tracing or Perfetto.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/summary.hpp"
#include "preflight.hpp"

namespace ddpsim::trace::cli {

namespace {

struct ExportOptions {
  std::string chrome_out;
  std::string dir;
};

}  // namespace

Command add_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* sub = app.add_subcommand("export", "Convert a trace for a viewer");
  sub->add_option("--chrome", options->chrome_out,
                  "write Chrome trace JSON (open in ui.perfetto.dev) to this file")
      ->required()
      ->group("Output");
  sub->add_option("DIR", options->dir, "trace directory")->required();
  return {sub, [options] {
            check_output_file(options->chrome_out, "--chrome");  // before the trace is read
            const std::string json = to_chrome_trace(read_trace(options->dir));
            // Whole or not at all: a full disk or a bad path leaves no half-written JSON.
            write_file_atomically(options->chrome_out, json, "a writable output file (--chrome)");
            std::cout << "wrote " << options->chrome_out << "\n";
            return 0;
          }};
}

}  // namespace ddpsim::trace::cli
