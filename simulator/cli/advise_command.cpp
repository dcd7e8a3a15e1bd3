// `ddp-sim advise` (advise_command.hpp): flags in, advise.hpp's three answers out.
#include "advise_command.hpp"

#include <cmath>
#include <limits>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "ddpsim/sim/advise.hpp"
#include "ddpsim/sim/machine_settings.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/text_of.hpp"
#include "ddpsim/trace/concatenate.hpp"
#include "ddpsim/trace/error_reason.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "ddpsim/trace/skew.hpp"
#include "ddpsim/trace/summary.hpp"
#include "numeric_flags.hpp"
#include "repeats.hpp"
#include "replay_flags.hpp"
#include "resource_check.hpp"

namespace ddpsim::cli {

namespace sim = ddpsim::sim;

namespace {

struct AdviseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using sim::text_of;

void check_flags(const AdviseFlags& flags) {
  if (flags.runs < 11) {
    throw AdviseError("--runs: expected at least 11 (1 + 10 bootstrap replicates), got " + std::to_string(flags.runs));
  }
  if (!(flags.epsilon > 0 && flags.epsilon < 1)) {
    throw AdviseError("--epsilon: expected a probability in (0, 1), got " + text_of(flags.epsilon));
  }
  if (!std::isfinite(flags.iterations_per_day) || flags.iterations_per_day < 0) {
    throw AdviseError("--iterations-per-day: expected a finite number > 0, got " + text_of(flags.iterations_per_day));
  }
  for (double cap : flags.bucket_caps_mb) {
    if (!std::isfinite(cap) || cap <= 0) throw AdviseError("--bucket-caps: expected positive MiB, got " + text_of(cap));
  }
  if (!flags.json_file.empty()) check_output_file(flags.json_file, "--json");  // before minutes of replays
}

// --stall-dist values through the traces' SkewSpec parser (replay's --delay-dist syntax); its
// errors name --delay-dist, so they are renamed here.
std::vector<trace::DelayDistribution> stall_model(const AdviseFlags& flags) {
  std::vector<trace::DelayDistribution> model;
  for (const std::string& text : flags.stall_dist) {
    try {
      model.push_back(trace::parse_delay_distribution(text));
    } catch (const trace::SkewError& error) {
      std::string message = error.what();
      const std::string prefix = "--delay-dist ";
      if (message.rfind(prefix, 0) == 0) message = "--stall-dist " + message.substr(prefix.size());
      throw AdviseError(message);
    }
  }
  return model;
}

// Before minutes of replays: the largest candidate, one bucket per parameter (the smallest cap
// can split no further), replayed --runs times for each answer, each rank's events kept.
void check_candidates_fit(const AdviseFlags& flags, const sim::AdviceSetup& setup, const trace::Trace& trace) {
  sim::WorkloadModel largest = setup.model;
  largest.bucket_bytes.resize(std::max(largest.bucket_bytes.size(), largest.source_meta.parameters.size()));
  double events = 0;
  for (const trace::RankTrace& rank : trace.ranks) events += static_cast<double>(rank.events.size());
  sim::ResourceEstimate estimate = sim::estimate_replay(largest, setup.options, events, flags.runs, {true, false});
  estimate.subject = flags.trace_dir;  // advise replays the trace as it ran: no flag makes it larger
  check_resources(estimate, flags.max_memory, "the advice's largest replay");
}

}  // namespace

CLI::App* add_advise_command(CLI::App& app, AdviseFlags& flags) {
  CLI::App* command = app.add_subcommand(
      "advise", "Best bucket cap, shortest safe timeout and each rank's straggler cost, from one trace");
  command->add_option("TRACE_DIR", flags.trace_dir, "Recorded trace directory")->required();
  command->add_option("--machine", flags.machine,
                      "A machine profile (ddp-launch ... ddp-machine-profile --out FILE, traces/MACHINE.md): the replays' "
                      "network, all-reduces in flight and co-location, instead of the network fitted to the trace")
      ->group("Machine");
  add_unprofiled_iteration_option(command, flags.unprofiled_iteration_ms)->group("Machine");
  // The validators refuse what is not a number of the flag's type (numeric_flags.hpp);
  // check_flags then says what range the advice needs.
  constexpr double kLargest = std::numeric_limits<double>::max();
  command->add_option("--bucket-caps", flags.bucket_caps_mb, "bucket_cap_mb values to search, MiB (default 0.25..100)")
      ->delimiter(',')
      ->check(bucket_cap_mb(false))
      ->group("Bucket cap");
  const std::string timeout = "Timeout";
  command->add_option("--epsilon", flags.epsilon, "Allowed P(false timeout) per day of training (default 0.01)")
      ->check(finite_number(-kLargest, kLargest, false, "a probability in (0, 1)"))
      ->group(timeout);
  command->add_option("--iterations-per-day", flags.iterations_per_day,
                      "Iterations in a day of training (default: 86400 s / the measured median iteration)")
      ->check(non_negative_number())
      ->group(timeout);
  command->add_option("--stall-dist", flags.stall_dist,
                      "RANK|all=exp:MEAN|lognormal:MU,SIGMA|uniform:A,B (ms, replay's --delay-dist syntax): the "
                      "stall model for the timeout advice instead of the trace's stalls (repeatable, one per rank)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(timeout);
  const std::string runs = "Runs";
  command->add_option("--runs", flags.runs, "Replays per answer: 1 in order + N-1 bootstrap replicates (default 21)")
      ->check(integer_in(11, std::numeric_limits<int>::max()))
      ->group(runs);
  command->add_option("--seed", flags.seed, "Seed of the bootstrap resampling")->check(unsigned_integer())->group(runs);
  CLI::Option* repeats =
      command->add_option("--repeats", flags.repeats,
                          "Other measured runs of the trace's configuration: advise each alike and print the "
                          "answers side by side (which hold on every run, which are the machine's drift); each "
                          "bucket gain also gets its interval widened by the drift between them")
          ->group(runs);
  add_pool_flag(command, flags.pool, repeats,
                "Also advise the trace and its --repeats as one run, their iterations one run after another: "
                "the answers at the machine's typical speed, printed first (on a machine whose speed drifts "
                "between runs)");
  add_max_memory_option(command, flags.max_memory);  // in the Runs group
  command->add_option("--json", flags.json_file, "Write the advice as JSON")->group("Output");
  return command;
}

int run_advise(const AdviseFlags& flags) {
  try {
    check_flags(flags);
    const std::vector<trace::DelayDistribution> stalls = stall_model(flags);
    std::optional<trace::MachineProfile> machine;
    if (!flags.machine.empty()) {
      try {
        machine = trace::read_machine_profile(flags.machine);
      } catch (const trace::TraceError& error) {
        throw AdviseError(std::string("--machine ") + error.what());
      }
    }
    const trace::Trace measured = trace::read_trace(flags.trace_dir);
    // Ranks and one distribution per rank, before minutes of replays.
    try {
      (void)sim::stall_for_probability(stalls, measured.world_size(), 0.5);
    } catch (const std::invalid_argument& error) {
      throw AdviseError(error.what());
    }
    const std::vector<trace::Trace> repeats = read_repeats(flags.repeats, flags.trace_dir, measured, "the advised trace");
    bool warned = false;
    const auto advise = [&](const trace::Trace& trace, const std::string& dir) {
      std::vector<std::string> warnings;
      std::optional<double> unprofiled_s;
      if (flags.unprofiled_iteration_ms) unprofiled_s = *flags.unprofiled_iteration_ms * 1e-3;
      const sim::AdviceSetup setup = sim::prepare_advice(trace, machine, flags.machine, &warnings, unprofiled_s);
      // Nothing is advised from one rank or a handful of iterations.
      const std::string problem = sim::advisable_problem(trace, setup);
      if (!problem.empty()) throw AdviseError(problem);
      // Once: the repeats and the pooled run are of the trace's configuration, with the same mismatch.
      if (!warned) {
        for (const std::string& warning : warnings) std::cerr << "ddp-sim: warning: " << warning << "\n";
        warned = true;
      }
      check_candidates_fit(flags, setup, trace);
      sim::Advice advice;
      advice.trace_dir = dir;
      advice.bucket = sim::advise_bucket_cap(setup, flags.bucket_caps_mb, flags.runs, flags.seed);
      advice.timeout = sim::advise_timeout(setup, trace, flags.epsilon, flags.iterations_per_day, stalls);
      advice.stragglers = sim::attribute_stragglers(setup, flags.runs, flags.seed);
      advice.network_note = sim::few_sizes_headline_note(setup.calibration, machine.has_value());
      advice.import_lacks = sim::import_lacks(trace);
      if (!advice.import_lacks.empty() && !unprofiled_s) {
        advice.import_lacks.push_back(
            "no --unprofiled-iteration-ms (the job's median step without the profiler): the replays run at "
            "the profiled steps' slower compute (Note [profiler overhead])");
      }
      advice.few_iterations = sim::few_iterations_warning(setup);
      return advice;
    };
    sim::Advice advice = advise(measured, flags.trace_dir);
    if (!repeats.empty()) {
      std::vector<sim::Advice> runs = {advice};
      for (std::size_t i = 0; i < repeats.size(); ++i) runs.push_back(advise(repeats[i], flags.repeats[i]));
      // With --pool the answers are the pooled run's; each run's own still show the drift.
      if (flags.pool) {
        std::vector<trace::Trace> all = {measured};
        all.insert(all.end(), repeats.begin(), repeats.end());
        const trace::Trace pooled = trace::concatenate_runs(all);
        advice = advise(pooled, flags.trace_dir);
        advice.pooled_runs = static_cast<int>(all.size());
        advice.pooled_iterations = static_cast<int>(pooled.complete_iterations().size());
      }
      advice.across_runs = sim::advice_across_runs(runs);
      // The bucket gain is a comparison of two measured runs: its interval takes their drift.
      sim::widen_by_drift(advice.bucket, run_to_run_of_repeats(flags.repeats, repeats,
                                                                trace::summarize(measured).median_iteration_s));
    }
    // The timeout's warnings on stderr too: too little data and extrapolation must not pass unseen.
    if (!advice.few_iterations.empty()) std::cerr << "ddp-sim: warning: " << advice.few_iterations << "\n";
    for (const std::string& warning : advice.timeout.warnings) std::cerr << "ddp-sim: warning: " << warning << "\n";
    std::cout << sim::advice_to_text(advice);
    if (!flags.json_file.empty()) {
      std::ofstream out(flags.json_file);
      out << sim::advice_to_json(advice) << "\n";
      if (!out) throw AdviseError("--json " + flags.json_file + ": expected a writable file");
    }
  } catch (const AdviseError& error) {
    std::cerr << "ddp-sim: " << trace::error_reason(error, "advising") << "\n";
    return 2;
  } catch (const UsageError& error) {
    std::cerr << "ddp-sim: " << trace::error_reason(error, "advising") << "\n";
    return 2;
  } catch (const sim::CalibrationError& error) {
    std::cerr << "ddp-sim: " << trace::error_reason(error, "advising") << "\n";
    return 2;
  } catch (const sim::SimulationError& error) {
    std::cerr << "ddp-sim: " << trace::error_reason(error, "advising") << "\n";
    return 2;
  } catch (const sim::RequestError& error) {
    std::cerr << "ddp-sim: " << trace::error_reason(error, "advising") << "\n";
    return 2;
  }
  return 0;
}

}  // namespace ddpsim::cli
