// rank-R.meta.json: RunMeta to JSON and back, with the metadata checks of FORMAT.md.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/io.hpp"
#include "json_lines.hpp"

namespace ddpsim::trace {

using nlohmann::json;
using nlohmann::ordered_json;

std::string meta_to_json(const RunMeta& meta) {
  // ordered_json keeps the fields in FORMAT.md's order, which makes the files easy to read.
  ordered_json out;
  out["schema"] = kSchemaName;
  out["schema_version"] = meta.schema_version;
  out["source"] = meta.source;
  out["tool"] = {{"name", meta.tool.name},
                 {"version", meta.tool.version},
                 {"git_sha", meta.tool.git_sha}};
  out["start_time_utc"] = meta.start_time_utc;
  out["clock"] = meta.clock;
  out["host"] = meta.host;
  out["rank"] = meta.rank;
  out["local_rank"] = meta.local_rank;
  out["world_size"] = meta.world_size;
  out["backend"] = meta.backend;
  ordered_json workload = ordered_json::object();
  workload["name"] = meta.workload_name;
  for (const auto& [key, value] : meta.workload) workload[key] = value;
  out["workload"] = workload;
  ordered_json parameters = ordered_json::array();
  for (const Parameter& p : meta.parameters) {
    ordered_json parameter = {{"index", p.index}, {"name", p.name}, {"numel", p.numel}, {"dtype", p.dtype}};
    if (p.alone) parameter["alone"] = true;  // only when set: other traces read exactly as before
    parameters.push_back(std::move(parameter));
  }
  out["parameters"] = parameters;
  out["bucket_cap_bytes"] = meta.bucket_cap_bytes;
  out["first_bucket_cap_bytes"] = meta.first_bucket_cap_bytes;
  // Only when given: a trace without a list reads exactly as before.
  if (!meta.bucket_cap_bytes_list.empty()) out["bucket_cap_bytes_list"] = meta.bucket_cap_bytes_list;
  ordered_json assignments = ordered_json::array();
  for (const BucketAssignment& layout : meta.bucket_assignments) {
    assignments.push_back(
        {{"first_iteration", layout.first_iteration}, {"buckets", layout.buckets}});
  }
  out["bucket_assignments"] = assignments;
  out["timeout_s"] = meta.timeout_s;
  out["skew"] = ordered_json(meta.skew);
  out["settings"] = ordered_json(meta.settings);
  // Parameters one per line would be nicer for huge models, but dump(2) is what json.load and
  // every editor read; files stay small (a ResNet-18 has 62 parameters).
  return out.dump(2) + "\n";
}

namespace {

// Reads typed fields out of the parsed metadata and turns every mismatch into a TraceError
// that points at the line where the offending top-level key sits.
class MetaChecker {
 public:
  MetaChecker(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  [[noreturn]] void fail(const std::string& top_key, const std::string& expected,
                         const std::string& got) const {
    throw TraceError(file_, line_of_key(top_key), expected, got);
  }

  static std::string describe(const json& value) {
    std::string dumped = value.dump();
    if (dumped.size() > 60) dumped = dumped.substr(0, 57) + "...";
    return std::string(value.type_name()) + " " + dumped;
  }

  const json& field(const json& object, const std::string& key, const std::string& path,
                    const std::string& top_key) const {
    const auto it = object.find(key);
    if (it == object.end()) fail(top_key, "field \"" + path + "\"", "no such field");
    return *it;
  }

  std::string string_field(const json& object, const std::string& key, const std::string& path,
                           const std::string& top_key) const {
    const json& value = field(object, key, path, top_key);
    if (!value.is_string()) fail(top_key, path + " to be a string", describe(value));
    return value.get<std::string>();
  }

  std::int64_t int_value(const json& value, const std::string& path, const std::string& top_key,
                         std::int64_t min, std::int64_t max) const {
    bool fits = false;
    std::int64_t result = 0;
    if (value.is_number_unsigned()) {
      const auto u = value.get<std::uint64_t>();
      fits = u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      result = static_cast<std::int64_t>(u);
    } else if (value.is_number_integer()) {
      fits = true;
      result = value.get<std::int64_t>();
    }
    if (!fits) fail(top_key, path + " to be an integer", describe(value));
    if (result < min || result > max) {
      fail(top_key,
           path + " in [" + std::to_string(min) + ", " +
               (max == std::numeric_limits<std::int64_t>::max() ? std::string("inf")
                                                                : std::to_string(max)) +
               "]",
           std::to_string(result));
    }
    return result;
  }

  std::int64_t int_field(const json& object, const std::string& key, const std::string& path,
                         const std::string& top_key, std::int64_t min = 0,
                         std::int64_t max = std::numeric_limits<std::int64_t>::max()) const {
    return int_value(field(object, key, path, top_key), path, top_key, min, max);
  }

  const json& typed_field(const json& object, const std::string& key, json::value_t type,
                          const std::string& what) const {
    const json& value = field(object, key, key, key);
    if (value.type() != type) fail(key, key + " to be " + what, describe(value));
    return value;
  }

  std::map<std::string, std::string> string_map(const json& object, const std::string& key,
                                                const std::string& skip = "") const {
    const json& value = typed_field(object, key, json::value_t::object, "an object");
    std::map<std::string, std::string> out;
    for (const auto& [name, setting] : value.items()) {
      if (name == skip) continue;
      if (!setting.is_string()) {
        fail(key, key + "." + name + " to be a string", describe(setting));
      }
      out[name] = setting.get<std::string>();
    }
    return out;
  }

 private:
  long line_of_key(const std::string& key) const { return detail::json_key_line(text_, key); }

  const std::string& text_;
  const std::string& file_;
};

// Optional (added within version 1): absent means no per-bucket list.
void read_bucket_cap_list(const MetaChecker& check, const json& root, RunMeta& meta) {
  if (!root.contains("bucket_cap_bytes_list")) return;
  const json& list = check.typed_field(root, "bucket_cap_bytes_list", json::value_t::array, "an array");
  for (std::size_t i = 0; i < list.size(); ++i) {
    meta.bucket_cap_bytes_list.push_back(check.int_value(list[i], "bucket_cap_bytes_list[" + std::to_string(i) + "]",
                                                         "bucket_cap_bytes_list", 1,
                                                         std::numeric_limits<std::int64_t>::max()));
  }
}

void read_parameters(const MetaChecker& check, const json& root, RunMeta& meta) {
  const json& parameters = check.typed_field(root, "parameters", json::value_t::array, "an array");
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const std::string path = "parameters[" + std::to_string(i) + "]";
    const json& p = parameters[i];
    if (!p.is_object()) check.fail("parameters", path + " to be an object", check.describe(p));
    Parameter parameter;
    const auto index = static_cast<std::int64_t>(i);
    parameter.index = static_cast<int>(
        check.int_field(p, "index", path + ".index", "parameters", index, index));
    parameter.name = check.string_field(p, "name", path + ".name", "parameters");
    parameter.numel = check.int_field(p, "numel", path + ".numel", "parameters");
    parameter.dtype = check.string_field(p, "dtype", path + ".dtype", "parameters");
    if (dtype_size(parameter.dtype) == 0) {
      check.fail("parameters", path + ".dtype one of float32, float16, bfloat16, float64",
                 "\"" + parameter.dtype + "\"");
    }
    if (const auto alone = p.find("alone"); alone != p.end()) {
      if (!alone->is_boolean()) check.fail("parameters", path + ".alone to be true or false", check.describe(*alone));
      parameter.alone = alone->get<bool>();
    }
    meta.parameters.push_back(std::move(parameter));
  }
}

void read_bucket_assignments(const MetaChecker& check, const json& root, RunMeta& meta) {
  const json& layouts =
      check.typed_field(root, "bucket_assignments", json::value_t::array, "an array");
  const auto num_params = static_cast<std::int64_t>(meta.parameters.size());
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    const std::string path = "bucket_assignments[" + std::to_string(i) + "]";
    const json& entry = layouts[i];
    if (!entry.is_object()) {
      check.fail("bucket_assignments", path + " to be an object", check.describe(entry));
    }
    BucketAssignment layout;
    const std::int64_t min_first =
        meta.bucket_assignments.empty() ? 0 : meta.bucket_assignments.back().first_iteration + 1;
    layout.first_iteration = check.int_field(entry, "first_iteration", path + ".first_iteration",
                                             "bucket_assignments", min_first);
    const json& buckets = check.field(entry, "buckets", path + ".buckets", "bucket_assignments");
    if (!buckets.is_array()) {
      check.fail("bucket_assignments", path + ".buckets to be an array", check.describe(buckets));
    }
    std::set<std::int64_t> seen;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      const std::string bucket_path = path + ".buckets[" + std::to_string(b) + "]";
      const json& bucket = buckets[b];
      if (!bucket.is_array()) {
        check.fail("bucket_assignments", bucket_path + " to be an array of parameter indices",
                   check.describe(bucket));
      }
      std::vector<int> params;
      for (std::size_t k = 0; k < bucket.size(); ++k) {
        const std::string param_path = bucket_path + "[" + std::to_string(k) + "]";
        if (num_params == 0) {
          check.fail("bucket_assignments", param_path + " to be a parameter index",
                     "a parameter index but there are no parameters");
        }
        const std::int64_t param = check.int_value(bucket[k], param_path, "bucket_assignments",
                                                   0, num_params - 1);
        if (!seen.insert(param).second) {
          check.fail("bucket_assignments", param_path + " to be a parameter in no other bucket",
                     "parameter " + std::to_string(param) + " again");
        }
        params.push_back(static_cast<int>(param));
      }
      layout.buckets.push_back(std::move(params));
    }
    meta.bucket_assignments.push_back(std::move(layout));
  }
}

}  // namespace


RunMeta meta_from_json(const std::string& text, const std::string& file) {
  const json root = detail::parse_json(text, file, "valid JSON");
  const MetaChecker check(text, file);
  if (!root.is_object()) {
    throw TraceError(file, 1, "a JSON object", MetaChecker::describe(root));
  }

  RunMeta meta;
  const std::string schema = check.string_field(root, "schema", "schema", "schema");
  if (schema != kSchemaName) {
    check.fail("schema", std::string("schema \"") + kSchemaName + "\"", "\"" + schema + "\"");
  }
  const json& version = check.field(root, "schema_version", "schema_version", "schema_version");
  if (!version.is_number_integer() || version.get<std::int64_t>() != kSchemaVersion) {
    check.fail("schema_version", "schema_version " + std::to_string(kSchemaVersion),
               MetaChecker::describe(version));
  }
  meta.schema_version = kSchemaVersion;
  meta.source = check.string_field(root, "source", "source", "source");

  const json& tool = check.typed_field(root, "tool", json::value_t::object, "an object");
  meta.tool.name = check.string_field(tool, "name", "tool.name", "tool");
  meta.tool.version = check.string_field(tool, "version", "tool.version", "tool");
  meta.tool.git_sha = check.string_field(tool, "git_sha", "tool.git_sha", "tool");

  meta.start_time_utc = check.string_field(root, "start_time_utc", "start_time_utc",
                                           "start_time_utc");
  meta.clock = check.string_field(root, "clock", "clock", "clock");
  meta.host = check.string_field(root, "host", "host", "host");

  constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
  meta.world_size =
      static_cast<int>(check.int_field(root, "world_size", "world_size", "world_size", 1, kMaxInt));
  meta.rank = static_cast<int>(
      check.int_field(root, "rank", "rank", "rank", 0, meta.world_size - 1));
  meta.local_rank =
      static_cast<int>(check.int_field(root, "local_rank", "local_rank", "local_rank", 0, kMaxInt));
  meta.backend = check.string_field(root, "backend", "backend", "backend");

  const json& workload = check.typed_field(root, "workload", json::value_t::object, "an object");
  meta.workload_name = check.string_field(workload, "name", "workload.name", "workload");
  meta.workload = check.string_map(root, "workload", "name");

  read_parameters(check, root, meta);
  meta.bucket_cap_bytes =
      check.int_field(root, "bucket_cap_bytes", "bucket_cap_bytes", "bucket_cap_bytes");
  meta.first_bucket_cap_bytes = check.int_field(root, "first_bucket_cap_bytes",
                                                "first_bucket_cap_bytes", "first_bucket_cap_bytes");
  read_bucket_cap_list(check, root, meta);
  read_bucket_assignments(check, root, meta);

  const json& timeout = check.field(root, "timeout_s", "timeout_s", "timeout_s");
  if (!timeout.is_number()) {
    check.fail("timeout_s", "timeout_s to be a number", MetaChecker::describe(timeout));
  }
  meta.timeout_s = timeout.get<double>();
  meta.skew = check.string_map(root, "skew");
  meta.settings = check.string_map(root, "settings");
  return meta;
}

}  // namespace ddpsim::trace
