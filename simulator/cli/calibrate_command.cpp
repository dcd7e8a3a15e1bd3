// `ddp-sim calibrate` (calibrate_command.hpp): flags in, sim::calibrate out.
#include "calibrate_command.hpp"

#include <iostream>
#include <memory>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/trace/io.hpp"

namespace ddpsim::cli {
namespace {

struct Flags {
  std::string trace_dir;
  std::string algorithm = "ring";
  std::string json_file;
};

int run(const Flags& flags) {
  const auto algorithm = sim::allreduce_algorithm_from_string(flags.algorithm);
  // auto is no formula to invert (it is the smaller of two): a trace is fitted to one.
  if (!algorithm || *algorithm == sim::AllreduceAlgorithm::Auto) {
    throw UsageError("--allreduce: expected ring, ring-agg, analytic or tree, got '" + flags.algorithm + "'");
  }
  if (!flags.json_file.empty()) check_output_file(flags.json_file, "--json");
  const sim::Calibration calibration = sim::calibrate(trace::read_trace(flags.trace_dir), *algorithm);
  std::cout << sim::calibration_to_text(calibration);
  if (!flags.json_file.empty()) {
    write_output_file(flags.json_file, sim::calibration_to_json(calibration) + "\n", "--json");
  }
  return 0;
}

}  // namespace

Command add_calibrate_command(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  CLI::App* command = app.add_subcommand("calibrate", "Fit the network's latency and bandwidth to a trace");
  command->add_option("TRACE_DIR", flags->trace_dir, "Recorded trace directory")->required();
  command->add_option("--allreduce", flags->algorithm, "Formula to invert: ring (default) or tree")->group("Network");
  command->add_option("--json", flags->json_file, "Write the fit as JSON")->group("Output");
  return {command, [flags] { return run(*flags); }};
}

}  // namespace ddpsim::cli
