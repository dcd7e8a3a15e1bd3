// ddp-trace import --kineto OUT_DIR RANK_FILE...: a PyTorch profiler trace per rank (rank r is
// the r-th file) converted into a ddpsim trace, so that real Python DDP jobs can be replayed.
// Standard torch.profiler traces (.json or .json.gz) need nothing else; a single rank's file
// of a bigger job is replicated into world_size identical ranks. A file it cannot use is
// reported in one line, exit status 2, as every command's invalid input.
#include <iostream>
#include <ostream>
#include <string>
#include <memory>
#include <optional>
#include <vector>

#include "commands.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"
#include "preflight.hpp"

namespace ddpsim::trace::cli {

namespace {

struct ImportOptions {
  std::string out_dir;
  std::vector<std::string> rank_files;
  std::optional<double> max_memory;
};

}  // namespace

Command add_import_command(CLI::App& app) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* sub = app.add_subcommand("import", "Convert profiler traces into a ddpsim trace");
  sub->add_option("--kineto", options->out_dir,
                  "read PyTorch profiler (Kineto) traces, write the ddpsim trace to this directory")
      ->required()
      ->group("Format and output");
  sub->add_option("RANK_FILE", options->rank_files, "one Kineto JSON trace per rank, rank 0 first")
      ->required();
  add_max_memory_option(sub, options->max_memory);
  return {sub, [options] {
            // Before any profile is read: the output, then the memory the largest one needs.
            check_output_dir(options->out_dir, "--kineto");
            check_import_fits(options->rank_files, options->max_memory);
            // A file the importer cannot use (missing, sampled, no all-reduce) throws a
            // TraceError naming the file and what is missing: main prints it, status 2.
            const Trace trace = import_kineto(options->rank_files);
            write_trace(options->out_dir, trace);
            std::cout << "ok: wrote " << trace.world_size() << " ranks to " << options->out_dir
                      << "\n";
            std::cout << describe_import(trace);
            return 0;
          }};
}

}  // namespace ddpsim::trace::cli
