// ddp-sim's bad-input table (#19): every numeric flag of every subcommand with 0, negative,
// NaN/inf, huge and non-numeric values, and every path flag with a missing path and a
// directory where a file is expected (or the reverse). Each must be refused with exit status 2
// and one line on stderr that names the flag (or file) and what was expected.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "synthetic_profile.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

// Which of the replaying subcommands a shared-flag row applies to.
enum Scope { kReplay = 1, kCurve = 2, kSweep = 4, kAll = 7 };

struct BadInput {
  std::string arguments;  // {D} is the test's directory, {T} the trace
  std::string needle;     // a substring of the one-line error
  int scope = kAll;
};

// The flags replay, timeout-curve and sweep share (cli/replay_flags.cpp).
const std::vector<BadInput> kReplayFlags = {
    {"--world-size 0", "--world-size: expected an integer in [1, "},
    {"--world-size -5", "--world-size: expected an integer in [1, "},
    {"--world-size nan", "--world-size: expected an integer"},
    {"--world-size 99999999999", "--world-size: expected an integer"},
    {"--world-size four", "--world-size: expected an integer"},
    // A line break in the value is shown as '?': the error stays one line (fuzz_numeric_flags).
    {"--world-size \"$(printf '3\\nx')\"", "--world-size: expected an integer in [1, 2147483647], got 3?x"},
    {"--bandwidth \"$(printf '1\\n2')\"", "--bandwidth: expected a finite number of bytes/s >= 1, got 1?2"},
    {"--iterations 0", "--iterations: expected an integer in [1, "},
    {"--iterations -3", "--iterations: expected an integer"},
    {"--iterations 1.5", "--iterations: expected an integer"},
    {"--iterations 99999999999999999999", "--iterations: expected an integer"},
    {"--runs 0", "--runs: expected an integer in [1, "},
    {"--runs -1", "--runs: expected an integer"},
    {"--runs inf", "--runs: expected an integer"},
    {"--runs 99999999999", "--runs: expected an integer"},
    {"--gpus-per-node 0 --platform two-level", "--gpus-per-node: expected an integer in [1, "},
    {"--gpus-per-node -2 --platform two-level", "--gpus-per-node: expected an integer"},
    {"--gpus-per-node x --platform two-level", "--gpus-per-node: expected an integer"},
    {"--seed -1", "--seed: expected an integer in [0, 18446744073709551615]"},
    {"--seed 1.5", "--seed: expected an integer"},
    {"--seed 99999999999999999999999", "--seed: expected an integer"},
    {"--seed nan", "--seed: expected an integer"},
    {"--bandwidth 0", "--bandwidth: expected a finite number of bytes/s >= 1"},
    {"--bandwidth -5", "--bandwidth: expected a finite number of bytes/s >= 1"},
    {"--bandwidth inf", "--bandwidth: expected a finite number of bytes/s >= 1"},
    {"--bandwidth 1e400", "--bandwidth: expected a finite number of bytes/s >= 1"},
    {"--bandwidth fast", "--bandwidth: expected a finite number of bytes/s >= 1"},
    {"--latency -1", "--latency: expected a finite number >= 0"},
    {"--latency nan", "--latency: expected a finite number >= 0"},
    {"--latency 1e400", "--latency: expected a finite number >= 0"},
    {"--intra-bandwidth 0", "--intra-bandwidth: expected a finite number of bytes/s >= 1"},
    {"--intra-bandwidth nan", "--intra-bandwidth: expected a finite number of bytes/s >= 1"},
    {"--intra-latency -1", "--intra-latency: expected a finite number >= 0"},
    {"--intra-latency inf", "--intra-latency: expected a finite number >= 0"},
    {"--inter-bandwidth -1", "--inter-bandwidth: expected a finite number of bytes/s >= 1"},
    {"--inter-bandwidth 1e400", "--inter-bandwidth: expected a finite number of bytes/s >= 1"},
    {"--inter-latency nan", "--inter-latency: expected a finite number >= 0"},
    {"--inter-latency slow", "--inter-latency: expected a finite number >= 0"},
    {"--timeout 0", "--timeout: expected a finite number > 0"},
    {"--timeout -2", "--timeout: expected a finite number > 0"},
    {"--timeout nan", "--timeout: expected a finite number > 0"},
    {"--timeout inf", "--timeout: expected a finite number > 0"},
    {"--timeout abc", "--timeout: expected a finite number > 0"},
    {"--bucket-cap-mb 0", "--bucket-cap-mb: expected MiB in (0, 8.7e12]"},
    {"--bucket-cap-mb -1", "--bucket-cap-mb: expected MiB"},
    {"--bucket-cap-mb nan", "--bucket-cap-mb: expected MiB"},
    {"--bucket-cap-mb 1e300", "--bucket-cap-mb: expected MiB"},
    {"--first-bucket-cap-mb 0", "--first-bucket-cap-mb: expected MiB"},
    {"--first-bucket-cap-mb inf", "--first-bucket-cap-mb: expected MiB"},
    {"--first-bucket-cap-mb 1e300", "--first-bucket-cap-mb: expected MiB"},
    {"--cores 0", "--cores: expected a number of cores >= 1, got 0"},
    {"--cores 0.5", "--cores: expected a number of cores >= 1"},
    {"--cores -3", "--cores: expected a number of cores >= 1"},
    {"--cores nan", "--cores: expected a number of cores >= 1"},
    {"--cores inf", "--cores: expected a number of cores >= 1"},
    {"--cores x", "--cores: expected a number of cores >= 1"},
    {"--cores 99999999999", "--cores: expected a number of cores >= 1"},
    {"--effective-cores 4", "--effective-cores: expected K=C with K >= 2 ranks and C effective cores in (0, K], got '4'"},
    {"--effective-cores 1=1", "--effective-cores: expected K=C with K >= 2 ranks"},
    {"--effective-cores 4=5", "--effective-cores: expected K=C with K >= 2 ranks"},
    {"--effective-cores 4=0", "--effective-cores: expected K=C"},
    {"--effective-cores 4=nan", "--effective-cores: expected K=C"},
    {"--effective-cores 4=1.5x", "--effective-cores: expected K=C"},
    {"--effective-cores x=1.5", "--effective-cores: expected K=C"},
    {"--effective-cores 4=1.5 --effective-cores 4=1.6", "--effective-cores: expected each K once, got K = 4 twice"},
    {"--effective-cores 4=1.5 --cores 2", "--effective-cores: expected either it or --cores, got both"},
    {"--core-sharing even", "--core-sharing: expected uniform or paced, got 'even'"},
    {"--core-sharing paced", "--core-sharing paced: expected --cores or --effective-cores with it"},
    {"--sleep-resume-cost -0.001", "--sleep-resume-cost: expected seconds in [0, 1], got -0.001"},
    {"--sleep-resume-cost 2", "--sleep-resume-cost: expected seconds in [0, 1]"},
    {"--sleep-resume-cost 1e300", "--sleep-resume-cost: expected seconds in [0, 1]"},
    {"--sleep-resume-cost nan", "--sleep-resume-cost: expected seconds in [0, 1]"},
    {"--sleep-resume-cost inf", "--sleep-resume-cost: expected seconds in [0, 1]"},
    {"--sleep-resume-cost 0.1ms", "--sleep-resume-cost: expected seconds in [0, 1]"},
    {"--overlap-bandwidth-fraction 0", "--overlap-bandwidth-fraction: expected a fraction in (0, 1], got 0"},
    {"--overlap-bandwidth-fraction 1.5", "--overlap-bandwidth-fraction: expected a fraction in (0, 1]"},
    {"--overlap-bandwidth-fraction -0.5", "--overlap-bandwidth-fraction: expected a fraction in (0, 1]"},
    {"--overlap-bandwidth-fraction nan", "--overlap-bandwidth-fraction: expected a fraction in (0, 1]"},
    {"--overlap-bandwidth-fraction x", "--overlap-bandwidth-fraction: expected a fraction in (0, 1]"},
    {"--compute-fraction-during-allreduce 0", "--compute-fraction-during-allreduce: expected a fraction in (0, 1], got 0"},
    {"--compute-fraction-during-allreduce 2", "--compute-fraction-during-allreduce: expected a fraction in (0, 1]"},
    {"--compute-fraction-during-allreduce -1", "--compute-fraction-during-allreduce: expected a fraction in (0, 1]"},
    {"--compute-fraction-during-allreduce inf", "--compute-fraction-during-allreduce: expected a fraction in (0, 1]"},
    {"--compute-fraction-during-allreduce half", "--compute-fraction-during-allreduce: expected a fraction in (0, 1]"},
    {"--allreduces-in-flight 3=1.1", "--allreduces-in-flight: expected 2=G, two all-reduces at once together at G in (0, 2] times one's rate, got '3=1.1'"},
    {"--allreduces-in-flight 2=0", "--allreduces-in-flight: expected 2=G"},
    {"--allreduces-in-flight 2=nan", "--allreduces-in-flight: expected 2=G"},
    {"--concurrent-allreduces 2", "--allreduces-in-flight: expected 2=G"},
    {"--max-simulated-flows -1", "--max-simulated-flows: expected an integer in [0, "},
    {"--max-simulated-flows 1.5", "--max-simulated-flows: expected an integer"},
    {"--max-simulated-flows many", "--max-simulated-flows: expected an integer"},
    {"--max-simulated-flows 99999999999999999999", "--max-simulated-flows: expected an integer"},
    {"--cluster dgx-b200", "--cluster: expected dgx-v100, dgx-a100 or dgx-h100, got 'dgx-b200'"},
    {"--cluster dgx-a100 --platform star", "--cluster: expected no --platform other than two-level"},
    {"--cluster dgx-a100 --gpus-per-node 0", "--gpus-per-node: expected an integer in [1, "},
    // The skew flags follow the trace library's SkewSpec rules, as ddp-train does.
    {"--slowdown 1=0.5", "--slowdown 1=0.5: expected RANK=F with F >= 1"},
    {"--slowdown 1=0", "--slowdown 1=0: expected RANK=F with F >= 1"},
    {"--slowdown 1=-2", "--slowdown 1=-2: expected"},
    {"--slowdown 1=nan", "--slowdown 1=nan: expected"},
    {"--slowdown 1=inf", "--slowdown 1=inf: expected"},
    {"--slowdown -1=2", "--slowdown -1=2: expected"},
    {"--slowdown 1=fast", "--slowdown 1=fast: expected"},
    // A sweep fails such a point in its CSV instead (test_cli.cpp): rank 9 may exist at
    // another world size of the grid.
    {"--slowdown 9=2", "--slowdown", kReplay | kCurve},
    {"--delay 1=-5", "--delay 1=-5: expected"},
    {"--delay 1=nan", "--delay 1=nan: expected"},
    {"--delay-dist 1=exp:0", "--delay-dist 1=exp:0: expected"},
    {"--delay-dist 1=uniform:5,1", "--delay-dist 1=uniform:5,1: expected"},
    // Huge but finite: a predicted run the trace's int64 nanosecond clock cannot hold (under
    // a timeout the run just fails in time, and a sweep records the failed point).
    {"--slowdown 1=1e300", "expected at most 9.2e9 s", kReplay},
    {"--latency 1e300", "expected at most 9.2e9 s", kReplay},
    {"--bandwidth 1e-300", "--bandwidth: expected a finite number of bytes/s >= 1"},
    {"--bandwidth 0.5", "--bandwidth: expected a finite number of bytes/s >= 1"},
    {"--runs 5 --bootstrap", "--bootstrap: expected --runs of at least 11"},
    {"--platform {D}/missing.xml", "--platform"},
    {"--platform {D}/adir", "--platform"},
    // A machine profile that cannot be read, is not one, or is of another machine than the trace's.
    {"--machine {D}/nowhere.json",
     "--machine {D}/nowhere.json:0: expected a readable machine profile (ddp-machine-profile --out), got no file that "
     "can be read"},
    {"--machine {D}/plain.txt", "--machine {D}/plain.txt:1: expected a JSON machine profile (ddp-machine-profile --out), got"},
    {"--machine {D}/adir", "--machine {D}/adir:"},
    {"--machine {D}/machine-nccl.json",
     "--machine {D}/machine-nccl.json: expected a profile measured with the trace's backend gloo, got one measured with "
     "nccl"},
    {"--machine {D}/machine-2hosts.json",
     "--machine {D}/machine-2hosts.json: expected a profile measured on the trace's 1 host, got one measured on 2 hosts"},
};

// Per subcommand: its name and TRACE_DIR, a required flag (left out of rows that give it
// themselves), whether it takes the shared replay flags (as which Scope), and its own rows.
struct Subcommand {
  std::string prefix;
  std::string required;
  int scope;  // 0: not a replaying subcommand
  std::vector<BadInput> own;
};

const std::vector<Subcommand> kSubcommands = {
    {"replay {T}",
     "",
     kReplay,
     {{"--out {D}/plain.txt", "--out {D}/plain.txt: expected a directory, got a file"},
      {"--json {D}/adir", "--json {D}/adir: expected a file, got a directory"},
      {"--json {D}/no/such/report.json", "--json {D}/no/such/report.json: expected a file in a writable directory"},
      {"--repeats {D}/nowhere", "--repeats {D}/nowhere: {D}/nowhere:0: expected a trace directory"},
      {"--repeats {D}/plain.txt", "--repeats {D}/plain.txt: {D}/plain.txt:0: expected a trace directory"},
      {"--repeats {T}", "--repeats {T}: expected another run, got the replayed trace or a repeat given twice"}}},
    {"timeout-curve {T}",
     "--timeouts 1",
     kCurve,
     {{"--timeouts 0", "--timeouts: expected a finite number > 0"},
      {"--timeouts 1,-1", "--timeouts: expected a finite number > 0"},
      {"--timeouts nan", "--timeouts: expected a finite number > 0"},
      {"--timeouts inf", "--timeouts: expected a finite number > 0"},
      {"--timeouts 1e400", "--timeouts: expected a finite number > 0"},
      {"--timeouts soon", "--timeouts: expected a finite number > 0"},
      {"--epsilon -0.1", "--epsilon: expected a probability in [0, 1]"},
      {"--epsilon 1.5", "--epsilon: expected a probability in [0, 1]"},
      {"--epsilon nan", "--epsilon: expected a probability in [0, 1]"},
      {"--epsilon inf", "--epsilon: expected a probability in [0, 1]"},
      {"--csv {D}/adir", "--csv {D}/adir: expected a file, got a directory"},
      {"--csv {D}/no/such/curve.csv", "--csv {D}/no/such/curve.csv: expected a file in a writable directory"},
      {"--json {D}/adir", "--json {D}/adir: expected a file, got a directory"}}},
    {"sweep {T}",
     "--out {D}/sweep.csv",
     kSweep,
     {{"--bucket-caps -1", "--bucket-caps: expected MiB in [0, 8.7e12]"},
      {"--bucket-caps 1,nan", "--bucket-caps: expected MiB"},
      {"--bucket-caps inf", "--bucket-caps: expected MiB"},
      {"--bucket-caps 1e300", "--bucket-caps: expected MiB"},
      {"--bucket-caps big", "--bucket-caps: expected MiB"},
      {"--slowdowns 0.5", "--slowdowns: expected factors F >= 1"},
      {"--slowdowns 0", "--slowdowns: expected factors F >= 1"},
      {"--slowdowns 1,-2", "--slowdowns: expected factors F >= 1"},
      {"--slowdowns nan", "--slowdowns: expected factors F >= 1 or RANK=F entries (the rule of --slowdown), got 'nan'"},
      {"--slowdowns inf", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns 1e400", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns x", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns ' 2'", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      // RANK=F entries: --slowdown's syntax and rule, read by the same parser.
      {"--slowdowns 1=0.5", "--slowdowns: expected factors F >= 1 or RANK=F entries (the rule of --slowdown), got '1=0.5'"},
      {"--slowdowns 2,1=0", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns 1=nan", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns 1=inf", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns 1=x", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns 1=", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns =2", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns -1=2", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns all=2", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns 1.5=2", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns 1=2=3", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns 99999999999=2", "--slowdowns: expected factors F >= 1 or RANK=F entries"},
      {"--slowdowns \"$(printf '1=2\\nx')\"", "--slowdowns: expected factors F >= 1 or RANK=F entries (the rule of --slowdown), got '1=2?x'"},
      {"--slowdowns 1=2,4=2", "--slowdowns: expected ranks below every world size swept (4), got '4=2'"},
      {"--slowdowns 4=1", "--slowdowns: expected ranks below every world size swept (4), got '4=1'"},
      {"--slowdowns 1=2 --world-sizes 8,1", "--slowdowns: expected ranks below every world size swept (1), got '1=2'"},
      {"--slowdown-rank -1", "--slowdown-rank: expected an integer in [0, "},
      {"--slowdown-rank 1.5", "--slowdown-rank: expected an integer"},
      {"--slowdown-rank 99999999999", "--slowdown-rank: expected an integer"},
      {"--slowdown-rank 4 --slowdowns 2", "--slowdown-rank: expected a rank below every world size swept (4)"},
      {"--slowdown-rank 5 --slowdowns 2 --world-sizes 8,5", "--slowdown-rank: expected a rank below every world size swept (5)"},
      {"--world-sizes -5", "--world-sizes: expected an integer in [0, "},
      {"--world-sizes 4,nan", "--world-sizes: expected an integer"},
      {"--world-sizes 99999999999", "--world-sizes: expected an integer"},
      {"--jobs 0", "--jobs: expected an integer in [1, "},
      {"--jobs -1", "--jobs: expected an integer"},
      {"--jobs nan", "--jobs: expected an integer"},
      {"--jobs 1e9", "--jobs: expected an integer"},
      {"--out {D}/adir", "--out {D}/adir: expected a file, got a directory"},
      {"--out {D}/no/such/sweep.csv", "--out {D}/no/such/sweep.csv: expected a file in a writable directory"}}},
    {"calibrate {T}",
     "",
     0,
     {{"--allreduce butterfly", "--allreduce: expected ring"},
      {"--json {D}/adir", "--json {D}/adir: expected a file, got a directory"},
      {"--json {D}/no/such/fit.json", "--json {D}/no/such/fit.json: expected a file in a writable directory"}}},
    {"advise {T}",
     "",
     0,
     {{"--runs 0", "--runs: expected an integer in [11, "},
      {"--runs -5", "--runs: expected an integer in [11, "},
      {"--runs 1e3", "--runs: expected an integer"},
      {"--runs 99999999999", "--runs: expected an integer"},
      {"--seed -1", "--seed: expected an integer in [0, 18446744073709551615]"},
      {"--seed x", "--seed: expected an integer"},
      {"--epsilon 0", "--epsilon: expected a probability in (0, 1)"},
      {"--epsilon -1", "--epsilon: expected a probability in (0, 1)"},
      {"--epsilon nan", "--epsilon: expected a probability in (0, 1)"},
      {"--epsilon inf", "--epsilon: expected a probability in (0, 1)"},
      {"--epsilon 1e400", "--epsilon: expected a probability in (0, 1)"},
      {"--iterations-per-day -3", "--iterations-per-day: expected a finite number >= 0"},
      {"--iterations-per-day nan", "--iterations-per-day: expected a finite number >= 0"},
      {"--iterations-per-day inf", "--iterations-per-day: expected a finite number >= 0"},
      {"--iterations-per-day many", "--iterations-per-day: expected a finite number >= 0"},
      {"--bucket-caps 0", "--bucket-caps: expected MiB in (0, 8.7e12]"},
      {"--bucket-caps -1", "--bucket-caps: expected MiB"},
      {"--bucket-caps nan", "--bucket-caps: expected MiB"},
      {"--bucket-caps 1e300", "--bucket-caps: expected MiB"},
      {"--json {D}/adir", "--json {D}/adir: expected a file, got a directory"},
      {"--json {D}/no/such/advice.json", "--json {D}/no/such/advice.json: expected a file in a writable directory"},
      {"--machine {D}/nowhere.json", "--machine {D}/nowhere.json:0: expected a readable machine profile"},
      {"--machine {D}/plain.txt", "--machine {D}/plain.txt:1: expected a JSON machine profile"},
      {"--machine {D}/machine-nccl.json",
       "--machine {D}/machine-nccl.json: expected a profile measured with the trace's backend gloo, got one measured "
       "with nccl"},
      {"--machine {D}/machine-2hosts.json",
       "--machine {D}/machine-2hosts.json: expected a profile measured on the trace's 1 host, got one measured on 2 "
       "hosts"}}},
};

// A valid profile of the synthetic trace's machine but for `edit`: 1 host, 4 ranks, Gloo.
void write_profile(const std::string& path, const std::function<void(trace::MachineProfile&)>& edit) {
  trace::MachineProfile profile = testing::synthetic_profile(
      4, [](std::int64_t bytes) { return 1e-4 + static_cast<double>(bytes) / 1e9; }, 1.5);
  profile.compute.effective_cores = 2;  // valid for the edits' 2 ranks a host too
  edit(profile);
  trace::write_machine_profile(path, profile);
}

std::string expand(std::string text, const test_support::TempDir& dir) {
  for (std::string::size_type at; (at = text.find("{D}")) != std::string::npos;) text.replace(at, 3, dir.str());
  for (std::string::size_type at; (at = text.find("{T}")) != std::string::npos;) {
    text.replace(at, 3, dir / "measured");
  }
  return text;
}

// The full arguments of a row: the subcommand, its required flag unless the row gives it.
std::string arguments_of(const Subcommand& subcommand, const std::string& row) {
  const std::string required_flag = subcommand.required.substr(0, subcommand.required.find(' '));
  const bool gives_it = required_flag.empty() || row.find(required_flag + " ") != std::string::npos;
  return subcommand.prefix + " " + row + (gives_it ? "" : " " + subcommand.required);
}

TEST(CliBadInputs, EveryNumericAndPathFlagIsRefusedInOneLine) {
  test_support::TempDir dir;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(testing::SyntheticRun{}));  // 4 ranks
  std::ofstream(dir / "plain.txt") << "not a trace\n";
  std::filesystem::create_directory(dir / "adir");
  write_profile(dir / "machine-nccl.json", [](trace::MachineProfile& profile) { profile.backend = "nccl"; });
  write_profile(dir / "machine-2hosts.json", [](trace::MachineProfile& profile) {
    profile.hosts = {"a", "b"};
    profile.ranks_per_host = 2;
  });
  int rows = 0;
  std::set<std::string> shared_rows_run;
  for (const Subcommand& subcommand : kSubcommands) {
    std::vector<std::pair<std::string, std::string>> table;  // full arguments, needle
    // TRACE_DIR: missing, and a file where the directory is expected.
    for (const char* bad_trace : {"{D}/nowhere", "{D}/plain.txt"}) {
      std::string arguments = arguments_of(subcommand, "");
      arguments.replace(arguments.find("{T}"), 3, bad_trace);
      table.emplace_back(arguments, std::string(bad_trace) + ":0: expected a trace directory");
    }
    for (const BadInput& row : subcommand.own) table.emplace_back(arguments_of(subcommand, row.arguments), row.needle);
    // The shared flags are read by one parser (cli/replay_flags.cpp): each row is run through the
    // first subcommand that takes it, and each later one runs each flag's first row, which shows
    // that it reaches the same parser (every ddp-sim start costs most of a second under ASan).
    std::set<std::string> flags_here;
    for (const BadInput& row : kReplayFlags) {
      if (!(row.scope & subcommand.scope)) continue;
      const std::string flag = row.arguments.substr(0, row.arguments.find(' '));
      const bool first_for_row = shared_rows_run.insert(row.arguments).second;
      const bool first_for_flag = flags_here.insert(flag).second;
      if (first_for_row || first_for_flag) table.emplace_back(arguments_of(subcommand, row.arguments), row.needle);
    }
    for (const auto& [arguments, needle] : table) {
      SCOPED_TRACE(arguments);
      expect_one_line_error(run_cli(dir, expand(arguments, dir)), expand(needle, dir));
      ++rows;
    }
  }
  EXPECT_GT(rows, 200);
  // Refused before any work: nothing was written.
  EXPECT_FALSE(std::filesystem::exists(dir / "sweep.csv"));
}

}  // namespace
}  // namespace ddpsim::sim
