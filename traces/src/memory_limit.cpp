// The memory this process may use (memory_limit.hpp).
#include "ddpsim/trace/memory_limit.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace ddpsim::trace {
namespace {

// Limits at or above this are "none" (cgroup v1 writes 2^63 rounded down to a page).
constexpr double kUnlimited = 1e18;

// A "Key:   N kB" line of a /proc file, in bytes.
std::optional<double> proc_kb(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    double kb = 0;
    if (fields >> kb) return kb * 1024;
  }
  return std::nullopt;
}

// One number from a cgroup file ("max" and absurd values are none).
std::optional<double> limit_file(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    const double value = std::stod(text);
    if (value > 0 && value < kUnlimited) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

struct CgroupMount {
  std::string root;   // the cgroup path mounted there
  std::string point;  // where
};

// The mount of cgroup v2 (`controller` empty) or of the v1 hierarchy with `controller`.
std::optional<CgroupMount> cgroup_mount(const std::string& controller) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
    std::istringstream fields(line);
    std::string id, parent, device, root, point, options, field;
    fields >> id >> parent >> device >> root >> point >> options;
    while (fields >> field && field != "-") {
    }
    std::string type, source, super;
    fields >> type >> source >> super;
    if (controller.empty() ? type == "cgroup2" : (type == "cgroup" && ("," + super + ",").find("," + controller + ",") != std::string::npos)) {
      return CgroupMount{root, point};
    }
  }
  return std::nullopt;
}

// The smallest limit in `file` from this process's cgroup up to the mount's root.
std::optional<double> cgroup_limit(const std::string& controller, const std::string& cgroup_path, const std::string& file) {
  const std::optional<CgroupMount> mount = cgroup_mount(controller);
  if (!mount) return std::nullopt;
  std::string relative = cgroup_path;
  if (mount->root != "/" && relative.rfind(mount->root, 0) == 0) relative = relative.substr(mount->root.size());
  std::optional<double> smallest;
  for (;;) {
    if (const auto limit = limit_file(mount->point + relative + "/" + file)) {
      smallest = smallest ? std::min(*smallest, *limit) : *limit;
    }
    if (relative.empty() || relative == "/") break;
    relative = relative.substr(0, relative.find_last_of('/'));
  }
  return smallest;
}

// This process's cgroup memory limit, v2 or v1, with the file it came from.
std::optional<MemoryLimit> cgroup_memory_limit() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // HIERARCHY:CONTROLLERS:PATH
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    std::optional<double> bytes;
    std::string source;
    if (line.rfind("0::", 0) == 0) {
      bytes = cgroup_limit("", path, "memory.max");
      source = "cgroup memory.max";
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      bytes = cgroup_limit("memory", path, "memory.limit_in_bytes");
      source = "cgroup memory.limit_in_bytes";
    }
    if (bytes) return MemoryLimit{*bytes, MemoryKind::Resident, false, source};
  }
  return std::nullopt;
}

std::optional<double> rlimit(int resource) {
  struct rlimit limit {};
  if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<double>(limit.rlim_cur);
}

}  // namespace

double resident_bytes_now() { return proc_kb("/proc/self/status", "VmRSS").value_or(0); }
double address_space_bytes_now() { return proc_kb("/proc/self/status", "VmSize").value_or(0); }

std::vector<MemoryLimit> memory_limits(std::optional<double> max_memory_bytes) {
  std::vector<MemoryLimit> limits;
  if (max_memory_bytes) limits.push_back({*max_memory_bytes, MemoryKind::Resident, false, "--max-memory"});
  if (const auto as = rlimit(RLIMIT_AS)) limits.push_back({*as, MemoryKind::AddressSpace, true, "ulimit -v"});
  if (const auto data = rlimit(RLIMIT_DATA)) limits.push_back({*data, MemoryKind::AddressSpace, true, "ulimit -d"});
  if (auto cgroup = cgroup_memory_limit()) limits.push_back(std::move(*cgroup));
  if (const auto available = proc_kb("/proc/meminfo", "MemAvailable")) {
    limits.push_back({*available + resident_bytes_now(), MemoryKind::Resident, false, "available memory"});
  }
  return limits;
}

std::optional<double> parse_memory_size(const std::string& text) {
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string unit = text.substr(used);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::toupper(c); });
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB") {
    unit.resize(unit.size() - 2);
    if (unit.empty()) return std::nullopt;  // "iB" alone
  } else if (unit.size() >= 2 && unit.back() == 'B') {
    unit.pop_back();
  } else if (unit == "B") {
    unit.clear();
  }
  static const std::string kUnits = "KMGTPE";
  double scale = 1;
  if (!unit.empty()) {
    const auto found = kUnits.find(unit);
    if (unit.size() != 1 || found == std::string::npos) return std::nullopt;
    scale = std::pow(1024.0, static_cast<double>(found + 1));
  }
  const double bytes = number * scale;
  if (!std::isfinite(bytes) || !(bytes >= 1)) return std::nullopt;
  return bytes;
}

std::string memory_text(double bytes) {
  static const char* const kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kNames)) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  } else {
    std::snprintf(text, sizeof text, bytes < 100 ? "%.1f %s" : "%.0f %s", bytes, kNames[unit]);
  }
  return text;
}

std::optional<MemoryLimit> exceeded_limit(const std::vector<MemoryLimit>& limits, double resident,
                                          double address_space, int processes) {
  std::optional<MemoryLimit> worst;
  double worst_ratio = 1;
  for (const MemoryLimit& limit : limits) {
    double needed = limit.kind == MemoryKind::AddressSpace ? address_space : resident;
    if (!limit.per_process) needed *= std::max(processes, 1);
    const double ratio = needed / limit.bytes;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = limit;
    }
  }
  return worst;
}

std::string raise_hint(const MemoryLimit& limit) {
  if (limit.source == "available memory") return "free memory on this machine";
  if (limit.source.rfind("cgroup", 0) == 0) return "ask the job for more memory";
  return "raise " + limit.source;
}

}  // namespace ddpsim::trace
