// libFuzzer target for what `ddp-sim replay | advise | sweep --calibration FILE` reads
// (calibration_json.hpp): any bytes must give a calibration or one CalibrationError line, never
// a crash, hang or sanitizer report. A calibration that reads keeps what the replay relies on (at
// least 2 ranks, a finite latency >= 0, a finite bandwidth > 0, its fractions in range) and writes
// back to JSON that reads again to the same JSON.
//
// Input: the calibration's JSON text, whole.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/calibration_json.hpp"

namespace {

using namespace ddpsim::sim;

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Calibration calibration;
  try {
    calibration = calibration_from_json(text, "fit.json");
  } catch (const CalibrationError& error) {
    const std::string what = error.what();
    check(!what.empty() && what.find('\n') == std::string::npos);
    return 0;
  }
  check(calibration.world_size >= 2);
  check(std::isfinite(calibration.alpha_s) && calibration.alpha_s >= 0);
  check(std::isfinite(calibration.beta_bytes_per_s) && calibration.beta_bytes_per_s > 0);
  check(calibration.overlap_bandwidth_fraction > 0 && calibration.overlap_bandwidth_fraction <= 1);
  check(calibration.two_in_flight_busy >= 0 && calibration.two_in_flight_busy <= 1);
  check(calibration.two_in_flight_free >= 0 && calibration.two_in_flight_free <= 1);
  const std::string written = calibration_to_json(calibration);
  check(calibration_to_json(calibration_from_json(written, "fit.json")) == written);
  return 0;
}
