// ddp-trace import --kineto OUT_DIR RANK_FILE...: a PyTorch profiler trace per rank converted
// into a ddpsim trace, so that real Python DDP jobs can be replayed. Standard torch.profiler
// traces (.json or .json.gz) need nothing else, in any order (each file's distributedInfo names
// its rank), or the folder holding them (tensorboard_trace_handler's); a single rank's file of a
// bigger job is replicated into world_size identical ranks. A file it cannot use is reported in
// one line, exit status 2, as every command's invalid input.
#include <algorithm>
#include <filesystem>
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

bool profiler_file_name(const std::string& name) {
  const auto ends_with = [&name](const std::string& tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends_with(".json") || ends_with(".json.gz");
}

// The files given, a folder standing for its *.json and *.json.gz files (by name).
std::vector<std::string> profile_files(const std::vector<std::string>& given) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& path : given) {
    std::error_code error;
    if (!fs::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> inside;
    for (const fs::directory_entry& entry : fs::directory_iterator(path, error)) {
      if (entry.is_regular_file(error) && profiler_file_name(entry.path().filename().string())) {
        inside.push_back(entry.path().string());
      }
    }
    if (inside.empty()) {
      throw TraceError(path, 0, "a folder of PyTorch profiler traces (*.json, *.json.gz)", "none in it");
    }
    std::sort(inside.begin(), inside.end());
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

}  // namespace

Command add_import_command(CLI::App& app) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* sub = app.add_subcommand("import", "Convert profiler traces into a ddpsim trace");
  sub->add_option("--kineto", options->out_dir,
                  "read PyTorch profiler (Kineto) traces, write the ddpsim trace to this directory")
      ->required()
      ->group("Format and output");
  sub->add_option("RANK_FILE", options->rank_files,
                  "the profiler (Kineto) traces, .json or .json.gz: one file per rank in any order (each file's "
                  "distributedInfo gives its rank), or the folder holding them; one rank's file alone stands for "
                  "every rank")
      ->required();
  add_max_memory_option(sub, options->max_memory);
  return {sub, [options] {
            // Before any profile is read: the output, then the memory the largest one needs.
            check_output_dir(options->out_dir, "--kineto");
            const std::vector<std::string> files = profile_files(options->rank_files);
            check_import_fits(files, options->max_memory);
            // A file the importer cannot use (missing, sampled, no all-reduce) throws a
            // TraceError naming the file and what is missing: main prints it, status 2.
            const Trace trace = import_kineto(files);
            write_trace(options->out_dir, trace);
            std::cout << "ok: wrote " << trace.world_size() << " ranks to " << options->out_dir
                      << "\n";
            std::cout << describe_import(trace);
            return 0;
          }};
}

}  // namespace ddpsim::trace::cli
