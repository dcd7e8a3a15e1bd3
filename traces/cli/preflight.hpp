// What ddp-trace checks before any work: that its output can be written and that an import
// fits in the memory this process may use. Each failure is one line naming the flag or file.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ddpsim::trace::cli {

// A command line or output that cannot be used: main prints "ddp-trace: " and the text, status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A file the command will write: an existing writable file, or creatable in an existing
// writable directory. Creates nothing; TraceError naming the path and the flag.
void check_output_file(const std::string& path, const std::string& flag);
// A directory the command will create (with its missing parents, as the trace writer does) or fill.
void check_output_dir(const std::string& path, const std::string& flag);

// --max-memory SIZE into `bytes` (memory_limit.hpp's sizes).
void add_max_memory_option(CLI::App* command, std::optional<double>& bytes);

// The importer holds one profile's text at a time and what it keeps of each: about
// kImportBytesPerTextByte times the largest file's uncompressed size (a .gz file's from its
// trailer) plus a fraction of all of them. UsageError naming the largest file, the estimate and
// the limit when that exceeds one of memory_limits(max_memory).
void check_import_fits(const std::vector<std::string>& files, std::optional<double> max_memory);

}  // namespace ddpsim::trace::cli
