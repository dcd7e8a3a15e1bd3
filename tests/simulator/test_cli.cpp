// The ddp-sim command line: real binary, real files, exit statuses and one-line errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <map>
#include <vector>
#include <sstream>
#include <string>

#include "ddpsim/trace/io.hpp"
#include "cli_runner.hpp"
#include "synthetic_trace.hpp"
#include "temp_dir.hpp"

namespace ddpsim::sim {
namespace {

std::string write_measured(const test_support::TempDir& dir) {
  testing::SyntheticRun run;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  return dir / "measured";
}

// A trace without a batch size (a profiler import) has no throughput: the report leaves the row
// out rather than print 0 against 0; with one, the row is there.
TEST(Cli, ReplayLeavesOutAThroughputNeitherSideKnows) {
  test_support::TempDir dir;
  const std::string with_batch = write_measured(dir);
  trace::Trace trace = testing::make_synthetic_trace(testing::SyntheticRun{});
  for (trace::RankTrace& rank : trace.ranks) rank.meta.workload.erase("batch_size");
  trace::write_trace(dir / "no-batch", trace);
  const Outcome known = run_cli(dir, "replay " + with_batch + " --iterations 4");
  ASSERT_EQ(known.status, 0) << known.err;
  EXPECT_NE(known.out.find("\n  samples/s "), std::string::npos) << known.out;
  const Outcome unknown = run_cli(dir, "replay " + std::string(dir / "no-batch") + " --iterations 4");
  ASSERT_EQ(unknown.status, 0) << unknown.err;
  EXPECT_NE(unknown.out.find("iteration time (s)"), std::string::npos) << unknown.out;
  EXPECT_EQ(unknown.out.find("samples/s"), std::string::npos) << unknown.out;
}

TEST(Cli, ReplayWritesPredictionAndReport) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const Outcome outcome = run_cli(dir, "replay " + measured + " --out " + dir / "predicted" + " --json " +
                                           dir / "report.json" + " --iterations 4");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("iteration time"), std::string::npos) << outcome.out;
  const trace::Trace predicted = trace::read_trace(dir / "predicted");
  EXPECT_EQ(predicted.meta().source, "simulated");
  EXPECT_EQ(testing::iteration_times_s(predicted).size(), 4u);
  const auto report = nlohmann::json::parse(slurp(dir / "report.json"));
  testing::SyntheticRun run;
  EXPECT_NEAR(report["network"]["alpha_s"].get<double>(), run.alpha_s, 0.03 * run.alpha_s);
  EXPECT_EQ(report["network"]["source"], "calibrated");
  EXPECT_EQ(report["world_size"], 4);
  // Per bucket the calibrated line reproduces the network's time (from the last rank to start),
  // while each rank's own time also holds rank 0's waits for its slower peers.
  EXPECT_NE(outcome.out.find("per bucket all-reduce transfer, from the last rank to start"), std::string::npos)
      << outcome.out;
  const auto& measured_buckets = report["measured"]["buckets"];
  ASSERT_EQ(measured_buckets.size(), report["predicted"]["buckets"].size());
  ASSERT_FALSE(measured_buckets.empty());
  for (std::size_t b = 0; b < measured_buckets.size(); ++b) {
    const double transfer_s = measured_buckets[b]["median_transfer_s"].get<double>();
    EXPECT_NEAR(report["predicted"]["buckets"][b]["median_transfer_s"].get<double>(), transfer_s, 0.03 * transfer_s)
        << "bucket " << b;
  }
  // Bucket 0 is the first rank 0 reaches while its peers still compute.
  EXPECT_GT(measured_buckets[0]["mean_allreduce_s"].get<double>(),
            1.05 * measured_buckets[0]["median_transfer_s"].get<double>());
}

// A lone Gloo rank's all-reduce windows are its own pass over each bucket: the report names the
// cost per MB in text and JSON; a trace of more ranks has none (Note [local all-reduce work]).
TEST(Cli, ReportNamesALoneRanksOwnPassOverEachBucket) {
  test_support::TempDir dir;
  testing::SyntheticRun one;
  one.world_size = 1;
  one.local_seconds_per_byte = 6e-11;
  trace::write_trace(dir / "one", testing::make_synthetic_trace(one));
  const Outcome lone = run_cli(dir, "replay " + std::string(dir / "one") + " --iterations 3 --world-size 2 "
                                    "--latency 40e-6 --bandwidth 2e9 --json " + dir / "one.json");
  ASSERT_EQ(lone.status, 0) << lone.err;
  EXPECT_NE(lone.out.find("each bucket's own pass before its transfer 0.06 ms per MB"), std::string::npos) << lone.out;
  EXPECT_NEAR(nlohmann::json::parse(slurp(dir / "one.json"))["local_seconds_per_byte"].get<double>(), 6e-11, 1e-13);
  const Outcome many = run_cli(dir, "replay " + write_measured(dir) + " --iterations 3 --json " + dir / "many.json");
  ASSERT_EQ(many.status, 0) << many.err;
  EXPECT_EQ(many.out.find("own pass"), std::string::npos) << many.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "many.json"))["local_seconds_per_byte"].get<double>(), 0.0);
}

// More ranks sharing cores predicted from a trace of one say in the headline that the trace
// holds nothing of how they slow each other; without shared cores, or from 2 ranks, they do not.
TEST(Cli, MoreRanksSharingCoresFromOneRankSayItInTheHeadline) {
  test_support::TempDir dir;
  testing::SyntheticRun one;
  one.world_size = 1;
  trace::write_trace(dir / "one", testing::make_synthetic_trace(one));
  const std::string network = " --iterations 3 --latency 40e-6 --bandwidth 2e9";
  const std::string note = "from a trace of 1 rank, how ranks sharing these cores slow each other's compute";
  const auto headline = [](const std::string& out) { return out.substr(out.find("iteration time (s)")).substr(0, 600); };
  const Outcome shared = run_cli(dir, "replay " + std::string(dir / "one") + network + " --world-size 2 --cores 1.5 "
                                      "--json " + dir / "shared.json");
  ASSERT_EQ(shared.status, 0) << shared.err;
  EXPECT_NE(headline(shared.out).find(note), std::string::npos) << shared.out;
  EXPECT_NE(nlohmann::json::parse(slurp(dir / "shared.json"))["headline_note"].get<std::string>().find(note),
            std::string::npos);
  const Outcome paced = run_cli(dir, "replay " + std::string(dir / "one") + network +
                                     " --world-size 2 --effective-cores 2=1.8 --core-sharing paced");
  ASSERT_EQ(paced.status, 0) << paced.err;
  EXPECT_NE(headline(paced.out).find(note), std::string::npos) << paced.out;
  const Outcome apart = run_cli(dir, "replay " + std::string(dir / "one") + network + " --world-size 2");
  ASSERT_EQ(apart.status, 0) << apart.err;
  EXPECT_EQ(apart.out.find(note), std::string::npos) << apart.out;
  const Outcome from_two = run_cli(dir, "replay " + write_measured(dir) + network + " --world-size 4 --cores 3");
  ASSERT_EQ(from_two.status, 0) << from_two.err;
  EXPECT_EQ(from_two.out.find(note), std::string::npos) << from_two.out;
}

// The report says which core sharing and resume cost the replay used, in text and JSON.
TEST(Cli, ReportNamesPacedCoreSharingAndTheResumeCost) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const Outcome plain = run_cli(dir, "replay " + measured + " --iterations 3 --json " + dir / "plain.json");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out.find("paced by the ranks"), std::string::npos) << plain.out;
  const auto uniform = nlohmann::json::parse(slurp(dir / "plain.json"));
  EXPECT_EQ(uniform["core_sharing"], "uniform");
  EXPECT_EQ(uniform["sleep_resume_cost_s"].get<double>(), 0.0);
  const Outcome paced = run_cli(dir, "replay " + measured + " --iterations 3 --cores 4 --core-sharing paced "
                                     "--sleep-resume-cost 0.0005 --slowdown 1=2 --json " + dir / "paced.json");
  ASSERT_EQ(paced.status, 0) << paced.err;
  EXPECT_NE(paced.out.find("paced by the ranks computing at once on shared cores"), std::string::npos) << paced.out;
  EXPECT_NE(paced.out.find("+0.5 ms resuming after each slowdown sleep"), std::string::npos) << paced.out;
  const auto report = nlohmann::json::parse(slurp(dir / "paced.json"));
  EXPECT_EQ(report["core_sharing"], "paced");
  EXPECT_DOUBLE_EQ(report["sleep_resume_cost_s"].get<double>(), 0.0005);
  // With no rank slowed there are no sleeps: the workload line does not name their cost.
  const Outcome unslowed = run_cli(dir, "replay " + measured + " --iterations 3 --sleep-resume-cost 0.0005");
  ASSERT_EQ(unslowed.status, 0) << unslowed.err;
  EXPECT_EQ(unslowed.out.find("resuming after each slowdown sleep"), std::string::npos) << unslowed.out;
}

// --independent-copies reaches the replay and the report says so, in text only where there are
// added ranks to draw for.
TEST(Cli, ReportNamesIndependentCopies) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);  // 4 ranks
  const Outcome plain = run_cli(dir, "replay " + measured + " --iterations 3 --world-size 8 --json " + dir / "plain.json");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out.find("drawing their own iterations"), std::string::npos) << plain.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "plain.json"))["independent_copies"], false);
  const Outcome drawn = run_cli(dir, "replay " + measured + " --iterations 3 --world-size 8 --independent-copies "
                                     "--json " + dir / "drawn.json");
  ASSERT_EQ(drawn.status, 0) << drawn.err;
  EXPECT_NE(drawn.out.find("ranks beyond the trace drawing their own iterations"), std::string::npos) << drawn.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "drawn.json"))["independent_copies"], true);
  const Outcome same_size = run_cli(dir, "replay " + measured + " --iterations 3 --independent-copies");
  ASSERT_EQ(same_size.status, 0) << same_size.err;
  EXPECT_EQ(same_size.out.find("drawing their own iterations"), std::string::npos) << same_size.out;
}

TEST(Cli, BootstrapGivesTheMedianAnIntervalOnlyWhenAskedAndWithEnoughRuns) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  // The synthetic run's iterations differ (jitter 0.95-1.05): resampling them moves the median.
  const Outcome boot = run_cli(dir, "replay " + measured + " --runs 21 --bootstrap --json " +
                                        dir / "boot.json");
  ASSERT_EQ(boot.status, 0) << boot.err;
  EXPECT_NE(boot.out.find("90 % bootstrap interval"), std::string::npos) << boot.out;
  const auto report = nlohmann::json::parse(slurp(dir / "boot.json"));
  ASSERT_TRUE(report.contains("interval")) << report.dump();
  EXPECT_EQ(report["interval"]["replicates"], 20);
  const double low = report["interval"]["median_iteration_s"][0].get<double>();
  const double high = report["interval"]["median_iteration_s"][1].get<double>();
  EXPECT_LT(low, high);
  // The interval brackets the measured iterations' median within their jitter's range.
  const double measured_median = testing::median_iteration_s(trace::read_trace(measured));
  EXPECT_GT(low, 0.9 * measured_median);
  EXPECT_LT(high, 1.1 * measured_median);

  const Outcome plain = run_cli(dir, "replay " + measured + " --runs 21 --json " + dir / "plain.json");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_FALSE(nlohmann::json::parse(slurp(dir / "plain.json")).contains("interval"));

  expect_one_line_error(run_cli(dir, "replay " + measured + " --runs 5 --bootstrap"),
                        "--bootstrap: expected --runs of at least 11");
}

// --repeats: other measured runs of the replayed trace's configuration widen the bootstrap
// interval by how much the three runs' medians differ: [lo · q05, hi · q95] of the ratios of
// every two of them. A run of another configuration, or the replayed trace again, is refused
// in one line before anything is written.
TEST(Cli, RepeatsWidenTheIntervalByTheRunToRunSpread) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  testing::SyntheticRun slower, faster, smaller;
  slower.forward_s = 0.030;
  faster.backward_s = 0.020;
  smaller.world_size = 2;
  trace::write_trace(dir / "slower", testing::make_synthetic_trace(slower));
  trace::write_trace(dir / "faster", testing::make_synthetic_trace(faster));
  trace::write_trace(dir / "smaller", testing::make_synthetic_trace(smaller));
  const Outcome outcome = run_cli(dir, "replay " + measured + " --runs 21 --bootstrap --slowdown 1=2 --repeats " +
                                           dir / "slower" + " " + dir / "faster" + " --json " + dir / "rr.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("90 % interval with the run-to-run spread of 3 runs of the baseline"), std::string::npos)
      << outcome.out;
  const auto report = nlohmann::json::parse(slurp(dir / "rr.json"));
  ASSERT_TRUE(report.contains("run_to_run_interval")) << report.dump();
  EXPECT_EQ(report["run_to_run_interval"]["runs"], 3);
  std::vector<double> medians;
  for (const char* run : {"measured", "slower", "faster"})
    medians.push_back(testing::median_iteration_s(trace::read_trace(dir / run)));
  ASSERT_GT(medians[1], 1.1 * medians[0]);  // the runs differ, so the spread is not 1
  std::vector<double> ratios;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      if (i != j) ratios.push_back(medians[i] / medians[j]);
  std::sort(ratios.begin(), ratios.end());
  // 6 ratios: the 5 % quantile sits at position 0.25, the 95 % one at 4.75.
  const double q05 = ratios[0] + 0.25 * (ratios[1] - ratios[0]);
  const double q95 = ratios[4] + 0.75 * (ratios[5] - ratios[4]);
  const double low = report["interval"]["median_iteration_s"][0].get<double>();
  const double high = report["interval"]["median_iteration_s"][1].get<double>();
  EXPECT_NEAR(report["run_to_run_interval"]["median_iteration_s"][0].get<double>(), low * q05, 1e-9 * low);
  EXPECT_NEAR(report["run_to_run_interval"]["median_iteration_s"][1].get<double>(), high * q95, 1e-9 * high);

  const Outcome plain = run_cli(dir, "replay " + measured + " --runs 21 --bootstrap --json " + dir / "plain.json");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out.find("run-to-run"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("--repeats with other runs of it widens the interval"), std::string::npos) << plain.out;
  EXPECT_FALSE(nlohmann::json::parse(slurp(dir / "plain.json")).contains("run_to_run_interval"));

  expect_one_line_error(run_cli(dir, "replay " + measured + " --json " + dir / "bad.json" + " --repeats " +
                                         dir / "slower" + " " + dir / "smaller"),
                        "--repeats " + dir / "smaller" +
                            ": expected a run of the replayed trace's configuration, got world_size 2, "
                            "the replayed trace's 4");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --json " + dir / "bad.json" + " --repeats " +
                                         dir / "slower" + " " + dir / "slower"),
                        "--repeats " + dir / "slower" + ": expected another run, got the replayed trace or a "
                                                        "repeat given twice");
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.json"));
}

// --pool: the replayed trace and its --repeats replayed as one run. Its prediction draws from
// every run's iterations, so it lies between the runs' own predictions; the run-to-run interval
// is still each run's own median's spread.
TEST(Cli, PoolReplaysTheTraceAndItsRepeatsAsOneRun) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  testing::SyntheticRun slower, slowest;  // the machine slowed down after the replayed run
  slower.forward_s = 0.030;
  slowest.forward_s = 0.040;
  trace::write_trace(dir / "slower", testing::make_synthetic_trace(slower));
  trace::write_trace(dir / "slowest", testing::make_synthetic_trace(slowest));
  const auto predicted = [&](const std::string& trace, const std::string& flags) {
    const Outcome outcome =
        run_cli(dir, "replay " + trace + " --slowdown 1=2 --runs 1 " + flags + " --json " + dir / "p.json");
    EXPECT_EQ(outcome.status, 0) << outcome.err;
    return nlohmann::json::parse(slurp(dir / "p.json"));
  };
  const std::string repeats = "--repeats " + dir / "slower" + " " + dir / "slowest";
  // Each synthetic run repeats one iteration, so the pooled median is one run's: the mean shows
  // the mix.
  std::vector<double> alone;
  for (const char* run : {"measured", "slower", "slowest"})
    alone.push_back(predicted(dir / run, "")["predicted"]["mean_iteration_s"].get<double>());
  const nlohmann::json pooled = predicted(measured, repeats + " --pool");
  const nlohmann::json single = predicted(measured, repeats);
  const double mean = pooled["predicted"]["mean_iteration_s"].get<double>();
  EXPECT_GT(mean, *std::min_element(alone.begin(), alone.end()));
  EXPECT_LT(mean, *std::max_element(alone.begin(), alone.end()));
  EXPECT_GT(std::abs(mean - alone[0]), 0.01 * alone[0]);
  EXPECT_NEAR(single["predicted"]["mean_iteration_s"].get<double>(), alone[0], 1e-9 * alone[0]);
  EXPECT_EQ(pooled["run_to_run_interval"]["ratios"], single["run_to_run_interval"]["ratios"]);
  EXPECT_EQ(pooled["run_to_run_interval"]["runs"], 3);
  const Outcome text = run_cli(dir, "replay " + measured + " --runs 1 " + repeats + " --pool");
  EXPECT_NE(text.out.find("pooled: 3 runs (the trace and its --repeats)"), std::string::npos) << text.out;

  expect_one_line_error(run_cli(dir, "replay " + measured + " --pool --json " + dir / "bad.json"), "--pool");
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.json"));
}

TEST(Cli, CalibrateReportsAlphaBetaAndResiduals) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const Outcome outcome = run_cli(dir, "calibrate " + measured + " --json " + dir / "fit.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("R^2"), std::string::npos);
  const auto fit = nlohmann::json::parse(slurp(dir / "fit.json"));
  testing::SyntheticRun run;
  EXPECT_NEAR(fit["beta_bytes_per_s"].get<double>(), run.beta_bytes_per_s, 0.03 * run.beta_bytes_per_s);
  EXPECT_GT(fit["r_squared"].get<double>(), 0.999);
}

TEST(Cli, GivenNetworkSkipsCalibration) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const Outcome outcome = run_cli(dir, "replay " + measured + " --bandwidth 1e9 --latency 1e-5 --allreduce ring --json " +
                                           dir / "report.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  const auto report = nlohmann::json::parse(slurp(dir / "report.json"));
  EXPECT_EQ(report["network"]["source"], "given");
  EXPECT_DOUBLE_EQ(report["network"]["beta_bytes_per_s"].get<double>(), 1e9);
}

TEST(Cli, BucketCapWhatIfRebuckets) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const Outcome outcome = run_cli(dir, "replay " + measured + " --bucket-cap-mb 1024 --first-bucket-cap-mb 1024 --out " +
                                           dir / "predicted");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  const trace::Trace predicted = trace::read_trace(dir / "predicted");
  ASSERT_EQ(predicted.meta().bucket_assignments.size(), 1u);
  EXPECT_EQ(predicted.meta().bucket_assignments[0].buckets.size(), 1u);
  EXPECT_EQ(predicted.meta().bucket_cap_bytes, 1024LL * 1024 * 1024);
}

// A replay at the source run's configuration is compared with it as an error; a what-if is
// compared with a run of another configuration, so the same ratio is the predicted change.
TEST(Cli, WhatIfsAreLabelledAsChangesNotErrors) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const Outcome same = run_cli(dir, "replay " + measured + " --iterations 4 --json " + dir / "same.json");
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_NE(same.out.find("measured      predicted     error"), std::string::npos) << same.out;
  EXPECT_EQ(same.out.find("what-if"), std::string::npos) << same.out;
  const auto reconstruction = nlohmann::json::parse(slurp(dir / "same.json"));
  EXPECT_TRUE(reconstruction["whatif"].empty());
  EXPECT_TRUE(reconstruction.contains("error"));
  EXPECT_FALSE(reconstruction.contains("change"));

  const std::map<std::string, std::string> what_ifs = {
      {"--slowdown 1=2", "what-if (--slowdown)"},
      {"--delay 0=5", "what-if (--delay)"},
      {"--world-size 8", "what-if (world size 4 -> 8)"},
      {"--bucket-cap-mb 1024 --first-bucket-cap-mb 1024", "what-if (buckets)"},
      {"--timeout 100", "what-if (--timeout)"},
  };
  for (const auto& [flags, label] : what_ifs) {
    const Outcome changed = run_cli(dir, "replay " + measured + " --iterations 4 " + flags + " --json " + dir / "w.json");
    ASSERT_EQ(changed.status, 0) << flags << ": " << changed.err;
    EXPECT_NE(changed.out.find(label), std::string::npos) << flags << ": " << changed.out;
    EXPECT_NE(changed.out.find("source run        what-if    change"), std::string::npos) << changed.out;
    const auto report = nlohmann::json::parse(slurp(dir / "w.json"));
    EXPECT_EQ(report["whatif"].size(), 1u) << flags;
    EXPECT_TRUE(report.contains("change")) << flags;
    EXPECT_FALSE(report.contains("error")) << flags;
    // At the measured world size a what-if prints its median with a 90 % interval by default;
    // a scale-out (costly: every run simulates every rank) asks for it with --runs.
    const bool scale_out = flags.rfind("--world-size", 0) == 0;
    EXPECT_EQ(report.contains("interval"), !scale_out) << flags;
    EXPECT_EQ(report["distribution"]["runs"].get<int>(), scale_out ? 1 : 21) << flags;
  }
  EXPECT_FALSE(reconstruction.contains("interval"));
  const Outcome one = run_cli(dir, "replay " + measured + " --iterations 4 --slowdown 1=2 --runs 1 --json " + dir / "one.json");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_FALSE(nlohmann::json::parse(slurp(dir / "one.json")).contains("interval"));
}

TEST(Cli, MissingTraceIsOneLineExit2) {
  test_support::TempDir dir;
  expect_one_line_error(run_cli(dir, "replay " + dir / "nowhere"), "nowhere");
}

TEST(Cli, InvalidTraceGivesTheReadersError) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  std::ofstream(measured + "/rank-1.meta.json") << "{\"schema\": \"something-else\"}\n";
  expect_one_line_error(run_cli(dir, "replay " + measured), "rank-1.meta.json");
  expect_one_line_error(run_cli(dir, "calibrate " + measured), "rank-1.meta.json");
}

TEST(Cli, BadSimgridConfigIsOneLineExit2) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  expect_one_line_error(run_cli(dir, "replay " + measured + " --cfg network/bogus:1"), "network/bogus");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --cfg network/model:Warp9"), "Warp9");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --cfg nocolon"), "nocolon");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --cfg contexts/nthreads:2"), "contexts/nthreads");
  // A valid override is applied (LV08's slow-start factor makes the prediction slower).
  const Outcome lv08 = run_cli(dir, "replay " + measured + " --cfg network/model:LV08 --allreduce ring --json " + dir / "lv08.json");
  ASSERT_EQ(lv08.status, 0) << lv08.err;
  const Outcome cm02 = run_cli(dir, "replay " + measured + " --allreduce ring --json " + dir / "cm02.json");
  ASSERT_EQ(cm02.status, 0) << cm02.err;
  const auto slow = nlohmann::json::parse(slurp(dir / "lv08.json"));
  const auto fast = nlohmann::json::parse(slurp(dir / "cm02.json"));
  EXPECT_GT(slow["simulation"]["simulated_end_s"].get<double>(), fast["simulation"]["simulated_end_s"].get<double>());
}

TEST(Cli, BadFlagsAreOneLineExit2) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  expect_one_line_error(run_cli(dir, "replay " + measured + " --allreduce butterfly"), "--allreduce");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --compute max"), "--compute");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --platform " + dir / "missing.xml"), "--platform");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --bandwidth -5 --latency 0"), "--bandwidth");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --slowdown 9=2"), "--slowdown");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --no-such-flag"), "no-such-flag");
}

// Numbers that once slipped through: --world-size 0 and -5 silently replayed the trace's size,
// and NaN passes any range check written with comparisons.
TEST(Cli, NonPositiveOrNonFiniteNumbersAreOneLineExit2) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  for (const char* flag : {"--world-size 0", "--world-size -5", "--runs 0", "--iterations -1",
                           "--timeout nan", "--bandwidth inf", "--latency -1", "--bucket-cap-mb 0",
                           "--gpus-per-node 0", "--timeout abc"}) {
    const std::string text(flag);
    expect_one_line_error(run_cli(dir, "replay " + measured + " " + text), text.substr(0, text.find(' ')));
  }
}

TEST(Cli, PlatformFileWithTooFewHostsIsOneLineExit2) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  std::ofstream(dir / "small.xml")
      << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<platform version=\"4.1\"><zone id=\"w\" routing=\"Full\">"
         "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>"
         "<link id=\"l\" bandwidth=\"1GBps\" latency=\"10us\"/>"
         "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route></zone></platform>\n";
  expect_one_line_error(run_cli(dir, "replay " + measured + " --platform " + dir / "small.xml"),
                        "expected at least 4 hosts");
  std::ofstream(dir / "broken.xml") << "<platform version=\"4.1\"><zone id=\"w\" routing=\"Full\">\n";
  const Outcome broken = run_cli(dir, "replay " + measured + " --platform " + dir / "broken.xml");
  EXPECT_EQ(broken.status, 2) << broken.err;
  EXPECT_EQ(count_lines(broken.err), 1) << broken.err;
}

TEST(Cli, PlatformFileRunsTheReplay) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  std::ofstream(dir / "four.xml")
      << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<platform version=\"4.1\">"
         "<cluster id=\"c\" prefix=\"node-\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"2GBps\" lat=\"20us\"/>"
         "</platform>\n";
  const Outcome outcome = run_cli(dir, "replay " + measured + " --platform " + dir / "four.xml" + " --json " +
                                           dir / "report.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  const auto report = nlohmann::json::parse(slurp(dir / "report.json"));
  EXPECT_GT(report["simulation"]["simulated_end_s"].get<double>(), 0.1);
}

}  // namespace
}  // namespace ddpsim::sim

namespace ddpsim::sim {
namespace {

TEST(CliWhatIfs, TimeoutCurveFindsTheSmallestSafeTimeout) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  // Rank 1 stalls 300 ms at iteration 2: a 0.1 s timeout always fails, 1 s never does.
  const Outcome outcome = run_cli(dir, "timeout-curve " + measured + " --timeouts 1,0.1 --runs 2 --delay 1=300@2" +
                                           " --csv " + dir / "curve.csv" + " --json " + dir / "curve.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  const auto json = nlohmann::json::parse(slurp(dir / "curve.json"));
  ASSERT_EQ(json["points"].size(), 2u);
  EXPECT_EQ(json["points"][0]["timeout_s"].get<double>(), 0.1);
  EXPECT_EQ(json["points"][0]["failure_probability"].get<double>(), 1.0);
  EXPECT_GT(json["points"][0]["mean_time_to_failure_s"].get<double>(), 0.0);
  EXPECT_EQ(json["points"][1]["failure_probability"].get<double>(), 0.0);
  EXPECT_EQ(json["smallest_safe_timeout_s"].get<double>(), 1.0);
  EXPECT_EQ(count_lines(slurp(dir / "curve.csv")), 3);
}

// With drawn stalls and no --runs, a curve takes 100 draws a timeout (P(fail) a frequency, not 0
// or 1); --runs overrides it; without drawn stalls every run is the same and one is taken.
TEST(CliWhatIfs, TimeoutCurveDrawsStallsManyTimesUnlessToldOtherwise) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const auto runs = [&](const std::string& extra) {
    const Outcome outcome = run_cli(dir, "timeout-curve " + measured + " --timeouts 0.05 --iterations 4 " + extra +
                                             " --json " + dir / "c.json");
    EXPECT_EQ(outcome.status, 0) << outcome.err;
    EXPECT_NE(outcome.out.find(" per timeout)"), std::string::npos) << outcome.out;
    return nlohmann::json::parse(slurp(dir / "c.json"))["runs"].get<int>();
  };
  EXPECT_EQ(runs("--delay-dist 1=exp:20"), 100);
  EXPECT_EQ(runs("--delay-dist 1=exp:20 --runs 7"), 7);
  EXPECT_EQ(runs(""), 1);
}

TEST(CliWhatIfs, MonteCarloRunsReportADistribution) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const Outcome outcome = run_cli(dir, "replay " + measured + " --compute median --runs 3 --delay-dist all=uniform:0,20 --seed 4 --json " +
                                           dir / "report.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  const auto distribution = nlohmann::json::parse(slurp(dir / "report.json"))["distribution"];
  EXPECT_EQ(distribution["runs"].get<int>(), 3);
  // With stalls, median compute replays every source iteration (9) per run, not 3.
  EXPECT_EQ(distribution["iterations"].get<int>(), 27);
  EXPECT_LE(distribution["p50_s"].get<double>(), distribution["p99_s"].get<double>());
  EXPECT_LT(distribution["min_s"].get<double>(), distribution["max_s"].get<double>());
  EXPECT_NE(outcome.out.find("p99"), std::string::npos);
}

TEST(CliWhatIfs, BadDelayIsOneLine) {
  test_support::TempDir dir;
  expect_one_line_error(run_cli(dir, "replay " + write_measured(dir) + " --delay 1=abc"), "--delay");
}

}  // namespace
}  // namespace ddpsim::sim

namespace ddpsim::sim {
namespace {

// A sweep CSV's rows as column name -> cell, keyed by the point (its first three cells).
std::map<std::string, std::map<std::string, std::string>> sweep_rows(const std::string& csv) {
  const auto cells_of = [](const std::string& line) {
    std::vector<std::string> cells;
    std::size_t begin = 0;
    for (std::size_t comma; (comma = line.find(',', begin)) != std::string::npos; begin = comma + 1)
      cells.push_back(line.substr(begin, comma - begin));
    cells.push_back(line.substr(begin));
    return cells;
  };
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  const std::vector<std::string> header = cells_of(line);
  std::map<std::string, std::map<std::string, std::string>> rows;
  while (std::getline(lines, line)) {
    const std::vector<std::string> cells = cells_of(line);
    EXPECT_EQ(cells.size(), header.size()) << line;
    if (cells.size() != header.size()) continue;
    auto& row = rows[cells[0] + "," + cells[1] + "," + cells[2]];
    for (std::size_t i = 0; i < cells.size(); ++i) row[header[i]] = cells[i];
  }
  return rows;
}

TEST(CliWhatIfs, SweepWritesOneRowPerPointAndResumes) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const std::string csv = dir / "sweep.csv";
  const Outcome first = run_cli(dir, "sweep " + measured + " --bucket-caps 0,1 --slowdowns 1,2 --world-sizes 4 --jobs 2 --out " + csv);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(count_lines(slurp(csv)), 1 + 4);
  // A slower rank 0 makes every point's iteration longer than its slowdown-1 twin.
  std::map<std::string, double> p50;
  for (const auto& [key, row] : sweep_rows(slurp(csv))) {
    p50[row.at("bucket_cap_mb") + "/" + row.at("slowdown")] = std::stod(row.at("p50_iteration_s"));
  }
  EXPECT_GT(p50["0/2"], 1.3 * p50["0/1"]);
  EXPECT_GT(p50["1/2"], 1.3 * p50["1/1"]);
  const Outcome resumed = run_cli(dir, "sweep " + measured + " --bucket-caps 0,1,2 --slowdowns 1,2 --world-sizes 4 --out " + csv);
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("2 points simulated, 4 already"), std::string::npos) << resumed.out;
  EXPECT_EQ(count_lines(slurp(csv)), 1 + 6);
}

// A 2-host platform: world size 4 cannot run on it, so that point fails.
std::string write_two_host_platform(const test_support::TempDir& dir) {
  std::ofstream(dir / "two.xml")
      << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<platform version=\"4.1\">"
         "<cluster id=\"c\" prefix=\"node-\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" bw=\"2GBps\" lat=\"20us\"/>"
         "</platform>\n";
  return dir / "two.xml";
}

// Once a sweep exited 0 with failed points in its CSV.
TEST(CliWhatIfs, SweepWithFailedPointsExits1AndSaysHowMany) {
  test_support::TempDir dir;
  testing::SyntheticRun run;
  run.world_size = 2;
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  const std::string csv = dir / "sweep.csv";
  const std::string arguments = "sweep " + dir / "measured" + " --platform " + write_two_host_platform(dir) +
                                " --world-sizes 2,4 --out " + csv;
  const Outcome first = run_cli(dir, arguments);
  EXPECT_EQ(first.status, 1) << first.err;
  EXPECT_EQ(count_lines(first.err), 1) << first.err;
  EXPECT_NE(first.err.find("1 of 2 points failed"), std::string::npos) << first.err;
  const std::string rows = slurp(csv);
  EXPECT_EQ(count_lines(rows), 1 + 2);
  EXPECT_NE(rows.find("expected at least 4 hosts"), std::string::npos) << rows;
  // The failed row has every column, the reason in the last (error).
  const auto by_point = sweep_rows(rows);
  ASSERT_EQ(by_point.count("0,1,4"), 1u) << rows;
  EXPECT_EQ(by_point.at("0,1,4").at("p50_iteration_s"), "");
  EXPECT_NE(by_point.at("0,1,4").at("error").find("expected at least 4 hosts"), std::string::npos) << rows;
  EXPECT_EQ(by_point.at("0,1,2").at("error"), "");
  // Resumed, the failed point is still in the CSV, so the sweep still fails.
  const Outcome resumed = run_cli(dir, arguments);
  EXPECT_EQ(resumed.status, 1) << resumed.err;
  EXPECT_NE(resumed.out.find("0 points simulated, 2 already"), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.err.find("1 of 2 points failed"), std::string::npos) << resumed.err;
}

double p50_of_row(const std::string& csv, const std::string& key) {
  const auto rows = sweep_rows(csv);
  const auto row = rows.find(key);
  if (row == rows.end()) {
    ADD_FAILURE() << "no row " << key << " in\n" << csv;
    return -1;
  }
  return std::stod(row->second.at("p50_iteration_s"));
}

// One replay, as a sweep --runs 1 point is (without --runs a what-if replays 21 times for its interval).
double replay_p50(const test_support::TempDir& dir, const std::string& measured, const std::string& slowdown) {
  const Outcome outcome =
      run_cli(dir, "replay " + measured + " --slowdown " + slowdown + " --runs 1 --json " + dir / "r.json");
  EXPECT_EQ(outcome.status, 0) << outcome.err;
  return nlohmann::json::parse(slurp(dir / "r.json"))["distribution"]["p50_s"].get<double>();
}

// Once every sweep slowdown applied to rank 0.
TEST(CliWhatIfs, SweepSlowsTheRankAskedFor) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);  // rank r computes (1 + 0.02 r) times slower
  const std::string csv = dir / "sweep.csv";
  const Outcome sweep = run_cli(dir, "sweep " + measured + " --slowdowns 1,2 --slowdown-rank 3 --runs 1 --out " + csv);
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  const double swept = p50_of_row(slurp(csv), "0,3=2,0");
  const double rank3 = replay_p50(dir, measured, "3=2");
  const double rank0 = replay_p50(dir, measured, "0=2");
  EXPECT_NEAR(swept, rank3, 1e-7 * rank3);
  EXPECT_GT(std::abs(swept - rank0), 0.01 * rank0);  // rank 3 is 6 % slower than rank 0
  // The default stays rank 0, its column a bare factor.
  const Outcome default_rank = run_cli(dir, "sweep " + measured + " --slowdowns 2 --runs 1 --out " + dir / "zero.csv");
  ASSERT_EQ(default_rank.status, 0) << default_rank.err;
  EXPECT_NEAR(p50_of_row(slurp(dir / "zero.csv"), "0,2,0"), rank0, 1e-7 * rank0);
}

// Once --slowdowns took factors only, all of one rank (--slowdown-rank), and 1=2 was refused.
// Now an entry may name its rank with --slowdown's syntax, and a plain factor stays rank 0's.
TEST(CliWhatIfs, SweepSlowdownsNameTheirRank) {
  test_support::TempDir dir;
  testing::SyntheticRun run;
  run.world_size = 2;
  run.rank_skew = 0.1;  // rank 1 computes 10 % slower: slowing it by 2 is slower than slowing rank 0 by 2
  trace::write_trace(dir / "measured", testing::make_synthetic_trace(run));
  const std::string measured = dir / "measured";
  const std::string csv = dir / "sweep.csv";
  const Outcome sweep = run_cli(dir, "sweep " + measured + " --slowdowns 1=2,2 --runs 1 --out " + csv);
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  const double rank1 = replay_p50(dir, measured, "1=2");
  const double rank0 = replay_p50(dir, measured, "0=2");
  EXPECT_GT(rank1, 1.03 * rank0);
  EXPECT_NEAR(p50_of_row(slurp(csv), "0,1=2,0"), rank1, 1e-7 * rank1);
  EXPECT_NEAR(p50_of_row(slurp(csv), "0,2,0"), rank0, 1e-7 * rank0);
  // 0=2 is the point 2 already is, and --slowdown-rank 1 with 2 the point 1=2: resumed, nothing to do.
  const Outcome named = run_cli(dir, "sweep " + measured + " --slowdowns 0=2,1=2 --runs 1 --out " + csv);
  ASSERT_EQ(named.status, 0) << named.err;
  EXPECT_NE(named.out.find("0 points simulated, 2 already"), std::string::npos) << named.out;
  const Outcome by_flag = run_cli(dir, "sweep " + measured + " --slowdowns 2 --slowdown-rank 1 --runs 1 --out " + csv);
  ASSERT_EQ(by_flag.status, 0) << by_flag.err;
  EXPECT_NE(by_flag.out.find("0 points simulated, 1 already"), std::string::npos) << by_flag.out;
}

// Once a sweep point had no interval: each row was one replay's distribution. Now a point is the
// Monte Carlo `replay` runs for the same flags (21 bootstrap runs for a what-if at the trace's
// world size, one run otherwise), and --repeats widens its interval as replay's: the row's
// columns equal the replay's JSON.
TEST(CliWhatIfs, SweepPointsCarryReplaysIntervals) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);  // 4 ranks
  testing::SyntheticRun slower, faster;
  slower.forward_s = 0.030;
  faster.backward_s = 0.020;
  trace::write_trace(dir / "slower", testing::make_synthetic_trace(slower));
  trace::write_trace(dir / "faster", testing::make_synthetic_trace(faster));
  const std::string repeats = " --repeats " + dir / "slower" + " " + dir / "faster";
  const std::string csv = dir / "sweep.csv";
  const Outcome sweep = run_cli(dir, "sweep " + measured + " --slowdowns 1,2 --world-sizes 0,6 --out " + csv + repeats);
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  const auto rows = sweep_rows(slurp(csv));
  ASSERT_EQ(rows.size(), 4u) << slurp(csv);

  const auto cell = [&rows](const std::string& key, const std::string& column) {
    const auto row = rows.find(key);
    if (row == rows.end() || !row->second.count(column)) {
      ADD_FAILURE() << "no " << column << " in row " << key;
      return std::string();
    }
    return row->second.at(column);
  };
  const auto replay_json = [&](const std::string& flags) {
    const Outcome outcome = run_cli(dir, "replay " + measured + " " + flags + repeats + " --json " + dir / "r.json");
    EXPECT_EQ(outcome.status, 0) << outcome.err;
    return nlohmann::json::parse(slurp(dir / "r.json"));
  };
  const auto expect_equal = [](const std::string& swept, const nlohmann::json& replayed) {
    ASSERT_FALSE(swept.empty());
    const double value = replayed.get<double>();
    EXPECT_NEAR(std::stod(swept), value, 1e-7 * value);
  };

  // The straggler what-if: 21 runs, the bootstrap interval and its run-to-run widening.
  const nlohmann::json whatif = replay_json("--slowdown 0=2");
  EXPECT_EQ(cell("0,2,0", "runs"), "21");
  expect_equal(cell("0,2,0", "p50_iteration_s"), whatif["distribution"]["p50_s"]);
  expect_equal(cell("0,2,0", "interval_low_s"), whatif["interval"]["median_iteration_s"][0]);
  expect_equal(cell("0,2,0", "interval_high_s"), whatif["interval"]["median_iteration_s"][1]);
  expect_equal(cell("0,2,0", "run_to_run_low_s"), whatif["run_to_run_interval"]["median_iteration_s"][0]);
  expect_equal(cell("0,2,0", "run_to_run_high_s"), whatif["run_to_run_interval"]["median_iteration_s"][1]);
  EXPECT_LT(std::stod(cell("0,2,0", "run_to_run_low_s")), std::stod(cell("0,2,0", "interval_low_s")));
  EXPECT_GT(std::stod(cell("0,2,0", "run_to_run_high_s")), std::stod(cell("0,2,0", "interval_high_s")));

  // The reconstruction: one run, no bootstrap interval, the run-to-run one around its median.
  const nlohmann::json itself = replay_json("");
  EXPECT_EQ(cell("0,1,0", "runs"), "1");
  EXPECT_EQ(cell("0,1,0", "interval_low_s"), "");
  expect_equal(cell("0,1,0", "run_to_run_low_s"), itself["run_to_run_interval"]["median_iteration_s"][0]);
  expect_equal(cell("0,1,0", "run_to_run_high_s"), itself["run_to_run_interval"]["median_iteration_s"][1]);

  // A scale-out asks for its runs: one by default, as replay.
  EXPECT_EQ(cell("0,2,6", "runs"), "1");
  EXPECT_EQ(cell("0,2,6", "interval_high_s"), "");

  // --runs given is kept, even for a what-if.
  const Outcome one = run_cli(dir, "sweep " + measured + " --slowdowns 2 --runs 1 --out " + dir / "one.csv");
  ASSERT_EQ(one.status, 0) << one.err;
  const auto one_rows = sweep_rows(slurp(dir / "one.csv"));
  ASSERT_EQ(one_rows.count("0,2,0"), 1u);
  EXPECT_EQ(one_rows.at("0,2,0").at("runs"), "1");
  EXPECT_EQ(one_rows.at("0,2,0").at("interval_low_s"), "");
  EXPECT_EQ(one_rows.at("0,2,0").at("run_to_run_low_s"), "");
}

// A sweep resumes by appending rows: an --out with other columns (another CSV, or an older
// ddp-sim's sweep) is refused in one line and left as it was.
TEST(CliWhatIfs, SweepRefusesToResumeACsvOfOtherColumns) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const std::string old_sweep =
      "bucket_cap_mb,slowdown,world_size,buckets,p50_iteration_s,mean_iteration_s,p99_iteration_s,samples_per_s,"
      "failure_probability,wall_s,error\n0,1,0,2,0.1,0.1,0.1,100,0,0.5,\n";
  std::ofstream(dir / "old.csv") << old_sweep;
  expect_one_line_error(run_cli(dir, "sweep " + measured + " --slowdowns 1,2 --runs 1 --out " + dir / "old.csv"),
                        "--out " + dir / "old.csv" + ": expected a sweep CSV to resume, with the header "
                        "'bucket_cap_mb,slowdown,world_size,buckets,p50_iteration_s,interval_low_s,");
  EXPECT_EQ(slurp(dir / "old.csv"), old_sweep);
}

// replay --bucket-caps-mb: the per-bucket list what-if, through the same re-bucketing as one cap.
double replay_p50_with(const test_support::TempDir& dir, const std::string& measured, const std::string& flags) {
  const Outcome outcome = run_cli(dir, "replay " + measured + " " + flags + " --json " + dir / "r.json");
  EXPECT_EQ(outcome.status, 0) << outcome.err;
  return nlohmann::json::parse(slurp(dir / "r.json"))["distribution"]["p50_s"].get<double>();
}

TEST(CliWhatIfs, ReplayWithAListOfBucketCaps) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  // One entry: one cap for every bucket, first included.
  EXPECT_DOUBLE_EQ(replay_p50_with(dir, measured, "--bucket-caps-mb 2"),
                   replay_p50_with(dir, measured, "--bucket-cap-mb 2 --first-bucket-cap-mb 2"));
  // [1, 100] is the 100 MiB cap with a 1 MiB first bucket; [0.001, 0.001, 100] is not.
  EXPECT_DOUBLE_EQ(replay_p50_with(dir, measured, "--bucket-caps-mb 1,100"),
                   replay_p50_with(dir, measured, "--bucket-cap-mb 100 --first-bucket-cap-mb 1"));
  EXPECT_NE(replay_p50_with(dir, measured, "--bucket-caps-mb 0.001,0.001,100"),
            replay_p50_with(dir, measured, "--bucket-caps-mb 1,100"));
  expect_one_line_error(run_cli(dir, "replay " + measured + " --bucket-caps-mb 1,4 --bucket-cap-mb 2"),
                        "--bucket-caps-mb: expected either the list or --bucket-cap-mb/--first-bucket-cap-mb, got both");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --bucket-caps-mb 1,0"), "--bucket-caps-mb: expected MiB in (0, ");
  expect_one_line_error(run_cli(dir, "replay " + measured + " --bucket-caps-mb 1,x"), "--bucket-caps-mb");
}

TEST(CliAdvise, PrintsThreeAnswersAndWritesJson) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const Outcome outcome = run_cli(dir, "advise " + measured + " --runs 11 --bucket-caps 1 --json " + dir / "advice.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("timeout=timedelta(seconds="), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("assumed"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("per-bucket list of caps (second answer"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("stall model: observed"), std::string::npos) << outcome.out;
  const auto json = nlohmann::json::parse(slurp(dir / "advice.json"));
  EXPECT_EQ(json["bucket"]["candidates"].size(), 1u);
  // Lists [S]*k + [1] for S = 0.25, 0.5 and k = 1..3; all give the 1 MiB cap's layout here.
  EXPECT_EQ(json["bucket"]["list"]["lists"], 6);
  EXPECT_TRUE(json["bucket"]["list"]["keep"].get<bool>());
  EXPECT_EQ(json["timeout"]["stall_model"], "observed");
  EXPECT_TRUE(json["timeout"]["replay_survives"].get<bool>());
  EXPECT_EQ(json["stragglers"]["ranks"].size(), 4u);
  for (const char* answer : {"bucket", "timeout", "stragglers"}) {
    EXPECT_NE(json[answer]["model"].get<std::string>().find("calibrated from the trace"), std::string::npos) << answer;
  }
}

// --stall-dist: the timeout from the given stalls, said in the text and the JSON.
TEST(CliAdvise, RepeatsAdviseEveryRunAndShowTheAnswersSideBySide) {
  test_support::TempDir dir;
  testing::SyntheticRun skewed, even, smaller;
  skewed.rank_skew = 0.3;  // ranks 2 and 3 compute 1.6x and 1.9x as long as rank 0: stragglers
  even.rank_skew = 0;
  smaller.world_size = 2;
  trace::write_trace(dir / "skewed", testing::make_synthetic_trace(skewed));
  trace::write_trace(dir / "even", testing::make_synthetic_trace(even));
  trace::write_trace(dir / "smaller", testing::make_synthetic_trace(smaller));
  const std::string base = "advise " + dir / "skewed" + " --runs 11 --bucket-caps 1 ";
  const Outcome outcome = run_cli(dir, base + "--repeats " + dir / "even" + " --json " + dir / "advice.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("across 2 runs of this configuration"), std::string::npos) << outcome.out;
  const auto json = nlohmann::json::parse(slurp(dir / "advice.json"));
  const auto& across = json["across_runs"];
  EXPECT_EQ(across["traces"], nlohmann::json({dir / "skewed", dir / "even"}));
  // The skewed run names ranks 2 and 3 (rank 2 costs nothing while rank 3 is slower, but alone it
  // costs 0.3 compute times more than the typical rank 1: Note [stragglers that mask each other]),
  // the even one nobody, and each run's own answers are its own.
  EXPECT_EQ(across["stragglers"][0], nlohmann::json({2, 3}));
  EXPECT_EQ(across["stragglers"][1], nlohmann::json::array());
  EXPECT_EQ(across["straggler_runs"][3], 1);
  EXPECT_EQ(across["timeout_s"][0], json["timeout"]["timeout_s"]);
  EXPECT_DOUBLE_EQ(across["safe_timeout_s"].get<double>(),
                   std::max(across["timeout_s"][0].get<double>(), across["timeout_s"][1].get<double>()));
  // The bucket gain compares two measured runs: its interval carries the drift between these two.
  EXPECT_NE(outcome.out.find("drift between 2 runs of this configuration"), std::string::npos) << outcome.out;
  EXPECT_EQ(json["bucket"]["drift"]["runs"], 2);
  EXPECT_LT(json["bucket"]["drift"]["ratio_low"].get<double>(), 1);

  const Outcome other = run_cli(dir, base + "--repeats " + dir / "smaller");
  EXPECT_EQ(other.status, 2);
  EXPECT_EQ(other.err, "ddp-sim: --repeats " + dir / "smaller" +
                           ": expected a run of the advised trace's configuration, got world_size 2, the advised "
                           "trace's 4\n");
  const Outcome itself = run_cli(dir, base + "--repeats " + dir / "skewed");
  EXPECT_EQ(itself.status, 2);
  EXPECT_NE(itself.err.find("expected another run, got the advised trace or a repeat given twice"), std::string::npos)
      << itself.err;
}

// --pool: the answers are of the trace and its --repeats as one run. Each synthetic run repeats
// one iteration, so the pooled run's median iteration is the middle run's, not the advised
// trace's; each run's own answers still stand side by side.
TEST(CliAdvise, PoolAdvisesTheTraceAndItsRepeatsAsOneRun) {
  test_support::TempDir dir;
  // Two ranks: pooling does not depend on the world size, and each advise replays every rank
  // alone for the straggler answer (nine advises here, slow under the sanitizers).
  testing::SyntheticRun run, slower, slowest;  // the machine slowed down after the advised run
  run.world_size = slower.world_size = slowest.world_size = 2;
  // No finalize tail: a pool fits one copy cost over its runs' tails, a run alone its own, and
  // their replays would differ by that (Note [reducer finalize]), not by the pooling.
  run.backward_tail_s = slower.backward_tail_s = slowest.backward_tail_s = 0;
  const std::string measured = dir / "measured";
  trace::write_trace(measured, testing::make_synthetic_trace(run));
  slower.forward_s = 0.030;
  slowest.forward_s = 0.040;
  trace::write_trace(dir / "slower", testing::make_synthetic_trace(slower));
  trace::write_trace(dir / "slowest", testing::make_synthetic_trace(slowest));
  const auto advised = [&](const std::string& trace, const std::string& flags) {
    const Outcome outcome =
        run_cli(dir, "advise " + trace + " --runs 11 --bucket-caps 1 " + flags + " --json " + dir / "a.json");
    EXPECT_EQ(outcome.status, 0) << outcome.err;
    return std::make_pair(outcome.out, nlohmann::json::parse(slurp(dir / "a.json")));
  };
  const auto own_median = [](const nlohmann::json& json) {
    return json["bucket"]["own"]["median_iteration_s"].get<double>();
  };
  const double alone = own_median(advised(measured, "").second);
  const double middle = own_median(advised(dir / "slower", "").second);
  ASSERT_GT(middle, 1.05 * alone);
  const std::string repeats = "--repeats " + dir / "slower" + " " + dir / "slowest";
  const auto [text, pooled] = advised(measured, repeats + " --pool");
  EXPECT_NEAR(own_median(pooled), middle, 1e-6 * middle);
  EXPECT_EQ(pooled["pooled"]["runs"], 3);
  EXPECT_EQ(pooled["across_runs"]["traces"], nlohmann::json({measured, dir / "slower", dir / "slowest"}));
  EXPECT_NE(text.find("pooled: 3 runs (the trace and its --repeats)"), std::string::npos) << text;
  const auto [plain_text, plain] = advised(measured, repeats);
  EXPECT_NEAR(own_median(plain), alone, 1e-9 * alone);
  EXPECT_FALSE(plain.contains("pooled"));
  EXPECT_EQ(plain_text.find("pooled:"), std::string::npos);

  expect_one_line_error(run_cli(dir, "advise " + measured + " --pool --json " + dir / "bad.json"), "--pool");
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.json"));
}

TEST(CliAdvise, GivenStallModelIsUsedAndNamed) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  const Outcome outcome = run_cli(dir, "advise " + measured + " --runs 11 --bucket-caps 1 --iterations-per-day 100000 "
                                       "--stall-dist 1=exp:20 --json " + dir / "advice.json");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("stall model: given (1=exp:20)"), std::string::npos) << outcome.out;
  const auto json = nlohmann::json::parse(slurp(dir / "advice.json"));
  EXPECT_EQ(json["timeout"]["stall_model"], "given");
  EXPECT_EQ(json["timeout"]["stall_dist"], nlohmann::json::array({"1=exp:20"}));
  // ε is split evenly over the kinds with a fitted tail (Note [timeout over every collective]).
  int fitted = 0;
  for (const auto& kind : json["timeout"]["kinds"]) fitted += kind["fitted"].get<bool>() ? 1 : 0;
  ASSERT_GE(fitted, 1);
  const double p = -std::expm1(std::log1p(-0.01 / fitted) / 100000);
  EXPECT_NEAR(json["timeout"]["timeout_s"].get<double>(), json["timeout"]["wait_p50_s"].get<double>() + 0.020 * std::log(1 / p), 1e-9);
}

TEST(CliAdvise, BadFlagsAreOneLineExit2) {
  test_support::TempDir dir;
  const std::string measured = write_measured(dir);
  expect_one_line_error(run_cli(dir, "advise " + measured + " --runs 5"), "--runs: expected an integer in [11, ");
  expect_one_line_error(run_cli(dir, "advise " + measured + " --epsilon 0"), "--epsilon: expected a probability");
  expect_one_line_error(run_cli(dir, "advise " + measured + " --epsilon 1.5"), "--epsilon: expected a probability");
  expect_one_line_error(run_cli(dir, "advise " + measured + " --iterations-per-day -3"), "--iterations-per-day: expected");
  expect_one_line_error(run_cli(dir, "advise " + measured + " --bucket-caps 1,0"), "--bucket-caps: expected MiB in (0, ");
  expect_one_line_error(run_cli(dir, "advise " + measured + " --json " + dir / "no/such/dir.json"), "--json");
  expect_one_line_error(run_cli(dir, "advise " + dir / "nowhere"), "nowhere");
  expect_one_line_error(run_cli(dir, "advise " + measured + " --stall-dist 1=exp:0"),
                        "--stall-dist 1=exp:0: expected exp:MEAN with MEAN > 0 milliseconds");
  expect_one_line_error(run_cli(dir, "advise " + measured + " --stall-dist 1=gamma:2"), "--stall-dist 1=gamma:2: expected RANK|all=");
  expect_one_line_error(run_cli(dir, "advise " + measured + " --stall-dist 9=exp:20"),
                        "--stall-dist 9=exp:20: expected a rank below the trace's world size 4");
  expect_one_line_error(run_cli(dir, "advise " + measured + " --stall-dist all=exp:20 --stall-dist 1=exp:5"),
                        "--stall-dist 1=exp:5: expected one distribution per rank, got two for rank 1");
}


}  // namespace
}  // namespace ddpsim::sim
