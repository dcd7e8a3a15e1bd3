// Everything `ddp-machine-profile` can be told on its command line (torch-free, like
// train_options.hpp: the flags are checked before LibTorch or a process group starts).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddpsim/runtime/train_options.hpp"  // UsageError

namespace ddpsim::runtime {

struct MachineProfileOptions {
  std::string out;                // --out: where rank 0 writes the profile (required)
  std::string backend = "gloo";   // gloo | nccl
  std::string device = "auto";    // auto (cuda under NCCL, cpu under Gloo) | cpu | cuda
  std::string init_method = "env://";
  // The all-reduce ladder: message sizes in bytes, increasing (default 4 KiB to 64 MiB, x4).
  std::vector<std::int64_t> sizes;
  // --overlap-size: the all-reduces timed against compute, increasing. The middle one (the lower
  // of two) gives the profile's overlap fields; every one its entry of overlap.by_size.
  std::vector<std::int64_t> overlap_sizes = {1 << 20, 4 << 20, 16 << 20};
  int in_flight = 2;   // K all-reduces at once, as DDP hands Gloo/NCCL its buckets
  int repeats = 10;    // timed repetitions of every measurement
  int warmup = 2;      // untimed rounds first (connections, buffers)
  int threads = 1;     // intra-op threads per rank, as ddp-train --threads
  double timeout_s = 300;
  bool quiet = false;

  bool on_cuda() const { return device == "cuda" || (device == "auto" && backend == "nccl"); }
};

// The default ladder: 4 KiB, 16 KiB, ..., 64 MiB (8 sizes).
std::vector<std::int64_t> default_ladder_sizes();

// One --sizes text ("4K,1M,64M" or bytes "4096,1048576"; K, M, G are binary) as bytes;
// UsageError naming `flag` unless every size is a multiple of 4 bytes (float32), >= 4, each
// above the one before.
std::vector<std::int64_t> parse_ladder_sizes(const std::string& text, const std::string& flag = "--sizes");

// Parses argv. Returns nullopt with exit_code set when the run should stop (--help: 0).
// Throws UsageError (one line naming the flag) on bad input.
std::optional<MachineProfileOptions> parse_machine_profile_options(int argc, const char* const* argv, int& exit_code);

// UsageError naming --out unless `path` is a file in an existing directory (rank 0's check:
// only it writes, and on several hosts only its host's directory matters).
void check_profile_out_path(const std::string& path);

}  // namespace ddpsim::runtime
