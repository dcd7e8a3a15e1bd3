// Reading back `ddp-sim calibrate --json` (calibration_json.hpp) and `replay --calibration`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "ddpsim/sim/calibration_json.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/trace/io.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"

namespace ddpsim::sim {
namespace {

// Same bits, NaN included: a replay from the file must see exactly the fitted numbers.
bool same_double(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same(const Calibration& a, const Calibration& b) {
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_TRUE(same_double(a.alpha_s, b.alpha_s)) << a.alpha_s << " vs " << b.alpha_s;
  EXPECT_TRUE(same_double(a.beta_bytes_per_s, b.beta_bytes_per_s));
  EXPECT_TRUE(same_double(a.fit.intercept_s, b.fit.intercept_s));
  EXPECT_TRUE(same_double(a.fit.slope_s_per_byte, b.fit.slope_s_per_byte));
  EXPECT_TRUE(same_double(a.fit.r_squared, b.fit.r_squared) || (std::isnan(a.fit.r_squared) && std::isnan(b.fit.r_squared)));
  EXPECT_TRUE(same_double(a.fit.relative_rms, b.fit.relative_rms));
  EXPECT_EQ(a.fit.intercept_clamped, b.fit.intercept_clamped);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.method, b.method);
  EXPECT_TRUE(same_double(a.overlap_bandwidth_fraction, b.overlap_bandwidth_fraction));
  EXPECT_TRUE(same_double(a.two_in_flight_busy, b.two_in_flight_busy));
  EXPECT_TRUE(same_double(a.two_in_flight_free, b.two_in_flight_free));
  ASSERT_EQ(a.points.size(), b.points.size());
  for (size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(a.points[i].bytes, b.points[i].bytes);
    EXPECT_TRUE(same_double(a.points[i].median_s, b.points[i].median_s));
    EXPECT_EQ(a.points[i].samples, b.points[i].samples);
  }
}

TEST(CalibrationJson, RoundTripsALeastSquaresFitBitForBit) {
  const Calibration fitted = calibrate(testing::make_synthetic_trace({}), AllreduceAlgorithm::Ring);
  ASSERT_FALSE(std::isnan(fitted.fit.r_squared));
  expect_same(calibration_from_json(calibration_to_json(fitted), "fit.json"), fitted);
}

TEST(CalibrationJson, RoundTripsABandwidthOnlyFitWhoseRSquaredIsNull) {
  testing::SyntheticRun run;
  run.param_numel = {262144, 256, 262144, 128, 262144, 64, 262144, 32};  // equal buckets: no line
  const Calibration fitted = calibrate(testing::make_synthetic_trace(run), AllreduceAlgorithm::Tree);
  ASSERT_TRUE(std::isnan(fitted.fit.r_squared));
  expect_same(calibration_from_json(calibration_to_json(fitted), "fit.json"), fitted);
}

// Each broken field is refused in one line naming the file and the field.
TEST(CalibrationJson, RefusesWhatCalibrateDoesNotWrite) {
  const auto good = nlohmann::json::parse(calibration_to_json(calibrate(testing::make_synthetic_trace({}), AllreduceAlgorithm::Ring)));
  const std::vector<std::pair<std::string, nlohmann::json>> broken = {
      {"algorithm", "auto"},       {"algorithm", "ring-ish"}, {"algorithm", 3},           {"world_size", 1},
      {"world_size", 2.5},         {"beta_bytes_per_s", 0},    {"alpha_s", -1e-6},
      {"alpha_s", "fast"},         {"samples", -1},            {"overlap_bandwidth_fraction", 1.5},
      {"points", nlohmann::json::object()}, {"intercept_clamped", 0}};
  for (const auto& [key, value] : broken) {
    nlohmann::json json = good;
    json[key] = value;
    try {
      calibration_from_json(json.dump(), "fit.json");
      ADD_FAILURE() << key << " = " << value.dump() << " was accepted";
    } catch (const CalibrationError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("fit.json: " + key + ": expected ", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    json.erase(key);
    EXPECT_THROW(calibration_from_json(json.dump(), "fit.json"), CalibrationError) << "without " << key;
  }
  nlohmann::json bad_point = good;
  bad_point["points"][0]["bytes"] = "many";
  EXPECT_THROW(calibration_from_json(bad_point.dump(), "fit.json"), CalibrationError);
  for (const char* text : {"", "{", "[1, 2]", "null"}) {
    EXPECT_THROW(calibration_from_json(text, "fit.json"), CalibrationError) << text;
  }
  EXPECT_THROW(read_calibration("/nonexistent/fit.json"), CalibrationError);
  // A point nested a million deep: printing it in the error recursed until the stack ran out.
  nlohmann::json deep = good;
  deep["points"] = nlohmann::json::array();
  const std::string text = deep.dump();
  const std::size_t points = text.find("\"points\":[") + 10;
  const std::string nested = text.substr(0, points) + std::string(1000000, '[') + std::string(1000000, ']') +
                             text.substr(points);
  try {
    calibration_from_json(nested, "fit.json");
    ADD_FAILURE() << "a point nested a million deep was accepted";
  } catch (const CalibrationError& e) {
    EXPECT_STREQ(e.what(), "fit.json: expected the JSON of ddp-sim calibrate --json, nested at most 64 deep, got deeper nesting");
  }
}

// The fractions with two all-reduces in flight came later: a file without them reads as one at a
// time; one outside [0, 1] is refused in one line naming the field.
TEST(CalibrationJson, TwoInFlightFractionsAreOptionalButChecked) {
  Calibration fitted = calibrate(testing::make_synthetic_trace({}), AllreduceAlgorithm::Ring);
  fitted.two_in_flight_busy = 0.25;
  fitted.two_in_flight_free = 0.75;
  expect_same(calibration_from_json(calibration_to_json(fitted), "fit.json"), fitted);
  for (const char* key : {"two_in_flight_busy", "two_in_flight_free"}) {
    nlohmann::json json = nlohmann::json::parse(calibration_to_json(fitted));
    json.erase(key);
    const Calibration older = calibration_from_json(json.dump(), "fit.json");
    EXPECT_EQ(std::string(key) == "two_in_flight_busy" ? older.two_in_flight_busy : older.two_in_flight_free, 0.0);
    for (const nlohmann::json& bad : {nlohmann::json(1.5), nlohmann::json(-0.1), nlohmann::json("half")}) {
      json[key] = bad;
      try {
        calibration_from_json(json.dump(), "fit.json");
        ADD_FAILURE() << key << " = " << bad.dump() << " was accepted";
      } catch (const CalibrationError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("fit.json: " + std::string(key) + ": expected ", 0), 0u) << e.what();
      }
    }
  }
}

// A replay given the trace's own fit prepares exactly the network it would have fitted, and a
// different fit is really used (so the file is not silently ignored).
TEST(CalibrationJson, ReplayUsesTheGivenFitInsteadOfFittingAgain) {
  test_support::TempDir dir;
  const trace::Trace trace = testing::make_synthetic_trace({});
  trace::write_trace(dir / "measured", trace);
  ReplayRequest request;
  request.trace_dir = dir / "measured";
  const PreparedReplay fitted = prepare_replay(request);
  ASSERT_TRUE(fitted.calibration);

  request.calibration = calibration_from_json(calibration_to_json(*fitted.calibration), "fit.json");
  const PreparedReplay reused = prepare_replay(request);
  EXPECT_TRUE(same_double(reused.options.alpha_s, fitted.options.alpha_s));
  EXPECT_TRUE(same_double(reused.options.beta_bytes_per_s, fitted.options.beta_bytes_per_s));
  EXPECT_TRUE(same_double(reused.options.overlap_bandwidth_fraction, fitted.options.overlap_bandwidth_fraction));

  request.calibration->beta_bytes_per_s = fitted.options.beta_bytes_per_s / 2;
  EXPECT_EQ(prepare_replay(request).options.beta_bytes_per_s, fitted.options.beta_bytes_per_s / 2);

  // A ring fit for a tree replay: alpha and beta would mean something else.
  request.algorithm = AllreduceAlgorithm::Tree;
  request.calibration_file = "fit.json";
  EXPECT_THROW(prepare_replay(request), RequestError);
}

TEST(CalibrationJson, ReplayCliReadsCalibrateOutputAndRefusesABadFile) {
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace({}));
  const std::string measured = dir / "measured";
  ASSERT_EQ(run_cli(dir, "calibrate " + measured + " --json " + dir / "fit.json").status, 0);
  ASSERT_EQ(run_cli(dir, "replay " + measured + " --iterations 4 --json " + dir / "fitted.json").status, 0);
  const Outcome reused = run_cli(dir, "replay " + measured + " --iterations 4 --calibration " + dir / "fit.json" +
                                          " --json " + dir / "reused.json");
  ASSERT_EQ(reused.status, 0) << reused.err;
  const auto fitted_report = nlohmann::json::parse(slurp(dir / "fitted.json"));
  const auto reused_report = nlohmann::json::parse(slurp(dir / "reused.json"));
  EXPECT_EQ(reused_report["predicted"], fitted_report["predicted"]);
  EXPECT_EQ(reused_report["network"], fitted_report["network"]);

  std::ofstream(dir / "broken.json") << "{\"algorithm\": \"ring\"}";
  expect_one_line_error(run_cli(dir, "replay " + measured + " --calibration " + dir / "broken.json"),
                        dir / "broken.json" + ": world_size: expected");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --allreduce tree --calibration " + dir / "fit.json"),
                        dir / "fit.json" + ": expected a calibration with the tree's shape");
}

}  // namespace
}  // namespace ddpsim::sim
