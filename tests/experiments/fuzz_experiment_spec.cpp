// libFuzzer target for ddp-experiment's spec parser (experiments/src/spec.cpp, on toml++): any
// text given as a spec must give either a spec or one SpecError line, never a crash, hang or
// sanitizer report. A spec it accepts must be one the runner can use as ddp-experiment does
// (runner.cpp's run_experiment): its grid expands to points with distinct ids that are safe as
// directory names, the schedule holds every point's repetitions, a [predict] baseline names one
// of the points, and the command lines of the points can be built.
//
// Input: the spec's text. toml++ is compiled here from its headers (not the shared library the
// g++ build links), so the TOML parser itself runs instrumented too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "commands.hpp"
#include "grid.hpp"
#include "names.hpp"
#include "spec.hpp"

namespace {

using namespace ddpsim::experiment;

void check(bool condition) {
  if (!condition) std::abort();
}

void check_usable(const ExperimentSpec& spec) {
  check(is_safe_name(spec.name) && spec.repetitions >= 1);
  const auto points = expand_grid(spec.grid);
  check(!points.empty());
  std::set<std::string> ids;
  for (const auto& point : points) {
    check(is_safe_name(point.id) && ids.insert(point.id).second);
    check(point.world_size >= 1 && point.hosts >= 1 && point.world_size % point.hosts == 0);
  }
  const auto schedule = interleaved_schedule(points.size(), spec.repetitions);
  check(schedule.size() == points.size() * static_cast<std::size_t>(spec.repetitions));
  const auto baseline = baseline_point(points, spec.predict.baseline);
  check(baseline.has_value() == spec.predict.baseline.enabled);
  // The first points' command lines, as --dry-run prints them (all of them on big grids would
  // only slow the fuzzer down).
  for (std::size_t i = 0; i < points.size() && i < 8; ++i) {
    const Point& point = points[i];
    const std::string run = run_name(point, 0);
    check(!shell_quote(train_command(spec, point, "bin", "t/" + run)).empty());
    check(!shell_quote(calibrate_command(spec, "bin", "t/" + run, "c.json")).empty());
    for (const auto& what_if : spec.predict.what_ifs)
      check(!replay_command(spec, point, &what_if, "bin", "t/" + run, "c.json", "p").empty());
    if (baseline) {
      const WhatIf cross = cross_prediction(spec, points[*baseline], point);
      check(!replay_command(spec, point, &cross, "bin", "t/" + run, "c.json", "p").empty());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    check_usable(parse_spec(text, "fuzz.toml"));
  } catch (const SpecError& error) {
    check(std::strchr(error.what(), '\n') == nullptr);  // errors are one line
  }
  return 0;
}
