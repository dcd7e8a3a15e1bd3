// Two runs' configurations compared setting by setting (configuration.hpp).
#include "ddpsim/trace/configuration.hpp"

#include <sstream>

namespace ddpsim::trace {
namespace {

std::string text_of(const std::vector<std::int64_t>& values) {
  std::string text = "[";
  for (const std::int64_t value : values) text += (text.size() > 1 ? ", " : "") + std::to_string(value);
  return text + "]";
}

std::string text_of(const std::string& value) { return value; }
std::string text_of(int value) { return std::to_string(value); }
std::string text_of(std::int64_t value) { return std::to_string(value); }
std::string text_of(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

template <typename T>
std::string differs(const std::string& name, const T& run, const T& reference, const std::string& whose) {
  if (run == reference) return "";
  return name + " " + text_of(run) + ", " + whose + " " + text_of(reference);
}

// The first key (in order) whose value differs, named "PREFIX KEY"; a missing key reads "(none)".
std::string differs(const std::string& prefix, const std::map<std::string, std::string>& run,
                    const std::map<std::string, std::string>& reference, const std::string& whose) {
  std::map<std::string, std::string> keys = run;
  keys.insert(reference.begin(), reference.end());
  const auto value = [](const std::map<std::string, std::string>& settings, const std::string& key) {
    const auto found = settings.find(key);
    return found == settings.end() ? std::string("(none)") : found->second;
  };
  for (const auto& [key, unused] : keys) {
    const std::string difference = differs(prefix + " " + key, value(run, key), value(reference, key), whose);
    if (!difference.empty()) return difference;
  }
  return "";
}

// Random stalls drawn from another seed are another sample of the same configuration: the
// runner gives each repetition its own seed so that repetitions do not repeat one set of draws.
std::map<std::string, std::string> without_seed(std::map<std::string, std::string> skew) {
  skew.erase("seed");
  return skew;
}

}  // namespace

std::string configuration_difference(const RunMeta& run, const RunMeta& reference, const std::string& whose) {
  // In the order a reader would look for the difference: job shape first, DDP settings last.
  for (const std::string& difference : {
           differs("world_size", run.world_size, reference.world_size, whose),
           differs("backend", run.backend, reference.backend, whose),
           differs("workload name", run.workload_name, reference.workload_name, whose),
           differs("workload", run.workload, reference.workload, whose),
           differs("bucket_cap_bytes", run.bucket_cap_bytes, reference.bucket_cap_bytes, whose),
           differs("first_bucket_cap_bytes", run.first_bucket_cap_bytes, reference.first_bucket_cap_bytes, whose),
           differs("bucket_cap_bytes_list", run.bucket_cap_bytes_list, reference.bucket_cap_bytes_list, whose),
           differs("timeout_s", run.timeout_s, reference.timeout_s, whose),
           differs("skew", without_seed(run.skew), without_seed(reference.skew), whose),
           differs("setting", run.settings, reference.settings, whose),
       }) {
    if (!difference.empty()) return difference;
  }
  return "";
}

}  // namespace ddpsim::trace
