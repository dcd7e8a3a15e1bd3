// ddp-machine-profile's flags (machine_profile_options.hpp).
#include "ddpsim/runtime/machine_profile_options.hpp"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>

#include "ddpsim/trace/one_line.hpp"

namespace ddpsim::runtime {
namespace {

// `text` as an integer in [min, max], all of it; UsageError naming `flag` otherwise.
std::int64_t integer_in(const std::string& text, const std::string& flag, std::int64_t min, std::int64_t max) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || value < min || value > max) {
    throw UsageError(flag + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "], got '" + trace::one_line(text) + "'");
  }
  return value;
}

// One size of --sizes: digits, then an optional K, M or G (KiB, MiB, GiB).
std::int64_t parse_size(const std::string& text, const std::string& flag) {
  const auto fail = [&text, &flag]() {
    return UsageError(flag + ": expected sizes in bytes (4096, or 4K, 1M, 1G), each a multiple of 4 and above the "
                      "one before, got '" + trace::one_line(text) + "'");
  };
  std::string digits = text;
  std::int64_t unit = 1;
  if (!digits.empty()) {
    const char suffix = digits.back();
    if (suffix == 'K' || suffix == 'k') unit = std::int64_t{1} << 10;
    if (suffix == 'M' || suffix == 'm') unit = std::int64_t{1} << 20;
    if (suffix == 'G' || suffix == 'g') unit = std::int64_t{1} << 30;
    if (unit != 1) digits.pop_back();
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 12) throw fail();
  const std::int64_t count = std::stoll(digits);
  const std::int64_t bytes = count * unit;
  if (bytes < 4 || bytes % 4 != 0 || bytes > (std::int64_t{16} << 30)) throw fail();
  return bytes;
}

}  // namespace

std::vector<std::int64_t> default_ladder_sizes() {
  std::vector<std::int64_t> sizes;
  for (std::int64_t bytes = 4 << 10; bytes <= (64 << 20); bytes *= 4) sizes.push_back(bytes);
  return sizes;
}

std::vector<std::int64_t> parse_ladder_sizes(const std::string& text, const std::string& flag) {
  std::vector<std::int64_t> sizes;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::int64_t bytes = parse_size(item, flag);
    if (!sizes.empty() && bytes <= sizes.back()) {
      throw UsageError(flag + ": expected each size above the one before, got " + std::to_string(bytes) + " after " +
                       std::to_string(sizes.back()));
    }
    sizes.push_back(bytes);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

std::optional<MachineProfileOptions> parse_machine_profile_options(int argc, const char* const* argv, int& exit_code) {
  MachineProfileOptions o;
  CLI::App app{
      "ddp-machine-profile: measures what ddp-sim --machine needs on the machines a job runs on (all-reduce times "
      "over a ladder of sizes, one and several in flight; how co-located ranks slow each other's compute; how an "
      "all-reduce and compute slow each other when they overlap; what resuming after a short sleep costs). Launch "
      "it exactly like the training job (ddp-launch, torchrun, srun); rank 0 writes the JSON (traces/MACHINE.md).",
      "ddp-machine-profile"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string sizes, overlap_size = "1M,4M,16M", in_flight = "2", repeats = "10", warmup = "2", threads = "1", timeout = "300";
  app.set_help_all_flag("--help-all", "Print this help and exit (there are no hidden options)");
  const std::string job = "The job (as the training job's)";
  app.add_option("--backend", o.backend, "gloo | nccl (the job's)")->capture_default_str()->group(job);
  app.add_option("--device", o.device, "auto (cuda under nccl, else cpu) | cpu | cuda: where the tensors live")
      ->capture_default_str()
      ->group(job);
  app.add_option("--init", o.init_method, "env:// | file:///PATH | tcp://HOST:PORT (as ddp-train --init)")
      ->capture_default_str()
      ->group(job);
  app.add_option("--threads", threads, "intra-op threads per rank, as ddp-train --threads (default 1)")->group(job);
  app.add_option("--timeout", timeout, "process-group timeout, seconds (default 300)")->group(job);
  const std::string measurement = "Measurement";
  app.add_option("--sizes", sizes,
                 "all-reduce sizes in bytes, increasing, comma-separated; K, M, G suffixes are KiB, MiB, GiB "
                 "(default 4K,16K,64K,256K,1M,4M,16M,64M)")
      ->group(measurement);
  app.add_option("--in-flight", in_flight,
                 "all-reduces in flight at once for the in-flight timing (the profile's in_flight_gain), as DDP "
                 "issues its buckets (default 2)")
      ->group(measurement);
  app.add_option("--overlap-size", overlap_size,
                 "the all-reduces timed against compute, bytes, increasing, comma-separated (K, M, G suffixes; "
                 "default 1M,4M,16M): around the job's bucket sizes; the middle one (the lower of two) is the "
                 "profile's overlap, the others show how it moves with size")
      ->group(measurement);
  app.add_option("--repeats", repeats,
                 "timed repetitions of each measurement, 3 rounds each for the all-reduces (default 10)")
      ->group(measurement);
  app.add_option("--warmup", warmup, "untimed rounds before them (default 2)")->group(measurement);
  const std::string output = "Output";
  app.add_option("--out", o.out, "the profile's JSON file, written by rank 0")->required()->group(output);
  app.add_flag("--quiet", o.quiet, "print nothing but errors")->group(output);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    exit_code = 0;
    return std::nullopt;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    exit_code = 0;
    return std::nullopt;
  } catch (const CLI::ParseError& error) {
    throw UsageError(trace::one_line(error.what()));
  }
  if (o.backend != "gloo" && o.backend != "nccl") {
    throw UsageError("--backend: expected gloo or nccl, got '" + trace::one_line(o.backend) + "'");
  }
  if (o.device != "auto" && o.device != "cpu" && o.device != "cuda") {
    throw UsageError("--device: expected auto, cpu or cuda, got '" + trace::one_line(o.device) + "'");
  }
  if (o.backend == "nccl" && o.device == "cpu") {
    throw UsageError("--device cpu: expected cuda (or auto) with --backend nccl, which all-reduces CUDA tensors only");
  }
  o.sizes = app.get_option("--sizes")->count() > 0 ? parse_ladder_sizes(sizes) : default_ladder_sizes();
  o.overlap_sizes = parse_ladder_sizes(overlap_size, "--overlap-size");
  o.in_flight = static_cast<int>(integer_in(in_flight, "--in-flight", 2, 64));
  o.repeats = static_cast<int>(integer_in(repeats, "--repeats", 1, 100000));
  o.warmup = static_cast<int>(integer_in(warmup, "--warmup", 0, 100000));
  o.threads = static_cast<int>(integer_in(threads, "--threads", 1, 1024));
  o.timeout_s = static_cast<double>(integer_in(timeout, "--timeout", 1, 86400));
  return o;
}

void check_profile_out_path(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path out(path);
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (path.empty() || !fs::is_directory(parent) || fs::is_directory(out)) {
    throw UsageError("--out " + trace::one_line(path) + ": expected a file in an existing directory");
  }
}

}  // namespace ddpsim::runtime
