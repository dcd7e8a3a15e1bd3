// ddp-trace import --kineto OUT_DIR RANK_FILE...: a PyTorch profiler trace per rank (rank r is
// the r-th file) converted into a ddpsim trace, so that real Python DDP jobs can be replayed.
#include <iostream>
#include <memory>
#include <vector>

#include "commands.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"

namespace ddpsim::trace::cli {

namespace {

struct ImportOptions {
  std::string out_dir;
  std::vector<std::string> rank_files;
};

}  // namespace

Command add_import_command(CLI::App& app) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* sub = app.add_subcommand("import", "Convert profiler traces into a ddpsim trace");
  sub->add_option("--kineto", options->out_dir,
                  "read PyTorch profiler (Kineto) traces, write the ddpsim trace to this directory")
      ->required();
  sub->add_option("RANK_FILE", options->rank_files, "one Kineto JSON trace per rank, rank 0 first")
      ->required();
  return {sub, [options] {
            const Trace trace = import_kineto(options->rank_files);
            write_trace(options->out_dir, trace);
            std::cout << "ok: wrote " << trace.world_size() << " ranks to " << options->out_dir
                      << "\n";
            return 0;
          }};
}

}  // namespace ddpsim::trace::cli
