// A machine profile to JSON and back, with MACHINE.md's checks (machine_profile.hpp).
#include "ddpsim/trace/machine_profile.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/io.hpp"
#include "json_lines.hpp"

namespace ddpsim::trace {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr const char* kVersionKey = "ddpsim_machine_profile";

ordered_json timing_json(const Timing& timing) {
  return {{"median_s", timing.median_s}, {"min_s", timing.min_s}, {"max_s", timing.max_s}, {"samples", timing.samples}};
}

// Typed fields out of the parsed profile; every mismatch a TraceError at the line of the
// top-level key it sits under, naming the field's path.
class ProfileChecker {
 public:
  ProfileChecker(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  [[noreturn]] void fail(const std::string& top_key, const std::string& expected, const std::string& got) const {
    throw TraceError(file_, detail::json_key_line(text_, top_key), expected, got);
  }

  static std::string describe(const json& value) {
    std::string dumped = value.dump();
    if (dumped.size() > 60) dumped = dumped.substr(0, 57) + "...";
    return std::string(value.type_name()) + " " + dumped;
  }

  const json& field(const json& object, const std::string& key, const std::string& path, const std::string& top) const {
    const auto it = object.find(key);
    if (it == object.end()) fail(top, "field \"" + path + "\"", "no such field");
    return *it;
  }

  const json& object(const json& parent, const std::string& key, const std::string& path, const std::string& top) const {
    const json& value = field(parent, key, path, top);
    if (!value.is_object()) fail(top, path + " to be an object", describe(value));
    return value;
  }

  std::string string(const json& object, const std::string& key, const std::string& path, const std::string& top) const {
    const json& value = field(object, key, path, top);
    if (!value.is_string()) fail(top, path + " to be a string", describe(value));
    return value.get<std::string>();
  }

  // One of `allowed`, named in the error as "a or b".
  std::string choice(const json& object, const std::string& key, const std::string& path, const std::string& top,
                     const std::vector<std::string>& allowed) const {
    const std::string value = string(object, key, path, top);
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
    std::string names;
    for (std::size_t i = 0; i < allowed.size(); ++i) {
      names += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + ("\"" + allowed[i] + "\"");
    }
    fail(top, path + " to be " + names, "\"" + value + "\"");
  }

  std::int64_t integer(const json& object, const std::string& key, const std::string& path, const std::string& top,
                       std::int64_t min, std::int64_t max = std::numeric_limits<int>::max()) const {
    const json& value = field(object, key, path, top);
    bool fits = false;
    std::int64_t result = 0;
    if (value.is_number_unsigned()) {
      fits = value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      result = fits ? static_cast<std::int64_t>(value.get<std::uint64_t>()) : 0;
    } else if (value.is_number_integer()) {
      fits = true;
      result = value.get<std::int64_t>();
    }
    if (!fits) fail(top, path + " to be an integer", describe(value));
    if (result < min || result > max) {
      fail(top, path + " in [" + std::to_string(min) + ", " + std::to_string(max) + "]", std::to_string(result));
    }
    return result;
  }

  // A finite number > 0 (`positive`) or >= 0.
  double number(const json& object, const std::string& key, const std::string& path, const std::string& top,
                bool positive) const {
    const json& value = field(object, key, path, top);
    if (!value.is_number()) fail(top, path + " to be a number", describe(value));
    const double result = value.get<double>();
    if (!std::isfinite(result) || (positive ? !(result > 0) : !(result >= 0))) {
      fail(top, path + (positive ? " to be a finite number > 0" : " to be a finite number >= 0"), value.dump());
    }
    return result;
  }

  Timing timing(const json& parent, const std::string& key, const std::string& path, const std::string& top) const {
    const json& value = object(parent, key, path, top);
    Timing timing;
    timing.median_s = number(value, "median_s", path + ".median_s", top, true);
    timing.min_s = number(value, "min_s", path + ".min_s", top, true);
    timing.max_s = number(value, "max_s", path + ".max_s", top, true);
    timing.samples = static_cast<int>(integer(value, "samples", path + ".samples", top, 1));
    if (!(timing.min_s <= timing.median_s && timing.median_s <= timing.max_s)) {
      fail(top, path + " with min_s <= median_s <= max_s",
           json(timing.min_s).dump() + ", " + json(timing.median_s).dump() + ", " + json(timing.max_s).dump());
    }
    return timing;
  }

 private:
  const std::string& text_;
  const std::string& file_;
};

void read_provenance(const ProfileChecker& check, const json& root, MachineProfile& profile) {
  const json& tool = check.object(root, "tool", "tool", "tool");
  profile.tool_name = check.string(tool, "name", "tool.name", "tool");
  profile.tool_version = check.string(tool, "version", "tool.version", "tool");
  profile.git_sha = check.string(tool, "git_sha", "tool.git_sha", "tool");
  profile.created_utc = check.string(root, "created_utc", "created_utc", "created_utc");
  profile.launcher = check.string(root, "launcher", "launcher", "launcher");
  profile.backend = check.choice(root, "backend", "backend", "backend", {"gloo", "nccl"});
  profile.device = check.choice(root, "device", "device", "device", {"cpu", "cuda"});
  profile.world_size = static_cast<int>(check.integer(root, "world_size", "world_size", "world_size", 2));
  const json& hosts = check.field(root, "hosts", "hosts", "hosts");
  if (!hosts.is_array() || hosts.empty()) check.fail("hosts", "hosts to be a non-empty array of host names", ProfileChecker::describe(hosts));
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (!hosts[i].is_string() || hosts[i].get<std::string>().empty()) {
      check.fail("hosts", "hosts[" + std::to_string(i) + "] to be a host name", ProfileChecker::describe(hosts[i]));
    }
    const std::string host = hosts[i].get<std::string>();
    if (std::find(profile.hosts.begin(), profile.hosts.end(), host) != profile.hosts.end()) {
      check.fail("hosts", "each host once", "\"" + host + "\" twice");
    }
    profile.hosts.push_back(host);
  }
  if (static_cast<int>(profile.hosts.size()) > profile.world_size) {
    check.fail("hosts", "at most world_size (" + std::to_string(profile.world_size) + ") hosts",
               std::to_string(profile.hosts.size()));
  }
  profile.ranks_per_host =
      static_cast<int>(check.integer(root, "ranks_per_host", "ranks_per_host", "ranks_per_host", 1, profile.world_size));
  if (static_cast<std::int64_t>(profile.ranks_per_host) * static_cast<std::int64_t>(profile.hosts.size()) <
      profile.world_size) {
    check.fail("ranks_per_host",
               "ranks_per_host x hosts >= world_size (" + std::to_string(profile.world_size) + ")",
               std::to_string(profile.ranks_per_host) + " x " + std::to_string(profile.hosts.size()));
  }
  profile.threads = static_cast<int>(check.integer(root, "threads", "threads", "threads", 1));
  const json& versions = check.object(root, "versions", "versions", "versions");
  profile.torch_version = check.string(versions, "torch", "versions.torch", "versions");
  profile.gloo_version = check.string(versions, "gloo", "versions.gloo", "versions");
  profile.nccl_version = check.string(versions, "nccl", "versions.nccl", "versions");
}

// The non-empty array `items` at `path` (in section `top`): objects whose `bytes` grow, each
// read into a Record by `read_rest` once its bytes are checked (`what` names the element in the
// error: "above the step before's").
template <typename Record, typename ReadRest>
std::vector<Record> read_by_bytes(const ProfileChecker& check, const json& items, const std::string& path,
                                  const std::string& top, const std::string& what, const ReadRest& read_rest) {
  if (!items.is_array() || items.empty()) {
    check.fail(top, path + " to be a non-empty array", ProfileChecker::describe(items));
  }
  std::vector<Record> records;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = path + "[" + std::to_string(i) + "]";
    if (!items[i].is_object()) check.fail(top, item + " to be an object", ProfileChecker::describe(items[i]));
    Record record;
    record.bytes = check.integer(items[i], "bytes", item + ".bytes", top, 4, std::numeric_limits<std::int64_t>::max());
    if (!records.empty() && record.bytes <= records.back().bytes) {
      check.fail(top, item + ".bytes above the " + what + " before's " + std::to_string(records.back().bytes),
                 std::to_string(record.bytes));
    }
    read_rest(items[i], item, record);
    records.push_back(record);
  }
  return records;
}

void read_allreduce(const ProfileChecker& check, const json& root, MachineProfile& profile) {
  const std::string top = "allreduce";
  const json& section = check.object(root, top, top, top);
  AllreduceLadder& ladder = profile.allreduce;
  ladder.dtype = check.choice(section, "dtype", "allreduce.dtype", top, {"float32"});
  ladder.in_flight = static_cast<int>(check.integer(section, "in_flight", "allreduce.in_flight", top, 2, 64));
  ladder.steps = read_by_bytes<LadderStep>(
      check, check.field(section, "ladder", "allreduce.ladder", top), "allreduce.ladder", top, "step",
      [&check, &top](const json& item, const std::string& path, LadderStep& step) {
        step.one = check.timing(item, "one", path + ".one", top);
        step.together = check.timing(item, "together", path + ".together", top);
      });
  ladder.in_flight_gain = check.number(section, "in_flight_gain", "allreduce.in_flight_gain", top, true);
  if (ladder.in_flight_gain > ladder.in_flight) {
    check.fail(top, "allreduce.in_flight_gain in (0, in_flight = " + std::to_string(ladder.in_flight) + "]",
               json(ladder.in_flight_gain).dump());
  }
}

void read_compute(const ProfileChecker& check, const json& root, MachineProfile& profile) {
  const std::string top = "compute";
  const json& section = check.object(root, top, top, top);
  ComputeColocation& compute = profile.compute;
  compute.kernel = check.string(section, "kernel", "compute.kernel", top);
  compute.alone = check.timing(section, "alone", "compute.alone", top);
  compute.together = check.timing(section, "together", "compute.together", top);
  if (section.contains("slowest")) compute.slowest = check.timing(section, "slowest", "compute.slowest", top);
  compute.effective_cores = check.number(section, "effective_cores", "compute.effective_cores", top, true);
  if (compute.effective_cores > profile.ranks_per_host) {
    check.fail(top, "compute.effective_cores in (0, ranks_per_host = " + std::to_string(profile.ranks_per_host) + "]",
               json(compute.effective_cores).dump());
  }
  if (!section.contains("by_ranks")) return;
  const json& items = section.at("by_ranks");
  if (!items.is_array() || items.empty()) {
    check.fail(top, "compute.by_ranks to be a non-empty array", ProfileChecker::describe(items));
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = "compute.by_ranks[" + std::to_string(i) + "]";
    if (!items[i].is_object()) check.fail(top, item + " to be an object", ProfileChecker::describe(items[i]));
    ColocationStep step;
    const int least = compute.by_ranks.empty() ? 2 : compute.by_ranks.back().ranks + 1;
    step.ranks = static_cast<int>(check.integer(items[i], "ranks", item + ".ranks", top, least, profile.ranks_per_host));
    step.together = check.timing(items[i], "together", item + ".together", top);
    if (items[i].contains("slowest")) step.slowest = check.timing(items[i], "slowest", item + ".slowest", top);
    step.effective_cores = check.number(items[i], "effective_cores", item + ".effective_cores", top, true);
    if (step.effective_cores > step.ranks) {
      check.fail(top, item + ".effective_cores in (0, ranks = " + std::to_string(step.ranks) + "]",
                 json(step.effective_cores).dump());
    }
    compute.by_ranks.push_back(step);
  }
  if (compute.by_ranks.back().ranks != profile.ranks_per_host) {
    check.fail(top, "compute.by_ranks to end at ranks_per_host = " + std::to_string(profile.ranks_per_host),
               std::to_string(compute.by_ranks.back().ranks));
  }
}

// A fraction in (0, 1].
double fraction(const ProfileChecker& check, const json& section, const std::string& key, const std::string& path,
                const std::string& top) {
  const double value = check.number(section, key, path, top, true);
  if (value > 1) check.fail(top, path + " in (0, 1]", json(value).dump());
  return value;
}

void read_overlap(const ProfileChecker& check, const json& root, MachineProfile& profile) {
  const std::string top = "overlap";
  const json& section = check.object(root, top, top, top);
  ComputeCommOverlap overlap;
  overlap.bytes = check.integer(section, "bytes", "overlap.bytes", top, 4, std::numeric_limits<std::int64_t>::max());
  overlap.allreduce_alone = check.timing(section, "allreduce_alone", "overlap.allreduce_alone", top);
  overlap.allreduce_busy = check.timing(section, "allreduce_busy", "overlap.allreduce_busy", top);
  overlap.compute_quiet = check.timing(section, "compute_quiet", "overlap.compute_quiet", top);
  overlap.compute_busy = check.timing(section, "compute_busy", "overlap.compute_busy", top);
  overlap.allreduce_fraction = fraction(check, section, "allreduce_fraction", "overlap.allreduce_fraction", top);
  overlap.compute_fraction = fraction(check, section, "compute_fraction", "overlap.compute_fraction", top);
  if (section.contains("by_size")) {
    overlap.by_size = read_by_bytes<OverlapAtSize>(
        check, section.at("by_size"), "overlap.by_size", top, "size",
        [&check, &top](const json& item, const std::string& path, OverlapAtSize& at) {
          at.allreduce_alone = check.timing(item, "allreduce_alone", path + ".allreduce_alone", top);
          at.allreduce_busy = check.timing(item, "allreduce_busy", path + ".allreduce_busy", top);
        });
  }
  profile.overlap = overlap;
}

void read_sleep(const ProfileChecker& check, const json& root, MachineProfile& profile) {
  const std::string top = "sleep";
  const json& section = check.object(root, top, top, top);
  SleepResume sleep;
  sleep.requested_s = check.number(section, "requested_s", "sleep.requested_s", top, true);
  sleep.slept = check.timing(section, "slept", "sleep.slept", top);
  sleep.resumed = check.timing(section, "resumed", "sleep.resumed", top);
  sleep.hot = check.timing(section, "hot", "sleep.hot", top);
  sleep.resume_cost_s = check.number(section, "resume_cost_s", "sleep.resume_cost_s", top, false);
  profile.sleep = sleep;
}

}  // namespace

Timing timing_of(std::vector<double> seconds) {
  Timing timing;
  if (seconds.empty()) return timing;
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  timing.median_s = n % 2 == 1 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  timing.min_s = seconds.front();
  timing.max_s = seconds.back();
  timing.samples = static_cast<int>(n);
  return timing;
}

std::vector<double> slowest_per_host_and_round(const std::vector<double>& rank_major,
                                               const std::vector<std::string>& hosts, int rounds) {
  if (rounds < 0 || rank_major.size() != hosts.size() * static_cast<std::size_t>(rounds)) {
    throw std::invalid_argument("slowest_per_host_and_round: expected " + std::to_string(rounds) +
                                " samples for each of " + std::to_string(hosts.size()) + " ranks, got " +
                                std::to_string(rank_major.size()));
  }
  // Each rank's host as an index, hosts numbered in the order of their first rank.
  std::vector<std::size_t> host_of(hosts.size());
  std::map<std::string, std::size_t> index;
  for (std::size_t rank = 0; rank < hosts.size(); ++rank) {
    host_of[rank] = index.emplace(hosts[rank], index.size()).first->second;
  }
  std::vector<double> slowest;
  for (int round = 0; round < rounds; ++round) {
    std::vector<double> last(index.size(), 0.0);
    for (std::size_t rank = 0; rank < hosts.size(); ++rank) {
      const double sample = rank_major[rank * static_cast<std::size_t>(rounds) + static_cast<std::size_t>(round)];
      last[host_of[rank]] = std::max(last[host_of[rank]], sample);
    }
    for (double host_last : last) {
      if (host_last > 0) slowest.push_back(host_last);
    }
  }
  return slowest;
}

std::string machine_profile_to_json(const MachineProfile& profile) {
  ordered_json out;
  // The version the content is: a profile without the overlap and sleep sections (one read
  // from a version 1 file) is written as version 1, so that it reads back.
  out[kVersionKey] = profile.overlap && profile.sleep ? kMachineProfileVersion : 1;
  out["tool"] = {{"name", profile.tool_name}, {"version", profile.tool_version}, {"git_sha", profile.git_sha}};
  out["created_utc"] = profile.created_utc;
  out["launcher"] = profile.launcher;
  out["backend"] = profile.backend;
  out["device"] = profile.device;
  out["world_size"] = profile.world_size;
  out["hosts"] = profile.hosts;
  out["ranks_per_host"] = profile.ranks_per_host;
  out["threads"] = profile.threads;
  out["versions"] = {{"torch", profile.torch_version}, {"gloo", profile.gloo_version}, {"nccl", profile.nccl_version}};
  ordered_json ladder = ordered_json::array();
  for (const LadderStep& step : profile.allreduce.steps) {
    ladder.push_back({{"bytes", step.bytes}, {"one", timing_json(step.one)}, {"together", timing_json(step.together)}});
  }
  out["allreduce"] = {{"dtype", profile.allreduce.dtype},
                      {"in_flight", profile.allreduce.in_flight},
                      {"in_flight_gain", profile.allreduce.in_flight_gain},
                      {"ladder", ladder}};
  out["compute"] = {{"kernel", profile.compute.kernel},
                    {"alone", timing_json(profile.compute.alone)},
                    {"together", timing_json(profile.compute.together)}};
  if (profile.compute.slowest) out["compute"]["slowest"] = timing_json(*profile.compute.slowest);
  out["compute"]["effective_cores"] = profile.compute.effective_cores;
  if (!profile.compute.by_ranks.empty()) {
    ordered_json steps = ordered_json::array();
    for (const ColocationStep& step : profile.compute.by_ranks) {
      ordered_json item = {{"ranks", step.ranks}, {"together", timing_json(step.together)}};
      if (step.slowest) item["slowest"] = timing_json(*step.slowest);
      item["effective_cores"] = step.effective_cores;
      steps.push_back(std::move(item));
    }
    out["compute"]["by_ranks"] = std::move(steps);
  }
  if (profile.overlap) {
    const ComputeCommOverlap& overlap = *profile.overlap;
    out["overlap"] = {{"bytes", overlap.bytes},
                      {"allreduce_alone", timing_json(overlap.allreduce_alone)},
                      {"allreduce_busy", timing_json(overlap.allreduce_busy)},
                      {"compute_quiet", timing_json(overlap.compute_quiet)},
                      {"compute_busy", timing_json(overlap.compute_busy)},
                      {"allreduce_fraction", overlap.allreduce_fraction},
                      {"compute_fraction", overlap.compute_fraction}};
    if (!overlap.by_size.empty()) {
      ordered_json sizes = ordered_json::array();
      for (const OverlapAtSize& at : overlap.by_size) {
        sizes.push_back({{"bytes", at.bytes},
                         {"allreduce_alone", timing_json(at.allreduce_alone)},
                         {"allreduce_busy", timing_json(at.allreduce_busy)}});
      }
      out["overlap"]["by_size"] = std::move(sizes);
    }
  }
  if (profile.sleep) {
    const SleepResume& sleep = *profile.sleep;
    out["sleep"] = {{"requested_s", sleep.requested_s},
                    {"slept", timing_json(sleep.slept)},
                    {"resumed", timing_json(sleep.resumed)},
                    {"hot", timing_json(sleep.hot)},
                    {"resume_cost_s", sleep.resume_cost_s}};
  }
  return out.dump(2) + "\n";
}

MachineProfile machine_profile_from_json(const std::string& text, const std::string& file) {
  const json root = detail::parse_json(text, file, "a JSON machine profile (ddp-machine-profile --out)");
  const ProfileChecker check(text, file);
  if (!root.is_object()) check.fail(kVersionKey, "a JSON object (ddp-machine-profile --out)", ProfileChecker::describe(root));
  if (!root.contains(kVersionKey)) {
    check.fail(kVersionKey, "a machine profile with \"" + std::string(kVersionKey) + "\": " +
                                std::to_string(kMachineProfileVersion) + " (ddp-machine-profile --out)",
               "no such field");
  }
  MachineProfile profile;
  profile.version = static_cast<int>(
      check.integer(root, kVersionKey, kVersionKey, kVersionKey, 1, kMachineProfileVersion));
  read_provenance(check, root, profile);
  read_allreduce(check, root, profile);
  read_compute(check, root, profile);
  if (profile.version >= 2) {
    read_overlap(check, root, profile);
    read_sleep(check, root, profile);
  }
  return profile;
}

MachineProfile read_machine_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in) throw TraceError(path, 0, "a readable machine profile (ddp-machine-profile --out)", "no file that can be read");
  return machine_profile_from_json(text.str(), path);
}

void write_machine_profile(const std::string& path, const MachineProfile& profile) {
  write_file_atomically(path, machine_profile_to_json(profile), "a writable machine profile file");
}

}  // namespace ddpsim::trace
