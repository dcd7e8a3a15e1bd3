// The calibration JSON read back (calibration_json.hpp).
#include "ddpsim/sim/calibration_json.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <utility>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ddpsim/sim/text_of.hpp"
#include "ddpsim/trace/json_depth.hpp"

namespace ddpsim::sim {
namespace {

// The JSON value of `key` in `object`, which must have `kind` ("a number", "a string", ...).
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const nlohmann::json& get(const char* key, bool (nlohmann::json::*is)() const noexcept, const char* kind) const {
    const auto it = object_.find(key);
    if (it == object_.end()) fail(key, kind, "nothing");
    if (!((*it).*is)()) fail(key, kind, it->dump());
    return *it;
  }
  double number(const char* key) const {
    const double value = get(key, &nlohmann::json::is_number, "a number").get<double>();
    if (!std::isfinite(value)) fail(key, "a finite number", text_of(value));
    return value;
  }
  // A count: a non-negative integer that fits an int (sizes in bytes use int64).
  template <typename Int>
  Int count(const char* key) const {
    const nlohmann::json& value = get(key, &nlohmann::json::is_number_integer, "an integer >= 0");
    const bool fits = value.is_number_unsigned() ? value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<Int>::max())
                                                 : value.get<std::int64_t>() >= 0 &&
                                                       value.get<std::int64_t>() <= static_cast<std::int64_t>(std::numeric_limits<Int>::max());
    if (!fits) fail(key, "an integer >= 0", value.dump());
    return value.get<Int>();
  }

  [[noreturn]] void fail(const char* key, const std::string& expected, const std::string& got) const {
    // dump() of a long array would make the error several screens long: keep it one short line.
    const std::string shown = got.size() > 60 ? got.substr(0, 57) + "..." : got;
    throw CalibrationError(where_ + key + ": expected " + expected + ", got " + shown);
  }

 private:
  const nlohmann::json& object_;
  std::string where_;
};

}  // namespace

Calibration calibration_from_json(const std::string& json_text, const std::string& source) {
  if (trace::json_too_deep_at(json_text)) {
    throw CalibrationError(source + ": expected the JSON of ddp-sim calibrate --json, nested at most " +
                           std::to_string(trace::kMaxJsonDepth) + " deep, got deeper nesting");
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's message is one line: "[json.exception.parse_error.101] parse error at line 1, ..."
    throw CalibrationError(source + ": expected the JSON of ddp-sim calibrate --json, got a parse error (" +
                           std::string(e.what()) + ")");
  }
  if (!json.is_object()) {
    throw CalibrationError(source + ": expected the JSON object of ddp-sim calibrate --json, got " +
                           std::string(json.type_name()));
  }
  const Fields fields(json, source + ": ");
  Calibration calibration;
  const std::string algorithm = fields.get("algorithm", &nlohmann::json::is_string, "a string").get<std::string>();
  const auto parsed = allreduce_algorithm_from_string(algorithm);
  // What `ddp-sim calibrate --allreduce` accepts: auto has no formula to invert.
  if (!parsed || *parsed == AllreduceAlgorithm::Auto) {
    fields.fail("algorithm", "ring, ring-agg, analytic or tree", "'" + algorithm + "'");
  }
  calibration.algorithm = *parsed;
  calibration.world_size = fields.count<int>("world_size");
  if (calibration.world_size < 2) fields.fail("world_size", "at least 2 ranks", std::to_string(calibration.world_size));
  calibration.alpha_s = fields.number("alpha_s");
  if (calibration.alpha_s < 0) fields.fail("alpha_s", "a latency >= 0", text_of(calibration.alpha_s));
  calibration.beta_bytes_per_s = fields.number("beta_bytes_per_s");
  if (!(calibration.beta_bytes_per_s > 0)) {
    fields.fail("beta_bytes_per_s", "a bandwidth > 0", text_of(calibration.beta_bytes_per_s));
  }
  calibration.fit.intercept_s = fields.number("intercept_s");
  calibration.fit.slope_s_per_byte = fields.number("slope_s_per_byte");
  // calibration_to_json writes null for an R^2 that is NaN (bandwidth only, one size).
  const auto r_squared = json.find("r_squared");
  if (r_squared != json.end() && r_squared->is_null()) {
    calibration.fit.r_squared = std::numeric_limits<double>::quiet_NaN();
  } else {
    calibration.fit.r_squared = fields.number("r_squared");
  }
  calibration.fit.relative_rms = fields.number("relative_rms");
  calibration.fit.intercept_clamped =
      fields.get("intercept_clamped", &nlohmann::json::is_boolean, "true or false").get<bool>();
  calibration.samples = fields.count<int>("samples");
  calibration.method = fields.get("method", &nlohmann::json::is_string, "a string").get<std::string>();
  calibration.overlap_bandwidth_fraction = fields.number("overlap_bandwidth_fraction");
  if (!(calibration.overlap_bandwidth_fraction > 0) || calibration.overlap_bandwidth_fraction > 1) {
    fields.fail("overlap_bandwidth_fraction", "a fraction in (0, 1]",
                text_of(calibration.overlap_bandwidth_fraction));
  }
  // Optional: a calibration file without them (written before they existed) reads as one
  // all-reduce at a time. See Note [two at once] in docs/model.md.
  for (const auto& [key, value] : {std::pair{"two_in_flight_busy", &calibration.two_in_flight_busy},
                                   std::pair{"two_in_flight_free", &calibration.two_in_flight_free}}) {
    if (json.find(key) == json.end()) continue;
    *value = fields.number(key);
    if (!(*value >= 0 && *value <= 1)) fields.fail(key, "a fraction in [0, 1]", text_of(*value));
  }
  const nlohmann::json& points = fields.get("points", &nlohmann::json::is_array, "an array");
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string where = source + ": points[" + std::to_string(i) + "].";
    if (!points[i].is_object()) {
      throw CalibrationError(source + ": points[" + std::to_string(i) + "]: expected an object, got " +
                             points[i].dump().substr(0, 60));
    }
    const Fields point(points[i], where);
    calibration.points.push_back(
        {point.count<std::int64_t>("bytes"), point.number("median_s"), point.count<int>("samples")});
  }
  return calibration;
}

Calibration read_calibration(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in) throw CalibrationError(path + ": expected a readable calibration JSON file (ddp-sim calibrate --json)");
  return calibration_from_json(text.str(), path);
}

}  // namespace ddpsim::sim
