// How much memory this process may use, read before a large piece of work starts, so that a
// request that cannot fit is refused in one line instead of taking the machine's memory (or a
// job's cgroup) down part way. Sizes as a person writes them: 2G, 512M.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ddpsim::trace {

// What a limit bounds: the memory a process has touched (resident), or all it has mapped
// (ulimit -v and -d count address space reserved and never touched, such as thread stacks).
enum class MemoryKind { Resident, AddressSpace };

struct MemoryLimit {
  double bytes = 0;
  MemoryKind kind = MemoryKind::Resident;
  bool per_process = true;  // false: shared by this process and the children it starts (a cgroup, the machine)
  std::string source;       // how a person names it: "--max-memory", "ulimit -v", "cgroup memory.max", ...
};

// Every limit that applies to this process now, each in bytes a new piece of work may reach in
// total (this process's current use included):
//   --max-memory (when given)                                   resident, shared with children
//   RLIMIT_AS ("ulimit -v") and RLIMIT_DATA ("ulimit -d")        address space, per process
//   its cgroup's memory.max (v2) or memory.limit_in_bytes (v1)  resident, shared
//   /proc/meminfo MemAvailable plus this process's resident set  resident, shared
// Files that cannot be read give no limit.
std::vector<MemoryLimit> memory_limits(std::optional<double> max_memory_bytes);

// This process's resident set and mapped address space now (/proc/self/status), bytes; 0 when
// unreadable.
double resident_bytes_now();
double address_space_bytes_now();

// "2G", "512M", "1.5T", "64K", "1073741824" (bytes); units are binary (1G = 2^30 bytes), may end
// in B or iB and be lower case. nullopt for anything else, zero and negative sizes included.
std::optional<double> parse_memory_size(const std::string& text);

// 1536 → "1.5 KiB", 1073741824 → "1.0 GiB": three significant digits at most.
std::string memory_text(double bytes);

// The limit that `resident` and `address_space` bytes exceed by the largest factor, or nullopt.
// `processes` of the work run at once: a per-process limit is compared with one's share.
std::optional<MemoryLimit> exceeded_limit(const std::vector<MemoryLimit>& limits, double resident,
                                          double address_space, int processes = 1);

// What a person does about `limit` ("raise --max-memory", "raise ulimit -v", ...).
std::string raise_hint(const MemoryLimit& limit);

}  // namespace ddpsim::trace
