// --machine (machine_settings.hpp): a profile whose ladder follows a known α-β line gives back
// that α and β; its in-flight gain and co-location reach the replay; flags override it; a
// profile that does not belong with the trace is refused in one line; and a what-if that rests
// on a network fitted to fewer than 3 sizes says so in its headline.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "ddpsim/sim/allreduce.hpp"
#include "ddpsim/sim/machine_settings.hpp"
#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/sim/workload_model.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "synthetic_profile.hpp"
#include "synthetic_trace.hpp"

namespace ddpsim::sim {
namespace {

constexpr double kAlpha = 30e-6;
constexpr double kBeta = 1.5e9;

trace::Timing exactly(double seconds) { return trace::timing_of({seconds}); }

// A profile of `world_size` ranks whose ladder is the ring formula with kAlpha, kBeta exactly.
trace::MachineProfile known_profile(int world_size = 4, AllreduceAlgorithm shape = AllreduceAlgorithm::Ring) {
  return testing::synthetic_profile(world_size, [&](std::int64_t bytes) {
    return allreduce_formula_s(shape, world_size, static_cast<double>(bytes), kAlpha, kBeta);
  });
}

TEST(MachineSettings, AKnownLadderGivesItsAlphaAndBeta) {
  for (const int world_size : {2, 4, 8}) {
    for (const AllreduceAlgorithm shape : {AllreduceAlgorithm::Ring, AllreduceAlgorithm::Tree}) {
      SCOPED_TRACE(std::to_string(world_size) + " ranks, " + to_string(shape));
      const MachineSettings settings = machine_settings(known_profile(world_size, shape), shape, "m.json");
      EXPECT_NEAR(settings.calibration.alpha_s, kAlpha, kAlpha * 1e-9);
      EXPECT_NEAR(settings.calibration.beta_bytes_per_s, kBeta, kBeta * 1e-9);
      EXPECT_EQ(settings.calibration.points.size(), 8u);
      EXPECT_LT(settings.calibration.fit.relative_rms, 1e-9);
      EXPECT_EQ(settings.calibration.fitted_to, "the machine profile m.json");
      EXPECT_TRUE(calibration_warnings(settings.calibration).empty());
    }
  }
}

TEST(MachineSettings, TheLineHoldsTheSmallSizesToo) {
  // Noise of a few percent on every size: a fit on the relative misfit keeps the latency (an
  // ordinary one follows the 64 MiB point and can miss 4 KiB several times over).
  trace::MachineProfile profile = known_profile();
  for (std::size_t i = 0; i < profile.allreduce.steps.size(); ++i) {
    profile.allreduce.steps[i].one = exactly(profile.allreduce.steps[i].one.median_s * (i % 2 == 0 ? 1.03 : 0.97));
  }
  const MachineSettings settings = machine_settings(profile, AllreduceAlgorithm::Ring, "m.json");
  EXPECT_NEAR(settings.calibration.alpha_s, kAlpha, 0.1 * kAlpha);
  EXPECT_NEAR(settings.calibration.beta_bytes_per_s, kBeta, 0.05 * kBeta);
  EXPECT_LT(settings.calibration.fit.relative_rms, 0.05);
}

TEST(MachineSettings, GainAndCoresCarryWhereTheyMeanWhatTheFlagsMean) {
  trace::MachineProfile profile = known_profile();
  MachineSettings settings = machine_settings(profile, AllreduceAlgorithm::Ring, "m.json");
  ASSERT_TRUE(settings.in_flight_gain.has_value());
  EXPECT_EQ(*settings.in_flight_gain, 1.25);
  EXPECT_EQ(settings.effective_cores, (std::map<int, double>{{4, 2.5}}));
  // Three in flight is not --allreduces-in-flight 2=G.
  profile.allreduce.in_flight = 3;
  EXPECT_FALSE(machine_settings(profile, AllreduceAlgorithm::Ring, "m.json").in_flight_gain.has_value());
  // Ranks on two hosts do not share one machine's cores.
  profile.hosts = {"a", "b"};
  profile.ranks_per_host = 2;
  EXPECT_TRUE(machine_settings(profile, AllreduceAlgorithm::Ring, "m.json").effective_cores.empty());
}

TEST(MachineSettings, EveryCountOfCoRunningRanksBecomesAnEffectiveCoresPair) {
  trace::MachineProfile profile = known_profile();  // 4 ranks on one host
  profile.compute.by_ranks = {
      {2, exactly(0.011), exactly(0.012), 1.8}, {3, exactly(0.013), exactly(0.014), 2.3}, {4, exactly(0.016), {}, 2.5}};
  EXPECT_EQ(machine_settings(profile, AllreduceAlgorithm::Ring, "m.json").effective_cores,
            (std::map<int, double>{{2, 1.8}, {3, 2.3}, {4, 2.5}}));
  // Ranks on two hosts do not share one machine's cores, at any count.
  profile.hosts = {"a", "b"};
  profile.ranks_per_host = 2;
  EXPECT_TRUE(machine_settings(profile, AllreduceAlgorithm::Ring, "m.json").effective_cores.empty());
}

TEST(MachineSettings, ALadderThatDoesNotGrowIsRefused) {
  trace::MachineProfile profile = known_profile();
  for (trace::LadderStep& step : profile.allreduce.steps) step.one = exactly(1e-3);
  try {
    machine_settings(profile, AllreduceAlgorithm::Ring, "m.json");
    FAIL() << "a flat ladder gave a network";
  } catch (const RequestError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("m.json: expected all-reduce times that grow with the message size", 0), 0u)
        << error.what();
  }
}

// A short ladder over a shaped link whose 4 KiB rung came out slow (seen on the testbed at
// 200 Mbit/s): the free relative fit's slope is negative, and the line through the origin is
// taken instead of refusing a ladder that grows.
// A shaped link's ladder: the small sizes pass within the token bucket's burst, far faster than
// the rate the large ones take. No line follows both, and the warning names the profile.
TEST(MachineSettings, ALadderThatIsNoLineIsNamedInTheWarning) {
  trace::MachineProfile profile = known_profile(2);
  for (trace::LadderStep& step : profile.allreduce.steps) {
    if (step.bytes <= (256 << 10)) step.one = exactly(1e-3);
  }
  const Calibration line = machine_settings(profile, AllreduceAlgorithm::Ring, "m.json").calibration;
  ASSERT_GT(line.fit.relative_rms, kMaxTrustedRelativeRms);
  const std::vector<std::string> warnings = calibration_warnings(line);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].find("the line through the machine profile m.json's all-reduce ladder misses its sizes by "), 0u)
      << warnings[0];
  EXPECT_NE(warnings[0].find("not a line on this network"), std::string::npos) << warnings[0];
}

TEST(MachineSettings, ANoisySmallRungDoesNotTurnTheSlopeNegative) {
  trace::MachineProfile profile = known_profile(2);
  profile.allreduce.steps = {{4096, exactly(1.399e-3), exactly(5.012e-3)},
                             {65536, exactly(0.520e-3), exactly(4.425e-3)},
                             {1048576, exactly(45.251e-3), exactly(88.272e-3)}};
  const MachineSettings settings = machine_settings(profile, AllreduceAlgorithm::Ring, "m.json");
  EXPECT_GT(settings.calibration.fit.slope_s_per_byte, 0);
  EXPECT_TRUE(settings.calibration.fit.intercept_clamped);
  EXPECT_GT(settings.calibration.beta_bytes_per_s, 0);
}

ReplayRequest request_with(const trace::MachineProfile& profile) {
  ReplayRequest request;
  request.compute = ComputeMode::Median;
  request.machine = profile;
  request.machine_file = "m.json";
  return request;
}

// A run on the known profile's network: its all-reduces take the ladder's times.
testing::SyntheticRun run_on_the_profiles_network() {
  testing::SyntheticRun run;
  run.alpha_s = kAlpha;
  run.beta_bytes_per_s = kBeta;
  return run;
}

TEST(MachineSettings, TheReplayTakesTheProfile) {
  const trace::Trace measured = testing::make_synthetic_trace(run_on_the_profiles_network());
  const PreparedReplay prepared = prepare_replay(request_with(known_profile()), measured);
  EXPECT_NEAR(prepared.options.alpha_s, kAlpha, kAlpha * 1e-9);
  EXPECT_NEAR(prepared.options.beta_bytes_per_s, kBeta, kBeta * 1e-9);
  // Gloo's two lanes; on the profile's own network they share one's rate (Note [two at once]).
  EXPECT_EQ(prepared.options.allreduces_in_flight, 2);
  EXPECT_EQ(prepared.options.in_flight_gain, 1.0);
  ASSERT_TRUE(prepared.calibration.has_value());
  EXPECT_EQ(prepared.calibration->fitted_to, "the machine profile m.json");
  EXPECT_TRUE(prepared.warnings.empty());
  EXPECT_EQ(prepared.compute_stretch, 1);  // 4 ranks as measured: no other sharing of cores
  // At 8 ranks, the co-location stretches compute as --effective-cores 4=2.5 would.
  ReplayRequest wider = request_with(known_profile());
  wider.world_size = 8;
  const PreparedReplay eight = prepare_replay(wider, measured);
  EXPECT_EQ(eight.compute_stretch, corun_stretch({{4, 2.5}}, 4, 8));
  EXPECT_GT(eight.compute_stretch, 1);
  // ... and says that 8 ranks a host were not measured, and how to measure them.
  ASSERT_EQ(eight.warnings.size(), 1u);
  EXPECT_EQ(eight.warnings[0],
            "--machine m.json: co-location measured for up to 4 ranks on its host; 8 ranks take 4's 2.5 effective "
            "cores: measure it launched as the what-if (ddp-launch --nproc-per-node 8 -- ddp-machine-profile)");
  // With a fit to the trace's pairs (--calibration), the gain turns its rates into one's.
  ReplayRequest fitted = request_with(known_profile());
  fitted.calibration = calibrate(measured, AllreduceAlgorithm::Ring);
  fitted.calibration_file = "c.json";
  EXPECT_EQ(prepare_replay(fitted, measured).options.in_flight_gain, 1.25);
}

// Paced core sharing takes its effective cores from a profile of one host (without one it is
// refused in one line: CliBadInputs).
TEST(MachineSettings, PacedCoreSharingTakesTheProfilesCores) {
  const trace::Trace measured = testing::make_synthetic_trace(testing::SyntheticRun{});
  ReplayRequest request = request_with(known_profile());
  request.core_sharing = CoreSharing::Paced;
  EXPECT_NO_THROW(check_effective_cores(request));  // the command line's check lets the profile answer
  const PreparedReplay prepared = prepare_replay(request, measured);
  EXPECT_TRUE(static_cast<bool>(prepared.options.core_slowdown));
  request.machine.reset();
  EXPECT_THROW(check_effective_cores(request), RequestError);
}

TEST(MachineSettings, FlagsOverrideTheProfile) {
  const trace::Trace measured = testing::make_synthetic_trace(testing::SyntheticRun{});
  ReplayRequest request = request_with(known_profile());
  request.bandwidth = 5e8;
  request.in_flight_gain = 1.5;
  request.effective_cores = {{4, 3.0}};
  request.world_size = 8;
  const PreparedReplay prepared = prepare_replay(request, measured);
  EXPECT_TRUE(prepared.warnings.empty());  // the cores told, the profile's co-location is not used
  EXPECT_EQ(prepared.options.beta_bytes_per_s, 5e8);
  EXPECT_NEAR(prepared.options.alpha_s, kAlpha, kAlpha * 1e-9);  // no --latency: the profile's
  EXPECT_EQ(prepared.options.in_flight_gain, 1.5);
  EXPECT_EQ(prepared.compute_stretch, corun_stretch({{4, 3.0}}, 4, 8));
}

// A version 2 profile's overlap and sleep sections: the all-reduce's fraction taken on the
// bandwidth term alone (the ladder line's intercept paid alike busy or not).
trace::MachineProfile profile_with_overlap() {
  trace::MachineProfile profile = known_profile();
  const double one = allreduce_formula_s(AllreduceAlgorithm::Ring, 4, 4 << 20, kAlpha, kBeta);
  const double latency = 2 * 3 * kAlpha;  // the ring's 2(W-1) alpha at 4 ranks
  trace::ComputeCommOverlap overlap;
  overlap.bytes = 4 << 20;
  overlap.allreduce_alone = exactly(one);
  overlap.allreduce_busy = exactly(latency + (one - latency) / 0.4);  // bandwidth term at 0.4 of its rate
  overlap.compute_quiet = exactly(0.016);
  overlap.compute_busy = exactly(0.016 / 0.625);
  overlap.allreduce_fraction = one / overlap.allreduce_busy.median_s;
  overlap.compute_fraction = 0.625;
  profile.overlap = overlap;
  trace::SleepResume sleep;
  sleep.requested_s = 2e-4;
  sleep.slept = exactly(2.6e-4);
  sleep.resumed = exactly(2.2e-4);
  sleep.hot = exactly(2e-4);
  sleep.resume_cost_s = 8e-5;
  profile.sleep = sleep;
  return profile;
}

TEST(MachineSettings, OverlapAndSleepBecomeTheirFlags) {
  const MachineSettings settings = machine_settings(profile_with_overlap(), AllreduceAlgorithm::Ring, "m.json");
  ASSERT_TRUE(settings.overlap_bandwidth_fraction && settings.compute_fraction_during_allreduce &&
              settings.sleep_resume_cost_s);
  EXPECT_NEAR(*settings.overlap_bandwidth_fraction, 0.4, 1e-9);
  EXPECT_EQ(*settings.compute_fraction_during_allreduce, 0.625);
  EXPECT_EQ(*settings.sleep_resume_cost_s, 8e-5);
  // A version 1 profile has neither: the replay keeps its defaults.
  const MachineSettings v1 = machine_settings(known_profile(), AllreduceAlgorithm::Ring, "m.json");
  EXPECT_FALSE(v1.overlap_bandwidth_fraction || v1.compute_fraction_during_allreduce || v1.sleep_resume_cost_s);
}

TEST(MachineSettings, TheReplayTakesTheOverlapUnlessToldOtherwise) {
  const trace::Trace measured = testing::make_synthetic_trace(testing::SyntheticRun{});
  const PreparedReplay prepared = prepare_replay(request_with(profile_with_overlap()), measured);
  EXPECT_NEAR(prepared.options.overlap_bandwidth_fraction, 0.4, 1e-9);
  EXPECT_EQ(prepared.options.compute_fraction_during_allreduce, 0.625);
  EXPECT_EQ(prepared.options.sleep_resume_cost_s, 8e-5);
  // Flags override each.
  ReplayRequest told = request_with(profile_with_overlap());
  told.overlap_bandwidth_fraction = 0.9;
  told.compute_fraction_during_allreduce = 1.0;
  told.sleep_resume_cost_s = 0.0;
  const PreparedReplay overridden = prepare_replay(told, measured);
  EXPECT_EQ(overridden.options.overlap_bandwidth_fraction, 0.9);
  EXPECT_EQ(overridden.options.compute_fraction_during_allreduce, 1.0);
  EXPECT_EQ(overridden.options.sleep_resume_cost_s, 0.0);
  // A network told by --bandwidth keeps its own all-reduce rate during autograd; compute's
  // fraction is the machine's still.
  ReplayRequest bandwidth = request_with(profile_with_overlap());
  bandwidth.bandwidth = 5e8;
  const PreparedReplay own = prepare_replay(bandwidth, measured);
  EXPECT_EQ(own.options.overlap_bandwidth_fraction, 1.0);
  EXPECT_EQ(own.options.compute_fraction_during_allreduce, 0.625);
}

TEST(MachineSettings, AProfileOfAnotherMachineIsRefusedInOneLine) {
  const trace::Trace measured = testing::make_synthetic_trace(testing::SyntheticRun{});  // gloo, 1 host, 4 ranks
  const auto error_of = [&](const trace::MachineProfile& profile) {
    try {
      prepare_replay(request_with(profile), measured);
    } catch (const RequestError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  trace::MachineProfile nccl = known_profile();
  nccl.backend = "nccl";
  EXPECT_EQ(error_of(nccl),
            "--machine m.json: expected a profile measured with the trace's backend gloo, got one measured with nccl");
  trace::MachineProfile two_hosts = known_profile();
  two_hosts.hosts = {"a", "b"};
  two_hosts.ranks_per_host = 2;
  EXPECT_EQ(error_of(two_hosts),
            "--machine m.json: expected a profile measured on the trace's 1 host, got one measured on 2 hosts");
  // Another world size replays, with a warning: the ring's factors are not the profile's.
  const PreparedReplay two_ranks = prepare_replay(request_with(known_profile(2)), measured);
  ASSERT_EQ(two_ranks.warnings.size(), 1u);
  EXPECT_EQ(two_ranks.warnings[0],
            "--machine m.json: measured on 2 ranks, the trace has 4: alpha and beta carry over through the all-reduce "
            "formula's factors for each");
  EXPECT_NEAR(two_ranks.options.alpha_s, kAlpha, kAlpha * 1e-9);
  // A lone rank's trace, with a profile of ranks sharing one host: the warning also says the
  // sharing of its cores is the profile kernel's; not where the profile's ranks have hosts of their own.
  testing::SyntheticRun one;
  one.world_size = 1;
  const trace::Trace lone = testing::make_synthetic_trace(one);
  const PreparedReplay shared = prepare_replay(request_with(known_profile(2)), lone);
  ASSERT_EQ(shared.warnings.size(), 1u);
  EXPECT_EQ(shared.warnings[0],
            "--machine m.json: measured on 2 ranks, the trace has 1: alpha and beta carry over through the all-reduce "
            "formula's factors for each; how ranks and their all-reduces share this host's cores comes from the "
            "profile's kernel, not this job (a trace of 2 ranks holds it)");
  EXPECT_EQ(prepare_replay(request_with(known_profile(2)), measured).warnings[0].find("share this host"),
            std::string::npos);
}

TEST(MachineSettings, AProfileTimedWhileTheMachineWasSlowerIsNamed) {
  // The synthetic run's network is 2 GB/s and 40 us, the profile's 1.5 GB/s and 30 us: its last
  // bucket, all-reduced alone after backward, took this much of the profile's time.
  const testing::SyntheticRun run;
  const trace::Trace measured = testing::make_synthetic_trace(run);
  const double bytes = 4.0 * static_cast<double>(run.param_numel[0] + run.param_numel[1]);
  const double ratio = allreduce_formula_s(AllreduceAlgorithm::Ring, 4, bytes, run.alpha_s, run.beta_bytes_per_s) /
                       allreduce_formula_s(AllreduceAlgorithm::Ring, 4, bytes, kAlpha, kBeta);
  ASSERT_LT(ratio, kSlowProfileRatio);
  char expected[96];
  std::snprintf(expected, sizeof expected, " took x%.2f of the profile's times", ratio);
  const auto slow = slow_profile_warning(known_profile(), measured, "m.json");
  ASSERT_TRUE(slow.has_value());
  EXPECT_EQ(slow->rfind("--machine m.json: the trace's ", 0), 0u) << *slow;
  EXPECT_NE(slow->find(expected), std::string::npos) << *slow;
  EXPECT_NE(slow->find("measure the profile again beside the job"), std::string::npos) << *slow;
  EXPECT_EQ(slow->find('\n'), std::string::npos);
  // The replay says it when the network is the profile's, not when the network is told.
  const PreparedReplay prepared = prepare_replay(request_with(known_profile()), measured);
  ASSERT_EQ(prepared.warnings.size(), 1u);
  EXPECT_EQ(prepared.warnings[0], *slow);
  ReplayRequest told = request_with(known_profile());
  told.bandwidth = 2e9;
  EXPECT_TRUE(prepare_replay(told, measured).warnings.empty());
  // A profile of the run's own network, or of another world size (its times are its own
  // world size's), has nothing to say.
  EXPECT_FALSE(slow_profile_warning(known_profile(), testing::make_synthetic_trace(run_on_the_profiles_network()),
                                    "m.json"));
  EXPECT_FALSE(slow_profile_warning(known_profile(2), measured, "m.json"));
}

TEST(MachineSettings, FewSizesSayItInTheHeadline) {
  Calibration from_trace;
  from_trace.points = {{1024, 1e-3, 5}, {4096, 2e-3, 5}};
  const std::string note = few_sizes_headline_note(from_trace);
  EXPECT_NE(note.find("network fitted to 2 message sizes"), std::string::npos) << note;
  EXPECT_NE(note.find("ddp-machine-profile --out machine.json"), std::string::npos) << note;
  EXPECT_NE(note.find("--machine machine.json"), std::string::npos) << note;
  EXPECT_NE(note.find("(a line through 2 always fits)"), std::string::npos) << note;
  // With a profile given, the trace's fit was kept over it by --calibration: that is the fix.
  const std::string kept = few_sizes_headline_note(from_trace, true);
  EXPECT_NE(kept.find("--calibration keeps it over the --machine profile's network"), std::string::npos) << kept;
  EXPECT_EQ(kept.find("ddp-machine-profile --out"), std::string::npos) << kept;
  Calibration one_size;
  one_size.points = {{1024, 1e-3, 5}};
  EXPECT_NE(few_sizes_headline_note(one_size).find("network fitted to 1 message size of the trace (one size cannot "
                                                   "tell latency from bandwidth)"),
            std::string::npos);
  from_trace.points.push_back({16384, 3e-3, 5});
  EXPECT_EQ(few_sizes_headline_note(from_trace), "");
  Calibration from_machine = machine_settings(known_profile(), AllreduceAlgorithm::Ring, "m.json").calibration;
  from_machine.points.resize(2);
  EXPECT_EQ(few_sizes_headline_note(from_machine), "");
  EXPECT_EQ(few_sizes_headline_note(std::nullopt), "");
}

// Through the binary: the headline line itself names the fix, and --machine removes the need.
TEST(MachineSettings, ReplayHeadlineNamesTheFixAndMachineRemovesIt) {
  test_support::TempDir dir;
  testing::SyntheticRun run;
  run.buckets = {{7, 6, 5, 4}, {3, 2, 1, 0}};  // two bucket sizes
  trace::write_trace(dir / "two-sizes", testing::make_synthetic_trace(run));
  trace::write_machine_profile(dir / "machine.json", known_profile());
  const Outcome fitted = run_cli(dir, "replay " + (dir / "two-sizes") + " --compute median");
  ASSERT_EQ(fitted.status, 0) << fitted.err;
  const auto headline_of = [](const std::string& out) {
    const auto at = out.find("  iteration time (s)");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_NE(headline_of(fitted.out).find("<- network fitted to 2 message sizes"), std::string::npos) << fitted.out;
  EXPECT_NE(headline_of(fitted.out).find("ddp-machine-profile --out machine.json"), std::string::npos);
  const Outcome measured = run_cli(dir, "replay " + (dir / "two-sizes") + " --compute median --machine " +
                                            (dir / "machine.json"));
  ASSERT_EQ(measured.status, 0) << measured.err;
  EXPECT_EQ(headline_of(measured.out).find("<-"), std::string::npos) << measured.out;
  EXPECT_EQ(measured.out.find("warning"), std::string::npos) << measured.out;
  EXPECT_NE(measured.out.find("calibrated from the machine profile " + (dir / "machine.json")), std::string::npos)
      << measured.out;
  EXPECT_NE(measured.out.find("two all-reduces in flight at once, x1 of one's rate"), std::string::npos) << measured.out;
  // --help lists the profile and its overrides in one group, and only those.
  const Outcome help = run_cli(dir, "replay --help");
  const auto group = help.out.find("Machine (a profile, and the flags that override it):");
  ASSERT_NE(group, std::string::npos) << help.out;
  const auto group_end = help.out.find("\n\n", group);
  for (const char* flag : {"--machine", "--bandwidth", "--latency", "--allreduces-in-flight", "--effective-cores",
                           "--cores", "--overlap-bandwidth-fraction", "--compute-fraction-during-allreduce",
                           "--sleep-resume-cost"}) {
    const auto at = help.out.find("\n  " + std::string(flag) + " ");
    EXPECT_GT(at, group) << flag;
    EXPECT_LT(at, group_end) << flag;
  }
  for (const char* flag : {"--world-size", "--bucket-cap-mb", "--slowdown"}) {
    const auto at = help.out.find("\n  " + std::string(flag) + " ");
    EXPECT_TRUE(at < group || at > group_end) << flag;
  }
  // The concept's old flag name still parses, and is not listed.
  EXPECT_EQ(help.out.find("--concurrent-allreduces"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace ddpsim::sim
