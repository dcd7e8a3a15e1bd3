// ddp-experiment: runs a declarative experiment (experiments/*.toml) end to end.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "ddpsim/trace/error_reason.hpp"
#include "runner.hpp"
#include "spec.hpp"

namespace fs = std::filesystem;
using namespace ddpsim::experiment;

namespace {

// The other tools are built next to this one (<build>/bin).
std::string own_directory() {
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  return error ? "." : self.parent_path().string();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Runs declarative ddpsim experiments: real DDP jobs, their simulated predictions, "
               "and a summary.csv for ddpsim-plot.",
               "ddp-experiment"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print the help of every subcommand and exit");  // before the subcommands

  std::string spec_path;
  RunOptions options;
  options.bin_dir = own_directory();
  auto* run = app.add_subcommand("run", "Run (or resume) every point x repetition of a spec");
  run->add_option("spec", spec_path, "Experiment spec (TOML), e.g. experiments/bucket-sweep.toml")
      ->required();
  run->add_flag("--dry-run", options.dry_run, "Print the commands that would run, run nothing")->group("What to run");
  run->add_flag("--repredict", options.repredict,
                "Predict every finished run again from its kept trace with the spec's [predict], which may "
                "differ from the one the results came from (nothing else may); measures nothing again")
      ->group("What to run");
  run->add_option("--out", options.out_root, "Results root; results go to OUT/NAME/")
      ->capture_default_str()
      ->group("Output");
  const std::string tools = "Tools and scripts (where to find them)";
  run->add_option("--bin-dir", options.bin_dir,
                  "Directory holding ddp-launch, ddp-train, ddp-sim, ddp-trace (default: ddp-experiment's own)")
      ->group(tools);
  run->add_option("--testbed-script", options.testbed_script,
                  "scripts/testbed.sh, for specs with [launch] testbed_rate (default: relative to "
                  "the current directory, the repository root)")
      ->capture_default_str()
      ->group(tools);
  run->add_option("--corun-script", options.corun_script,
                  "experiments/peer/corun_bench.sh, for specs with [predict] corun_profile (default: relative "
                  "to the current directory, the repository root)")
      ->capture_default_str()
      ->group(tools);
  run->add_option("--resume-script", options.resume_script,
                  "ddpsim-sleep-resume-cost (the ddpsim package's, scripts/setup.sh installs it), for specs with "
                  "[predict] resume_profile (default: "
                  "relative to the current directory, the repository root)")
      ->capture_default_str()
      ->group(tools);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help exits 0; every usage error is one line and exits 2, as all ddpsim tools do.
    if (error.get_exit_code() == 0) return app.exit(error);
    std::cerr << "ddp-experiment: " << ddpsim::trace::error_reason(error, "reading the command line")
              << " (see ddp-experiment --help)\n";
    return 2;
  }

  for (int i = 0; i < argc; ++i) options.command_line.emplace_back(argv[i]);
  options.bin_dir = fs::absolute(options.bin_dir).lexically_normal().string();
  options.progress_bar = ::isatty(STDERR_FILENO) == 1;
  try {
    const ExperimentSpec spec = parse_spec_file(spec_path);
    if (!options.dry_run && !fs::exists(options.bin_dir + "/ddp-launch")) {
      std::cerr << "ddp-experiment: --bin-dir " << options.bin_dir
                << ": expected a directory with ddp-launch, ddp-train, ddp-sim and ddp-trace\n";
      return 2;
    }
    // A script the spec needs to measure, made absolute; false (after its one-line error) when it
    // is not an executable. --repredict launches nothing, so needs none of them.
    const auto script_found = [&](std::string& script, const char* flag, const char* what, const char* why) {
      script = fs::absolute(script).lexically_normal().string();
      if (options.dry_run || options.repredict || ::access(script.c_str(), X_OK) == 0) return true;
      std::cerr << "ddp-experiment: " << flag << ' ' << script << ": expected the executable " << what << " ("
                << why << " in " << spec_path << "; run from the repository root or pass " << flag << ")\n";
      return false;
    };
    if (spec.launch.testbed() &&
        !script_found(options.testbed_script, "--testbed-script", "scripts/testbed.sh", "[launch] testbed_rate"))
      return 2;
    if (!spec.predict.corun_profile.empty() &&
        !script_found(options.corun_script, "--corun-script", "experiments/peer/corun_bench.sh",
                      "[predict] corun_profile"))
      return 2;
    if (spec.predict.resume_profile > 0 &&
        !script_found(options.resume_script, "--resume-script", ".venv/bin/ddpsim-sleep-resume-cost",
                      "[predict] resume_profile"))
      return 2;
    return run_experiment(spec, options, std::cout, std::cerr);
  } catch (const fs::filesystem_error& error) {
    // --out under a file, a results folder that cannot be written: the path and why.
    std::cerr << "ddp-experiment: " << error.path1().string()
              << ": expected a directory and files that can be written, got "
              << error.code().message() << '\n';
    return 2;
  } catch (const SpecError& error) {
    std::cerr << "ddp-experiment: " << ddpsim::trace::error_reason(error, "reading the spec") << '\n';
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "ddp-experiment: " << ddpsim::trace::error_reason(error, "running the experiment") << '\n';
    return 2;
  } catch (...) {
    std::cerr << "ddp-experiment: " << ddpsim::trace::unknown_error_reason("running the experiment") << '\n';
    return 2;
  }
}
