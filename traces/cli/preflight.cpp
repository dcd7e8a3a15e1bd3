// ddp-trace's checks before work (preflight.hpp).
#include "preflight.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/memory_limit.hpp"
#include "ddpsim/trace/one_line.hpp"
#include "ddpsim/trace/writable.hpp"

namespace ddpsim::trace::cli {
namespace {

// Measured with /usr/bin/time -f %M on the example profiles (traces/examples/kineto*), rounded up.
constexpr double kBaseBytes = 8e6;                // the process
constexpr double kImportBytesPerTextByte = 2.5;   // the largest file's text while it is parsed
constexpr double kKeptBytesPerTextByte = 0.3;     // what is kept of every file
constexpr double kGzipRatio = 10;                 // a .gz file whose trailer wrapped past 4 GiB

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool writable_dir(const std::string& path) { return can_create_in(path); }

// A profile's text size: a gzip file's from its trailer (ISIZE, modulo 4 GiB), else the file's.
double text_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  if (!in.read(reinterpret_cast<char*>(magic), 2)) return 0;  // the importer says what is wrong
  in.seekg(0, std::ios::end);
  const auto size = static_cast<double>(in.tellg());
  if (magic[0] != 0x1f || magic[1] != 0x8b || size < 18) return size;
  unsigned char trailer[4] = {0, 0, 0, 0};
  in.seekg(-4, std::ios::end);
  in.read(reinterpret_cast<char*>(trailer), 4);
  const double isize = trailer[0] | (trailer[1] << 8) | (trailer[2] << 16) | (static_cast<std::uint32_t>(trailer[3]) << 24);
  return std::max(isize, size * kGzipRatio);
}

}  // namespace

// The trace library's wording (TraceError: "PATH:0: expected ..., got ..."), as the writer's
// own refusal would read, but before any work.
void check_output_file(const std::string& path, const std::string& flag) {
  const std::string expected = "a writable output file (" + flag + ")";
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) throw TraceError(path, 0, expected, "a directory");
    if (::access(path.c_str(), W_OK) != 0) throw TraceError(path, 0, expected, "a file that cannot be written");
    return;
  }
  if (!writable_dir(parent_of(path))) throw TraceError(path, 0, expected, parent_of(path) + ", not a writable directory");
}

void check_output_dir(const std::string& path, const std::string& flag) {
  const std::string expected = "a directory that can be created or written (" + flag + ")";
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode)) throw TraceError(path, 0, expected, "a file");
    if (!can_create_in(path)) throw TraceError(path, 0, expected, "a directory that cannot be written");
    return;
  }
  std::string missing = path;  // the writer creates missing parents: the nearest existing one decides
  while (::stat(parent_of(missing).c_str(), &info) != 0 && parent_of(missing) != missing) missing = parent_of(missing);
  if (!writable_dir(parent_of(missing))) {
    throw TraceError(path, 0, expected, parent_of(missing) + ", not a writable directory");
  }
}

void add_max_memory_option(CLI::App* command, std::optional<double>& bytes) {
  const CLI::Validator size(
      [](std::string& text) -> std::string {
        if (parse_memory_size(text)) return "";
        return "expected a size such as 2G, 512M or 1073741824 (bytes), got " + one_line(text);
      },
      "SIZE");
  command
      ->add_option_function<std::string>(
          "--max-memory", [&bytes](const std::string& text) { bytes = parse_memory_size(text); },
          "Refuse, before reading them, profiles estimated to need more memory than SIZE (e.g. 2G, 512M); "
          "ulimit -v, a cgroup's limit and the machine's available memory are checked without it")
      ->check(size);
}

void check_import_fits(const std::vector<std::string>& files, std::optional<double> max_memory) {
  double largest = 0;
  double total = 0;
  std::string largest_file;
  for (const std::string& file : files) {
    const double bytes = text_bytes(file);
    total += bytes;
    if (bytes > largest) {
      largest = bytes;
      largest_file = file;
    }
  }
  const double resident = kBaseBytes + kImportBytesPerTextByte * largest + kKeptBytesPerTextByte * total;
  const double mapped = std::max(0.0, address_space_bytes_now() - resident_bytes_now());
  const std::optional<MemoryLimit> limit = exceeded_limit(memory_limits(max_memory), resident, resident + mapped);
  if (!limit) return;
  const bool address_space = limit->kind == MemoryKind::AddressSpace;
  throw UsageError(one_line(largest_file) + ": importing it needs about " +
                   memory_text(address_space ? resident + mapped : resident) +
                   (address_space ? " of address space" : " of memory") + " (its text is " + memory_text(largest) +
                   ") and this process may use " + memory_text(limit->bytes) + " (" + limit->source +
                   "); import on a machine with more memory, or " + raise_hint(*limit));
}

}  // namespace ddpsim::trace::cli
