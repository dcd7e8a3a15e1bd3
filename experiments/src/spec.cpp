#include "spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include <toml++/toml.h>

#include "names.hpp"

namespace ddpsim::experiment {

namespace {
std::string one_line(std::string message) {
  for (char& c : message)
    if (std::iscntrl(static_cast<unsigned char>(c))) c = '?';
  return message;
}
}  // namespace

SpecError::SpecError(const std::string& message) : std::runtime_error(one_line(message)) {}

namespace {

const char* type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

// Reads one table of the spec, with every message naming file, line and key.
class Section {
 public:
  Section(const toml::table& table, std::string name, const std::string& path)
      : table_(table), name_(std::move(name)), path_(path) {}

  // Every key must be one we know: a typo must not silently fall back to a default.
  void allow_only(std::initializer_list<std::string_view> allowed) const {
    for (const auto& [key, node] : table_) {
      bool known = false;
      for (auto a : allowed) known = known || key.str() == a;
      if (!known) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(node, "unknown key '" + std::string(key.str()) + "' in " + where() +
                       " (expected one of: " + list + ")");
      }
    }
  }

  const toml::node* find(std::string_view key) const { return table_.get(key); }

  [[noreturn]] void fail(const toml::node& node, const std::string& message) const {
    std::ostringstream out;
    out << path_;
    if (node.source().begin.line > 0) out << ':' << node.source().begin.line;
    out << ": " << message;
    throw SpecError(out.str());
  }
  [[noreturn]] void wrong_type(const toml::node& node, std::string_view key,
                               const std::string& expected) const {
    fail(node, where() + " " + std::string(key) + ": expected " + expected + ", got " +
                   type_name(node));
  }

  std::optional<std::string> string(std::string_view key) const {
    const auto* node = find(key);
    if (!node) return std::nullopt;
    if (!node->is_string()) wrong_type(*node, key, "a string");
    return node->as_string()->get();
  }
  std::optional<bool> boolean(std::string_view key) const {
    const auto* node = find(key);
    if (!node) return std::nullopt;
    if (!node->is_boolean()) wrong_type(*node, key, "a boolean");
    return node->as_boolean()->get();
  }
  std::optional<int> integer(std::string_view key, long min_value) const {
    const auto* node = find(key);
    if (!node) return std::nullopt;
    if (!node->is_integer()) wrong_type(*node, key, "an integer");
    return checked_int(*node, key, min_value);
  }
  std::optional<double> number(std::string_view key, bool positive) const {
    const auto* node = find(key);
    if (!node) return std::nullopt;
    return as_number(*node, key, positive);
  }
  // A scalar stands for a one-element list, so `world_sizes = 2` works as well as `[2]`.
  std::optional<std::vector<int>> integers(std::string_view key, long min_value,
                                           long max_value = 1'000'000'000) const {
    std::optional<std::vector<int>> out;
    for_each_element(key, [&](const toml::node& element) {
      if (!element.is_integer()) wrong_type(element, key, "an integer or an array of integers");
      if (!out) out.emplace();
      out->push_back(checked_int(element, key, min_value, max_value));
    });
    return out;
  }
  std::optional<std::vector<double>> numbers(std::string_view key, bool positive) const {
    std::optional<std::vector<double>> out;
    for_each_element(key, [&](const toml::node& element) {
      if (!out) out.emplace();
      out->push_back(as_number(element, key, positive));
    });
    return out;
  }
  std::optional<std::vector<std::string>> strings(std::string_view key) const {
    std::optional<std::vector<std::string>> out;
    const auto* node = find(key);
    if (!node) return out;
    if (!node->is_array()) wrong_type(*node, key, "an array of strings");
    out.emplace();
    for (const auto& element : *node->as_array()) {
      if (!element.is_string()) wrong_type(element, key, "an array of strings");
      out->push_back(element.as_string()->get());
    }
    return out;
  }
  // A skew axis: each value is "" (none), one flag value, or an array of flag values.
  std::optional<std::vector<SkewSetting>> skew_axis(std::string_view key) const {
    std::optional<std::vector<SkewSetting>> out;
    for_each_element(key, [&](const toml::node& element) {
      if (!out) out.emplace();
      SkewSetting setting;
      if (element.is_string()) {
        if (!element.as_string()->get().empty()) setting.push_back(element.as_string()->get());
      } else if (element.is_array()) {
        for (const auto& flag : *element.as_array()) {
          if (!flag.is_string()) wrong_type(flag, key, "a string like \"1=2.0\"");
          setting.push_back(flag.as_string()->get());
        }
      } else {
        wrong_type(element, key, "a string like \"1=2.0\" (or an array of them)");
      }
      out->push_back(std::move(setting));
    });
    return out;
  }

  std::string where() const { return "[" + name_ + "]"; }

 private:
  template <typename Fn>
  void for_each_element(std::string_view key, Fn&& fn) const {
    const auto* node = find(key);
    if (!node) return;
    if (const auto* array = node->as_array()) {
      if (array->empty()) fail(*node, where() + " " + std::string(key) + ": expected at least one value");
      for (const auto& element : *array) fn(element);
    } else {
      fn(*node);
    }
  }
  int checked_int(const toml::node& node, std::string_view key, long min_value,
                  long max_value = 1'000'000'000) const {
    const auto value = node.as_integer()->get();
    if (value < min_value || value > max_value)
      fail(node, where() + " " + std::string(key) + ": expected an integer " +
                     (value < min_value ? ">= " + std::to_string(min_value)
                                        : "<= " + std::to_string(max_value)) +
                     ", got " + std::to_string(value));
    return static_cast<int>(value);
  }
  double as_number(const toml::node& node, std::string_view key, bool positive) const {
    double value = 0;
    if (node.is_integer()) {
      value = static_cast<double>(node.as_integer()->get());
    } else if (node.is_floating_point()) {
      value = node.as_floating_point()->get();
    } else {
      wrong_type(node, key, "a number");
    }
    if (!std::isfinite(value))
      fail(node, where() + " " + std::string(key) + ": expected a finite number, got " +
                     format_number(value));
    if (positive && !(value > 0))
      fail(node, where() + " " + std::string(key) + ": expected a number > 0, got " +
                     format_number(value));
    return value;
  }

  const toml::table& table_;
  std::string name_;
  const std::string& path_;
};

// Each top-level key must be one of our tables.
const toml::table& sub_table(const toml::table& root, std::string_view key, const std::string& path,
                             const toml::table& empty) {
  const auto* node = root.get(key);
  if (!node) return empty;
  if (!node->is_table()) {
    Section top(root, "top level", path);
    top.wrong_type(*node, key, "a table [" + std::string(key) + "]");
  }
  return *node->as_table();
}

void parse_experiment(const Section& s, ExperimentSpec& spec) {
  s.allow_only({"name", "description", "repetitions"});
  if (auto v = s.string("name")) spec.name = *v;
  if (auto v = s.string("description")) spec.description = *v;
  if (auto v = s.integer("repetitions", 1)) spec.repetitions = *v;
}

void parse_workload(const Section& s, Workload& w) {
  s.allow_only({"model", "iterations", "batch_size", "threads", "seed", "optimizer", "lr", "args"});
  if (auto v = s.string("model")) w.model = *v;
  if (auto v = s.integer("iterations", 1)) w.iterations = *v;
  if (auto v = s.integer("batch_size", 1)) w.batch_size = *v;
  if (auto v = s.integer("threads", 1)) w.threads = *v;
  if (auto v = s.integer("seed", 0)) w.seed = *v;
  if (auto v = s.string("optimizer")) w.optimizer = *v;
  if (auto v = s.number("lr", true)) w.lr = *v;
  if (auto v = s.strings("args")) w.args = *v;
}

void parse_grid(const Section& s, Grid& g) {
  s.allow_only({"world_sizes", "bucket_cap_mb", "first_bucket_cap_mb", "slowdown", "delay",
                "delay_dist", "timeout_s", "hosts"});
  // ddp-launch starts at most 4096 ranks on one node.
  if (auto v = s.integers("world_sizes", 1, 4096)) g.world_sizes = *v;
  if (auto v = s.numbers("bucket_cap_mb", true)) g.bucket_cap_mb = *v;
  if (const auto* node = s.find("first_bucket_cap_mb"); node && node->is_string()) {
    if (node->as_string()->get() != "bucket_cap_mb")
      s.fail(*node, "[grid] first_bucket_cap_mb: expected a number, an array of numbers or "
                    "\"bucket_cap_mb\" (the same cap as the other buckets), got \"" +
                        node->as_string()->get() + "\"");
    g.first_bucket_cap_follows = true;
  } else if (auto v = s.numbers("first_bucket_cap_mb", true)) {
    g.first_bucket_cap_mb = *v;
  }
  if (auto v = s.skew_axis("slowdown")) g.slowdown = *v;
  if (auto v = s.skew_axis("delay")) g.delay = *v;
  if (auto v = s.skew_axis("delay_dist")) g.delay_dist = *v;
  if (auto v = s.numbers("timeout_s", true)) g.timeout_s = *v;
  if (auto v = s.integers("hosts", 1, 4096)) g.hosts = *v;
}

// A rate as tc writes it: digits, then one of tc's units ("200mbit", "1.5gbit").
bool is_tc_rate(const std::string& rate) {
  size_t digits = 0;
  while (digits < rate.size() && (std::isdigit(static_cast<unsigned char>(rate[digits])) ||
                                  (rate[digits] == '.' && digits > 0)))
    ++digits;
  if (digits == 0) return false;
  const std::string unit = rate.substr(digits);
  for (const char* known : {"bit", "kbit", "mbit", "gbit", "tbit", "bps", "kbps", "mbps", "gbps", "tbps"})
    if (unit == known) return true;
  return false;
}

// [launch]: the testbed (`hosts` here is a one-value [grid] hosts axis) and the cores' hold.
void parse_launch(const Section& s, Launch& l, Grid& g, const std::string& path) {
  s.allow_only({"testbed_rate", "hosts", "hold_cores"});
  if (auto v = s.boolean("hold_cores")) l.hold_cores = *v;
  if (auto v = s.string("testbed_rate")) {
    if (!is_tc_rate(*v))
      s.fail(*s.find("testbed_rate"), "[launch] testbed_rate: expected a rate in tc units like "
                                      "\"200mbit\", got \"" + *v + "\"");
    l.testbed_rate = *v;
  }
  if (const auto* node = s.find("hosts")) {
    if (!node->is_integer()) s.wrong_type(*node, "hosts", "an integer");
    if (!g.hosts.empty())
      s.fail(*node, "[launch] hosts: expected hosts in one place, got [grid] hosts too");
    g.hosts = {*s.integer("hosts", 1)};
  }
  if (!l.testbed()) {
    for (int h : g.hosts)
      if (h > 1)
        throw SpecError(path + ": [launch] testbed_rate: expected a rate (several hosts run on "
                               "scripts/testbed.sh), got none");
  } else if (g.hosts.empty()) {
    throw SpecError(path + ": [launch] hosts: expected a number of hosts (or a [grid] hosts "
                           "axis) with testbed_rate, got none");
  }
  for (int h : g.hosts)
    for (int w : g.world_sizes)
      if (w % h != 0)
        throw SpecError(path + ": [grid] world_sizes: expected a multiple of hosts = " +
                        std::to_string(h) + " (ranks per host = world size / hosts), got " +
                        std::to_string(w));
}

std::string quoted_setting(const SkewSetting& setting) {
  std::string text;
  for (const auto& flag : setting) text += (text.empty() ? "" : ", ") + flag;
  return "\"" + text + "\"";
}

template <typename T>
std::string value_list(const std::vector<T>& values) {
  std::string text;
  for (const auto& v : values) {
    text += text.empty() ? "" : ", ";
    if constexpr (std::is_same_v<T, int>) text += std::to_string(v);
    else text += format_number(v);
  }
  return text;
}

// [predict] baseline = { AXIS = VALUE, ... }: one grid point, without skew.
void parse_baseline(const Section& predict, const toml::node& node, const Grid& grid,
                    const std::string& path, Baseline& b) {
  if (!node.is_table()) predict.wrong_type(node, "baseline", "an inline table like { bucket_cap_mb = 25 }");
  Section s(*node.as_table(), "predict.baseline", path);
  s.allow_only({"world_sizes", "bucket_cap_mb", "first_bucket_cap_mb", "slowdown", "delay",
                "delay_dist", "timeout_s", "hosts"});
  b.enabled = true;
  // A numeric axis: the named value must be one of the grid's; an unnamed one must have one.
  auto pick = [&](std::string_view key, const auto& values, auto& out, bool integer) {
    using Value = typename std::decay_t<decltype(values)>::value_type;
    if (const auto* v = s.find(key)) {
      Value value{};
      if (integer) {
        if (!v->is_integer()) s.wrong_type(*v, key, "an integer");
        value = static_cast<Value>(v->as_integer()->get());
      } else {
        value = static_cast<Value>(*s.number(key, true));
      }
      bool found = false;
      for (const auto& g : values) found = found || g == value;
      if (!found) {
        std::ostringstream got;
        if (integer) got << static_cast<long>(value); else got << format_number(static_cast<double>(value));
        s.fail(*v, "[predict.baseline] " + std::string(key) + ": expected one of the [grid] values (" +
                       (values.empty() ? std::string("none: the axis is not in [grid]") : value_list(values)) +
                       "), got " + got.str());
      }
      out = value;
    } else if (values.size() > 1) {
      predict.fail(node, "[predict] baseline: expected a value for [grid] " + std::string(key) +
                             " (it has " + std::to_string(values.size()) + " values), got none");
    } else if (values.size() == 1) {
      out = values.front();
    }
  };
  pick("world_sizes", grid.world_sizes, b.world_size, true);
  pick("bucket_cap_mb", grid.bucket_cap_mb, b.bucket_cap_mb, false);
  pick("first_bucket_cap_mb", grid.first_bucket_cap_mb, b.first_bucket_cap_mb, false);
  pick("timeout_s", grid.timeout_s, b.timeout_s, false);
  pick("hosts", grid.hosts, b.hosts, true);
  // Skew: the baseline runs without any (a replay can add skew, never remove it).
  for (const auto& [key, axis] : {std::pair<std::string_view, const std::vector<SkewSetting>*>{"slowdown", &grid.slowdown},
                                  {"delay", &grid.delay}, {"delay_dist", &grid.delay_dist}}) {
    if (const auto* v = s.find(key)) {
      if (!v->is_string()) s.wrong_type(*v, key, "\"\" (no skew)");
      if (!v->as_string()->get().empty())
        s.fail(*v, "[predict.baseline] " + std::string(key) + ": expected \"\" (no skew: a replay "
                   "cannot remove skew), got \"" + v->as_string()->get() + "\"");
      bool unskewed = false;
      for (const auto& setting : *axis) unskewed = unskewed || setting.empty();
      if (!unskewed)
        s.fail(*v, "[predict.baseline] " + std::string(key) + ": expected \"\" among the [grid] " +
                       std::string(key) + " values, got none");
    } else if (axis->size() > 1) {
      predict.fail(node, "[predict] baseline: expected a value for [grid] " + std::string(key) +
                             " (it has " + std::to_string(axis->size()) + " values), got none");
    } else if (!axis->front().empty()) {
      predict.fail(node, "[predict] baseline: expected a point without skew (a replay cannot remove "
                         "skew), got [grid] " + std::string(key) + " = " + quoted_setting(axis->front()));
    }
  }
}

void parse_limits(const Section& s, Limits& l) {
  s.allow_only({"job_timeout_s", "tool_timeout_s"});
  if (auto v = s.number("job_timeout_s", true)) l.job_timeout_s = *v;
  if (auto v = s.number("tool_timeout_s", true)) l.tool_timeout_s = *v;
}

void parse_predict(const Section& s, const std::string& path, const Grid& grid, Prediction& p) {
  s.allow_only({"enabled", "replay_args", "calibrate_args", "world_sizes", "world_size_flag",
                "timeouts_s", "timeout_flag", "whatif", "min_world_size", "baseline",
                "world_size_args", "pool_baselines", "corun_profile", "resume_profile",
                "machine_profile", "network"});
  if (const auto* node = s.find("baseline")) parse_baseline(s, *node, grid, path, p.baseline);
  if (auto v = s.strings("world_size_args")) p.world_size_args = *v;
  if (auto v = s.boolean("enabled")) p.enabled = *v;
  if (auto v = s.boolean("pool_baselines")) p.pool_baselines = *v;
  if (auto v = s.integers("corun_profile", 2, 64)) {
    const auto* node = s.find("corun_profile");
    p.corun_profile = *v;
    std::sort(p.corun_profile.begin(), p.corun_profile.end());
    if (std::adjacent_find(p.corun_profile.begin(), p.corun_profile.end()) != p.corun_profile.end())
      s.fail(*node, "[predict] corun_profile: expected distinct numbers of co-located ranks, got one twice");
    if (!p.baseline.enabled)
      s.fail(*node, "[predict] corun_profile: expected a [predict] baseline (the profile serves the "
                    "predictions from it that change the world size), got none");
    for (const auto& arg : p.world_size_args)
      if (arg == "--cores" || arg == "--effective-cores" || arg.rfind("--cores=", 0) == 0 ||
          arg.rfind("--effective-cores=", 0) == 0)
        s.fail(*node, "[predict] corun_profile: expected no " + arg.substr(0, arg.find('=')) +
                          " in world_size_args (the profile measures the effective cores), got one");
  }
  if (auto v = s.integer("min_world_size", 1)) p.min_world_size = *v;
  if (auto v = s.strings("replay_args")) p.replay_args = *v;
  if (auto v = s.number("resume_profile", true)) {
    const auto* node = s.find("resume_profile");
    if (*v > 1)
      s.fail(*node, "[predict] resume_profile: expected the fraction of the measured resume cost to charge, "
                    "in (0, 1], got " + format_number(*v));
    if (!p.baseline.enabled)
      s.fail(*node, "[predict] resume_profile: expected a [predict] baseline (the profile serves the "
                    "predictions from it), got none");
    for (const auto& arg : p.replay_args)
      if (arg == "--sleep-resume-cost" || arg.rfind("--sleep-resume-cost=", 0) == 0)
        s.fail(*node, "[predict] resume_profile: expected no --sleep-resume-cost in replay_args (the "
                      "profile measures it), got one");
    p.resume_profile = *v;
  }
  if (auto v = s.boolean("machine_profile")) {
    const auto* node = s.find("machine_profile");
    if (*v && !p.baseline.enabled)
      s.fail(*node, "[predict] machine_profile: expected a [predict] baseline (the profile is measured "
                    "launched as the baseline's job), got none");
    for (const auto& arg : p.replay_args)
      if (*v && (arg == "--machine" || arg.rfind("--machine=", 0) == 0))
        s.fail(*node, "[predict] machine_profile: expected no --machine in replay_args (the sitting "
                      "measures it), got one");
    p.machine_profile = *v;
  }
  if (auto v = s.string("network")) {
    const auto* node = s.find("network");
    if (*v != "trace" && *v != "machine")
      s.fail(*node, "[predict] network: expected \"trace\" or \"machine\", got \"" + *v + "\"");
    if (*v == "machine" && !p.machine_profile)
      s.fail(*node, "[predict] network: expected machine_profile = true beside \"machine\" (the profile "
                    "measured in the sitting is the network), got none");
    p.network = *v;
  }
  if (auto v = s.strings("calibrate_args")) p.calibrate_args = *v;
  const std::string world_size_flag = s.string("world_size_flag").value_or("--world-size");
  p.timeout_flag = s.string("timeout_flag").value_or("--timeout");
  const std::string& timeout_flag = p.timeout_flag;
  if (auto sizes = s.integers("world_sizes", 1)) {
    for (int w : *sizes) {
      WhatIf what_if{"w" + std::to_string(w), {world_size_flag, std::to_string(w)}, w, {}};
      p.what_ifs.push_back(std::move(what_if));
    }
  }
  if (auto timeouts = s.numbers("timeouts_s", true)) {
    for (double t : *timeouts) {
      WhatIf what_if{"timeout" + format_number(t), {timeout_flag, format_number(t)}, {}, t};
      p.what_ifs.push_back(std::move(what_if));
    }
  }
  if (const auto* node = s.find("whatif")) {
    const auto* array = node->as_array();
    if (!array || !array->is_array_of_tables())
      s.wrong_type(*node, "whatif", "an array of tables [[predict.whatif]]");
    for (const auto& element : *array) {
      Section w(*element.as_table(), "[predict.whatif]", path);
      w.allow_only({"name", "args"});
      auto name = w.string("name");
      if (!name || !is_safe_name(*name))
        w.fail(element, "[[predict.whatif]] name: expected a non-empty name of letters, digits, "
                        "'.', '_', '-'");
      p.what_ifs.push_back({*name, w.strings("args").value_or(std::vector<std::string>{}), {}, {}});
    }
  }
  std::set<std::string> seen;
  for (const auto& what_if : p.what_ifs) {
    if (p.baseline.enabled && what_if.name.rfind("from-", 0) == 0)
      throw SpecError(path + ": [predict] what-if '" + what_if.name + "': expected a name not "
                             "starting with 'from-' (the predictions from the baseline are named so)");
    if (!seen.insert(what_if.name).second)
      throw SpecError(path + ": [predict] what-if '" + what_if.name + "' is defined twice");
  }
}

// [advice]: which answer of ddp-sim advise the runs act on, and how they check it. The keys
// of the timeout check belong to it alone; the grid must leave the advised axis to the advice.
void parse_advice(const Section& s, const toml::node& table, const ExperimentSpec& spec, AdviceCheck& a) {
  s.allow_only({"kind", "advise_args", "machine_profile", "baseline_runs", "follow_factor", "follow_runs", "hang_runs", "hang_rank",
                "hang_iteration", "hang_stall_factor"});
  const auto kind = s.string("kind");
  if (!kind || (*kind != "timeout" && *kind != "bucket" && *kind != "stragglers"))
    s.fail(kind ? *s.find("kind") : table, "[advice] kind: expected \"timeout\", \"bucket\" or \"stragglers\", got " +
                                               (kind ? "\"" + *kind + "\"" : std::string("none")));
  a.kind = *kind;
  if (auto v = s.strings("advise_args")) a.advise_args = *v;
  if (auto v = s.boolean("machine_profile")) a.machine_profile = *v;
  if (a.machine_profile && std::find(a.advise_args.begin(), a.advise_args.end(), "--machine") != a.advise_args.end())
    s.fail(*s.find("machine_profile"), "[advice] machine_profile: expected no --machine in advise_args beside it "
                                       "(the measured profile is given), got both");
  if (const auto* node = s.find("baseline_runs"); node && a.kind != "bucket")
    s.fail(*node, "[advice] baseline_runs: expected only with kind = \"bucket\", got kind = \"" + a.kind + "\"");
  if (auto v = s.integer("baseline_runs", 1)) a.baseline_runs = *v;
  if (a.kind != "timeout")
    for (const char* key : {"follow_factor", "follow_runs", "hang_runs", "hang_rank", "hang_iteration",
                            "hang_stall_factor"})
      if (const auto* node = s.find(key))
        s.fail(*node, "[advice] " + std::string(key) + ": expected only with kind = \"timeout\", got kind = \"" +
                          a.kind + "\"");
  if (auto v = s.integer("follow_factor", 1)) a.follow_factor = *v;
  if (auto v = s.integer("follow_runs", 0)) a.follow_runs = *v;
  if (auto v = s.integer("hang_runs", 0)) a.hang_runs = *v;
  if (auto v = s.integer("hang_rank", 0)) a.hang_rank = *v;
  if (auto v = s.integer("hang_iteration", 0)) a.hang_iteration = *v;
  if (auto v = s.number("hang_stall_factor", true)) {
    if (*v <= 1)
      s.fail(*s.find("hang_stall_factor"), "[advice] hang_stall_factor: expected a number > 1 (a stall "
                                           "longer than the timeout), got " + format_number(*v));
    a.hang_stall_factor = *v;
  }
  const Grid& g = spec.grid;
  const auto single = [&](const char* axis, size_t values) {
    if (values > 1)
      s.fail(table, "[advice] kind = \"" + a.kind + "\": expected one value of [grid] " + axis + ", got " +
                        std::to_string(values));
  };
  single("world_sizes", g.world_sizes.size());
  single("hosts", g.hosts.size());
  single("first_bucket_cap_mb", g.first_bucket_cap_mb.size());
  if (a.kind != "bucket") single("bucket_cap_mb", g.bucket_cap_mb.size());
  if (a.kind != "stragglers") single("slowdown", g.slowdown.size());
  single("delay", g.delay.size());
  single("delay_dist", g.delay_dist.size());
  if (a.kind == "timeout" && !g.timeout_s.empty())
    s.fail(table, "[advice] kind = \"timeout\": expected no [grid] timeout_s (the advice sets it), got one");
  if (a.kind == "timeout" && !(g.delay.front().empty() && g.delay_dist.front().empty()))
    s.fail(table, "[advice] kind = \"timeout\": expected a baseline without [grid] delay or delay_dist "
                  "(the hang runs add the stall), got one");
  if (a.kind == "timeout" && a.hang_rank >= g.world_sizes.front())
    s.fail(*s.find("hang_rank"), "[advice] hang_rank: expected a rank below the world size " +
                                     std::to_string(g.world_sizes.front()) + ", got " + std::to_string(a.hang_rank));
  if (a.kind == "timeout" && a.hang_iteration >= spec.workload.iterations)
    s.fail(*s.find("hang_iteration"), "[advice] hang_iteration: expected an iteration below [workload] "
                                          "iterations = " + std::to_string(spec.workload.iterations) +
                                          ", got " + std::to_string(a.hang_iteration));
  if (a.kind == "bucket" && spec.repetitions < 2)
    s.fail(table, "[advice] kind = \"bucket\": expected [experiment] repetitions >= 2 (the caps' "
                  "difference is measured against its noise), got " + std::to_string(spec.repetitions));
}

// toml++ 3.3.0 (Debian's) reaches __builtin_unreachable() in is_non_ascii_horizontal_whitespace
// for most characters of U+00A1..U+0499, U+2C5E..U+3057 and U+FB26..U+FEFE (Latin accents,
// Greek, Cyrillic, kana, ...) whenever it asks whether one is whitespace: outside strings, in any
// quoted key ("é" = 1), at the start of a line continued by a line-ending backslash in a
// """string""" (the last two valid TOML). That is undefined behaviour (found by
// fuzz_experiment_spec), so no such character reaches it: non-ASCII bytes are refused everywhere
// but in comments, which toml++ only checks for control characters. A string can still hold any
// character as a \uXXXX escape. A leading UTF-8 byte order mark is toml++'s to skip.
void check_ascii_outside_comments(const std::string& text, const std::string& path) {
  size_t i = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  long line = 1;
  auto check_ascii = [&](unsigned char c) {
    if (c < 0x80) return;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", c);
    throw SpecError(path + ':' + std::to_string(line) +
                    ": expected ASCII characters outside comments (in a \"string\", write others "
                    "as \\uXXXX), got the byte " + hex);
  };
  // Skips the string that opens at i with `quote` (tripled when multi-line): to its closing
  // quote, or to the end of the line for a one-line string (where toml++ stops with an error).
  auto skip_string = [&](char quote, bool multi_line) {
    const std::string closing(multi_line ? 3 : 1, quote);
    i += closing.size();
    while (i < text.size()) {
      const char c = text[i];
      check_ascii(static_cast<unsigned char>(c));
      if (c == '\n') {
        ++line;
        if (!multi_line) return;
      } else if (c == '\\' && quote == '"') {  // an escape: its next character is not a quote
        if (++i < text.size()) {  // (\" before "" is a quote and the string goes on)
          check_ascii(static_cast<unsigned char>(text[i]));
          if (text[i] == '\n') ++line;
          ++i;
        }
        continue;
      } else if (text.compare(i, closing.size(), closing) == 0) {
        i += closing.size();
        // """a""""" is a"" then the closing """: up to two more quotes belong to the string.
        for (int extra = 0; multi_line && extra < 2 && i < text.size() && text[i] == quote; ++extra) ++i;
        return;
      }
      ++i;
    }
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;  // a comment: any character
    } else if (c == '"' || c == '\'') {
      skip_string(c, text.compare(i, 3, std::string(3, c)) == 0);
    } else {
      check_ascii(static_cast<unsigned char>(c));
      if (c == '\n') ++line;
      ++i;
    }
  }
}

// Every point of the grid, every repetition, is one real training job, and the runner holds
// the whole schedule in memory: `repetitions = 1000000000` was accepted, and ddp-experiment
// (even --dry-run) grew past 20 GB before it printed anything (found by fuzz_experiment_spec).
// 100,000 runs of 1 s are already 28 hours.
constexpr double kMaxRuns = 100'000;

void check_run_count(const ExperimentSpec& spec) {
  const Grid& g = spec.grid;
  const auto at_least_one = [](size_t n) { return static_cast<double>(n == 0 ? 1 : n); };
  // In doubles: eight axes of a long file can multiply past 64 bits.
  const double points = at_least_one(g.world_sizes.size()) * at_least_one(g.bucket_cap_mb.size()) *
                        at_least_one(g.first_bucket_cap_mb.size()) * at_least_one(g.slowdown.size()) *
                        at_least_one(g.delay.size()) * at_least_one(g.delay_dist.size()) *
                        at_least_one(g.timeout_s.size()) * at_least_one(g.hosts.size());
  const double runs = points * spec.repetitions;
  if (runs > kMaxRuns)
    throw SpecError(spec.path + ": [experiment] repetitions x [grid] points: expected at most " +
                    format_number(kMaxRuns) + " runs, got " + std::to_string(spec.repetitions) +
                    " x " + format_number(points) + " = " + format_number(runs));
}

std::string stem_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  auto dot = base.rfind('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

}  // namespace

ExperimentSpec parse_spec(const std::string& text, const std::string& path) {
  check_ascii_outside_comments(text, path);
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& error) {
    std::ostringstream out;
    out << path << ':' << error.source().begin.line << ':' << error.source().begin.column << ": "
        << error.description();
    throw SpecError(out.str());
  }

  ExperimentSpec spec;
  spec.path = path;
  spec.text = text;
  spec.name = stem_of(path);

  Section top(root, "top level", path);
  top.allow_only({"experiment", "workload", "grid", "launch", "predict", "limits", "advice"});
  const toml::table empty;
  parse_experiment(Section(sub_table(root, "experiment", path, empty), "experiment", path), spec);
  parse_workload(Section(sub_table(root, "workload", path, empty), "workload", path), spec.workload);
  parse_grid(Section(sub_table(root, "grid", path, empty), "grid", path), spec.grid);
  parse_launch(Section(sub_table(root, "launch", path, empty), "launch", path), spec.launch,
               spec.grid, path);
  parse_predict(Section(sub_table(root, "predict", path, empty), "predict", path), path, spec.grid,
                spec.predict);
  parse_limits(Section(sub_table(root, "limits", path, empty), "limits", path), spec.limits);
  if (const auto* advice = root.get("advice")) {
    parse_advice(Section(sub_table(root, "advice", path, empty), "advice", path), *advice, spec, spec.advice);
    if (const auto* predict = root.get("predict"))
      top.fail(*predict, "[predict]: expected none with [advice] (an advice spec acts on ddp-sim advise's "
                         "answer and replays nothing), got one");
  }

  if (!root.get("workload"))
    throw SpecError(path + ": missing table [workload] (the training job to run)");
  if (!is_safe_name(spec.name))
    throw SpecError(path + ": [experiment] name: expected letters, digits, '.', '_', '-', got '" +
                    spec.name + "'");
  check_run_count(spec);
  return spec;
}

ExperimentSpec parse_spec_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw SpecError(path + ": expected a spec file (TOML), got a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(path + ": cannot open the spec file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_spec(text.str(), path);
}

}  // namespace ddpsim::experiment
