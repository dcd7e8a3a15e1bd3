// libFuzzer target for what `ddp-sim --machine FILE` reads: the machine profile (traces/MACHINE.md)
// and the replay settings made of it (machine_settings.hpp). Any bytes must give a profile or one
// TraceError line, never a crash, hang or sanitizer report. A profile that reads must write back
// to JSON that reads again to the same JSON, and must either give settings a replay can run on
// (a finite latency >= 0, a finite bandwidth > 0, a ladder whose times are finite and > 0, each
// fraction in (0, 1], effective cores in (0, ranks]) or be refused by one RequestError line.
//
// Input: the profile's JSON text, whole.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "ddpsim/sim/machine_settings.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/machine_profile.hpp"

namespace {

using namespace ddpsim;

void check(bool condition) {
  if (!condition) std::abort();
}

bool one_line(const std::string& text) { return !text.empty() && text.find('\n') == std::string::npos; }

bool finite_positive(double value) { return std::isfinite(value) && value > 0; }

bool in_unit_interval(double value) { return value > 0 && value <= 1; }

void check_settings(const trace::MachineProfile& profile, sim::AllreduceAlgorithm shape) {
  sim::MachineSettings settings;
  try {
    settings = sim::machine_settings(profile, shape, "fuzz.json");
  } catch (const sim::RequestError& error) {
    check(one_line(error.what()));
    return;
  }
  const sim::Calibration& calibration = settings.calibration;
  check(std::isfinite(calibration.alpha_s) && calibration.alpha_s >= 0);
  check(finite_positive(calibration.beta_bytes_per_s));
  // Every size a replay may ask for: each rung, between and beyond them, at the profile's world
  // size and at others.
  const std::int64_t largest = profile.allreduce.steps.back().bytes;
  for (const std::int64_t bytes : {std::int64_t{1}, std::int64_t{4}, profile.allreduce.steps.front().bytes,
                                   largest / 2 + 1, largest, std::numeric_limits<std::int64_t>::max() / 4}) {
    check(finite_positive(settings.ladder.time_s(bytes)));
    for (const int world_size : {1, 2, profile.world_size, 1024}) {
      const double carried = settings.ladder.carried_bytes(bytes, world_size);
      check(std::isfinite(carried) && carried >= 0);
    }
  }
  if (settings.in_flight_gain) check(*settings.in_flight_gain > 0 && *settings.in_flight_gain <= 2);
  for (const auto& [ranks, cores] : settings.effective_cores) check(ranks >= 2 && cores > 0 && cores <= ranks);
  if (settings.overlap_bandwidth_fraction) check(in_unit_interval(*settings.overlap_bandwidth_fraction));
  if (settings.compute_fraction_during_allreduce) check(in_unit_interval(*settings.compute_fraction_during_allreduce));
  if (settings.sleep_resume_cost_s) check(std::isfinite(*settings.sleep_resume_cost_s) && *settings.sleep_resume_cost_s >= 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  trace::MachineProfile profile;
  try {
    profile = trace::machine_profile_from_json(text, "fuzz.json");
  } catch (const trace::TraceError& error) {
    check(one_line(error.what()));
    return 0;
  }
  const std::string written = trace::machine_profile_to_json(profile);
  const trace::MachineProfile again = trace::machine_profile_from_json(written, "fuzz.json");
  check(trace::machine_profile_to_json(again) == written);
  check_settings(profile, sim::AllreduceAlgorithm::Ring);
  check_settings(profile, sim::AllreduceAlgorithm::Tree);
  return 0;
}
