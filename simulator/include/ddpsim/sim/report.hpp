// What `ddp-sim replay` prints and writes with --json: the measured run next to the
// predicted one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/summary.hpp"

namespace ddpsim::sim {

struct ReplayReport {
  std::string trace_dir;
  WorkloadModel const* model = nullptr;
  ReplayOptions const* options = nullptr;
  ReplayResult const* result = nullptr;
  std::optional<Calibration> calibration;  // when α, β came from the trace
  bool machine_given = false;              // --machine was given (few_sizes_headline_note)
  double compute_stretch = 1;              // PreparedReplay::compute_stretch (--cores)
  // ReplayRequest::unprofiled_iteration_s and PreparedReplay::unprofiled_scale: the job's own
  // speed, printed beside the profiled source run's so that a what-if's change is read against it.
  std::optional<double> unprofiled_iteration_s;
  double unprofiled_scale = 1;
  trace::Summary measured;
  trace::Summary predicted;
};

// What a replay of `model` under `options` changes from the source run's configuration (skew
// flags, world size, bucket layout, timeout, --cores), as flag names or "world size A -> B";
// empty for a reconstruction. Known before the replay runs: `measured` is the source's summary.
std::vector<std::string> whatif_changes(const WorkloadModel& model, const ReplayOptions& options,
                                        double compute_stretch, const trace::Summary& measured);
// The same for a report's replay.
std::vector<std::string> whatif_changes(const ReplayReport& report);

std::string report_to_text(const ReplayReport& report);
std::string report_to_json(const ReplayReport& report);

}  // namespace ddpsim::sim
