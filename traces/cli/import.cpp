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

constexpr long kFewProfiledSteps = 5;

// What a what-if on bucket caps can rest on: per-gradient parameters (DDP's rule re-buckets
// exactly, at the caps inferred) or one pseudo-parameter per bucket (approximate), and why.
void print_layout(const RunMeta& meta, std::ostream& out) {
  const auto setting = [&meta](const char* key) {
    const auto found = meta.settings.find(key);
    return found == meta.settings.end() ? std::string() : found->second;
  };
  const std::size_t buckets = meta.bucket_assignments.empty() ? 0 : meta.bucket_assignments.front().buckets.size();
  if (setting("parameters") == "per-gradient") {
    out << "parameters: " << meta.parameters.size() << " gradients with their shapes in " << buckets
        << " buckets: re-bucketing is exact\n"
        << "buckets: " << setting("bucket_caps") << "\n";
  } else {
    out << "parameters: one per bucket (" << buckets << "): re-bucketing is approximate, as "
        << setting("parameters_reason") << "\n";
  }
}

// How many steps a what-if can resample: rank 0's complete iterations. A schedule that cycles
// (torch.profiler's repeat=0, the default) writes its last, often short, cycle over the others.
void print_steps(const Trace& trace, std::ostream& out) {
  long steps = 0;
  for (const Event& event : trace.ranks.front().events) steps += event.type == EventType::IterationEnd;
  out << "steps: " << steps << " profiled step" << (steps == 1 ? "" : "s");
  if (steps < kFewProfiledSteps) {
    out << ": few for a what-if to resample; profile more (schedule(..., active=10, repeat=1): a schedule that "
           "repeats writes its last cycle over the others)";
  }
  out << "\n";
}

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
            print_steps(trace, std::cout);
            print_layout(trace.ranks.front().meta, std::cout);
            return 0;
          }};
}

}  // namespace ddpsim::trace::cli
