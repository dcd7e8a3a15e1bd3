// Least-squares fit and α-β calibration from all-reduce times.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/trace/collective.hpp"
#include "synthetic_trace.hpp"
#include "trace_events.hpp"

namespace ddpsim::sim {
namespace {

TEST(FitLine, RecoversAnExactLine) {
  const std::vector<double> x = {1e5, 1e6, 4e6, 8e6};
  std::vector<double> y;
  for (double s : x) y.push_back(3e-4 + 2e-9 * s);
  const LineFit fit = fit_line(x, y);
  EXPECT_NEAR(fit.intercept_s, 3e-4, 1e-12);
  EXPECT_NEAR(fit.slope_s_per_byte, 2e-9, 1e-18);
  EXPECT_NEAR(fit.r_squared, 1.0, 1e-12);
  EXPECT_NEAR(fit.relative_rms, 0.0, 1e-9);
  EXPECT_FALSE(fit.intercept_clamped);
}

TEST(FitLine, NoisyPointsGiveResiduals) {
  const std::vector<double> x = {1e6, 2e6, 3e6, 4e6};
  const std::vector<double> y = {1.1e-3, 1.9e-3, 3.2e-3, 3.9e-3};
  const LineFit fit = fit_line(x, y);
  EXPECT_GT(fit.r_squared, 0.95);
  EXPECT_LT(fit.r_squared, 1.0);
  EXPECT_GT(fit.relative_rms, 0.01);
}

TEST(FitLine, NegativeInterceptIsRefittedThroughTheOrigin) {
  const LineFit fit = fit_line({1e6, 2e6}, {0.5e-3, 2.5e-3});  // intercept would be −1.5 ms
  EXPECT_TRUE(fit.intercept_clamped);
  EXPECT_EQ(fit.intercept_s, 0.0);
  EXPECT_NEAR(fit.slope_s_per_byte, (1e6 * 0.5e-3 + 2e6 * 2.5e-3) / (1e12 + 4e12), 1e-18);
}

TEST(FitLine, OneSizeGoesThroughTheOrigin) {
  const LineFit fit = fit_line({4e6}, {2e-3});
  EXPECT_EQ(fit.intercept_s, 0.0);
  EXPECT_NEAR(fit.slope_s_per_byte, 5e-10, 1e-20);
  EXPECT_TRUE(std::isnan(fit.r_squared));
}

TEST(Calibrate, CrossRankViewRemovesWaitingForPeers) {
  testing::SyntheticRun run;
  const trace::Trace trace = testing::make_synthetic_trace(run);
  const auto samples = trace::collective_transfers(trace);
  // Iterations 1…9, four buckets each (iteration 0 is left out).
  ASSERT_EQ(samples.size(), 9u * 4u);
  for (const auto& sample : samples) {
    double expected = ring_allreduce_s(run.world_size, static_cast<double>(sample.bytes), run.alpha_s,
                                       run.beta_bytes_per_s);
    if (sample.iteration == run.straggler_iteration && sample.bucket == run.straggler_bucket) {
      expected += run.straggler_extra_s;
    }
    EXPECT_NEAR(sample.transfer_s, expected, 2e-9) << "iteration " << sample.iteration << " bucket " << sample.bucket;
  }
  // Rank 0 computes fastest and waits for the others inside its all-reduces: its own
  // begin → end is longer than the collective's time.
  double rank0_total = 0;
  std::int64_t begin = 0;
  for (const auto& event : trace.ranks[0].events) {
    if (event.iteration != 5) continue;
    if (event.type == trace::EventType::AllreduceBegin) begin = event.t_ns;
    if (event.type == trace::EventType::AllreduceEnd) rank0_total += static_cast<double>(event.t_ns - begin) * 1e-9;
  }
  double collective_total = 0;
  for (const auto& sample : samples) collective_total += sample.iteration == 5 ? sample.transfer_s : 0;
  EXPECT_GT(rank0_total, collective_total * 1.01);
}

TEST(Calibrate, RecoversAlphaAndBetaDespiteAStraggler) {
  testing::SyntheticRun run;
  run.straggler_extra_s = 0.2;  // 100× a bucket's time: the median must ignore it
  const Calibration calibration = calibrate(testing::make_synthetic_trace(run), AllreduceAlgorithm::Ring);
  EXPECT_EQ(calibration.points.size(), 4u);
  EXPECT_NEAR(calibration.alpha_s, run.alpha_s, 0.02 * run.alpha_s);
  EXPECT_NEAR(calibration.beta_bytes_per_s, run.beta_bytes_per_s, 0.02 * run.beta_bytes_per_s);
  EXPECT_GT(calibration.fit.r_squared, 0.9999);
  EXPECT_LT(calibration.fit.relative_rms, 1e-3);
}

TEST(Calibrate, EqualSizedBucketsFitBandwidthOnly) {
  // Four buckets of ~1 MB each (sizes differ by < 1 %): a free line through them is decided
  // by noise, so calibration must fall back to bandwidth only instead of failing.
  testing::SyntheticRun run;
  run.param_numel = {262144, 256, 262144, 128, 262144, 64, 262144, 32};
  const trace::Trace trace = testing::make_synthetic_trace(run);
  Calibration calibration;
  ASSERT_NO_THROW(calibration = calibrate(trace, AllreduceAlgorithm::Ring));
  EXPECT_NE(calibration.method.find("bandwidth only"), std::string::npos) << calibration.method;
  EXPECT_EQ(calibration.alpha_s, 0.0);
  EXPECT_EQ(calibration.points.size(), 4u);
  // The fitted α = 0 line reproduces the measured all-reduce time at the measured sizes.
  for (const auto& point : calibration.points) {
    const double fitted = ring_allreduce_s(run.world_size, static_cast<double>(point.bytes), calibration.alpha_s,
                                           calibration.beta_bytes_per_s);
    EXPECT_NEAR(fitted, point.median_s, 0.01 * point.median_s) << point.bytes << " bytes";
  }
  EXPECT_NE(calibration_to_text(calibration).find("bandwidth only"), std::string::npos);
  // Four sizes were measured: R² is missing because no line was fitted, not for want of sizes.
  EXPECT_EQ(calibration_to_text(calibration).find("one size"), std::string::npos) << calibration_to_text(calibration);
}

// Two ranks, iterations 0..5, four buckets per iteration (the first 1.01 MB, the others
// 1 MB, as DDP's first bucket differs a little), launched every 20 ms and run as Gloo does,
// several in flight at once on one shared link: they end at 40, 150, 160 and 170 ms. Rank 1
// launches each bucket 1 ms after rank 0.
trace::Trace overlapping_buckets_trace(
    const std::array<std::int64_t, 4>& bytes = {1010000, 1000000, 1000000, 1000000}) {
  trace::Trace trace;
  const std::int64_t ms = 1000000;
  const std::int64_t ends_ms[] = {40, 150, 160, 170};
  for (int r = 0; r < 2; ++r) {
    trace::RankTrace rank;
    rank.meta.rank = r;
    rank.meta.world_size = 2;
    for (std::int64_t it = 0; it < 6; ++it) {
      const std::int64_t t0 = it * 1000 * ms;
      trace::testing::EventLog log{rank.events, r, it};
      log.add(trace::EventType::IterationBegin, t0);
      for (int b = 0; b < 4; ++b) log.add(trace::EventType::AllreduceBegin, t0 + (20 * b + r) * ms, b, bytes[b]);
      for (int b = 0; b < 4; ++b) log.add(trace::EventType::AllreduceEnd, t0 + ends_ms[b] * ms, b, bytes[b]);
      log.add(trace::EventType::IterationEnd, t0 + 200 * ms);
    }
    trace::testing::sort_by_time(rank.events);
    trace.ranks.push_back(rank);
  }
  return trace;
}

TEST(Calibrate, OverlappingAllreducesOfAlmostOneSizeGiveTheLinkRate) {
  const trace::Trace trace = overlapping_buckets_trace();
  const auto spans = allreduce_busy_spans(trace);
  ASSERT_EQ(spans.size(), 5u);  // iterations 1..5
  for (const auto& span : spans) {
    EXPECT_EQ(span.bytes, 4010000);
    EXPECT_NEAR(span.busy_s, 0.169, 1e-9);  // from rank 1's first launch (1 ms) to 170 ms
  }
  const Calibration calibration = calibrate(trace, AllreduceAlgorithm::Ring);
  EXPECT_NE(calibration.method.find("bandwidth only"), std::string::npos) << calibration.method;
  // 4.01 MB went through in 169 ms. Timing each bucket from the previous one's end (one
  // all-reduce at a time) gives 39, 110, 10 and 10 ms: the 1 MB median, 10 ms, would make
  // the link 2.4x too fast.
  EXPECT_NEAR(calibration.beta_bytes_per_s, 4.01e6 / 0.169, 1.0);
  EXPECT_LT(calibration.fit.relative_rms, 1e-9);
}

// The same overlap with the second bucket twice as large: the sizes now span 2x, so a line is
// tried, but its per-size medians (1 MB: 10 ms, 1.01 MB: 39 ms, 2 MB: 110 ms) say how the
// buckets overlapped, not what a byte costs; the line misses them by far more than
// kMaxTrustedRelativeRms, and the rate of the busy time is used instead.
TEST(Calibrate, ALineThatMissesThePerSizeMediansFallsBackToTheBusyRate) {
  const trace::Trace trace = overlapping_buckets_trace({1010000, 2000000, 1000000, 1000000});
  const Calibration calibration = calibrate(trace, AllreduceAlgorithm::Ring);
  ASSERT_EQ(calibration.points.size(), 3u);
  EXPECT_NEAR(calibration.points[0].median_s, 0.010, 1e-9);
  EXPECT_NEAR(calibration.points[1].median_s, 0.039, 1e-9);
  EXPECT_NEAR(calibration.points[2].median_s, 0.110, 1e-9);
  const LineFit line = fit_line({1e6, 1.01e6, 2e6}, {0.010, 0.039, 0.110});
  ASSERT_GT(line.slope_s_per_byte, 0);  // a physical line: only its misfit rules it out
  ASSERT_GT(line.relative_rms, kMaxTrustedRelativeRms);
  EXPECT_NE(calibration.method.find("missed them by"), std::string::npos) << calibration.method;
  EXPECT_EQ(calibration.alpha_s, 0.0);
  EXPECT_NEAR(calibration.beta_bytes_per_s, 5.01e6 / 0.169, 1.0);
  EXPECT_LT(calibration.fit.relative_rms, 1e-9);  // every iteration's busy time, exactly
}

// A rank's all-reduce can start once every all-reduce that ended before it (in the order the
// ends were written) has ended: two ranks alike, iterations 0..2, per iteration bucket 0 runs
// 10..50 ms and bucket 1 20..30 ms (ending first); buckets 3 and 2 both end at 80 ms, 3's end
// written first.
TEST(Calibrate, AnAllreduceStartsWhenThoseThatEndedBeforeItHaveEnded) {
  const std::int64_t ms = 1000000;
  trace::Trace trace;
  for (int r = 0; r < 2; ++r) {
    trace::RankTrace rank;
    rank.meta.rank = r;
    rank.meta.world_size = 2;
    for (std::int64_t it = 0; it < 3; ++it) {
      const std::int64_t t0 = it * 1000 * ms;
      trace::testing::EventLog log{rank.events, r, it};
      log.add(trace::EventType::IterationBegin, t0);
      log.add(trace::EventType::AllreduceBegin, t0 + 10 * ms, 0, 100);
      log.add(trace::EventType::AllreduceBegin, t0 + 20 * ms, 1, 100);
      log.add(trace::EventType::AllreduceEnd, t0 + 30 * ms, 1, 100);
      log.add(trace::EventType::AllreduceEnd, t0 + 50 * ms, 0, 100);
      log.add(trace::EventType::AllreduceBegin, t0 + 60 * ms, 2, 100);
      log.add(trace::EventType::AllreduceBegin, t0 + 61 * ms, 3, 100);
      log.add(trace::EventType::AllreduceEnd, t0 + 80 * ms, 3, 100);
      log.add(trace::EventType::AllreduceEnd, t0 + 80 * ms, 2, 100);
      log.add(trace::EventType::IterationEnd, t0 + 100 * ms);
    }
    trace.ranks.push_back(rank);
  }
  const auto samples = trace::collective_transfers(trace);
  ASSERT_EQ(samples.size(), 2u * 4u);  // iteration 0 is left out
  // Bucket 0 from 30 ms (bucket 1's end), 1 from its begin, 2 from 80 ms (3's end, written
  // before 2's), 3 from its begin, as 0 had ended by then.
  const double expected_s[] = {20e-3, 10e-3, 0, 19e-3};
  for (const auto& sample : samples) {
    EXPECT_NEAR(sample.transfer_s, expected_s[sample.bucket], 1e-12) << "iteration " << sample.iteration << " bucket " << sample.bucket;
  }
}

TEST(Calibrate, WideSizeSpanKeepsTheLeastSquaresFit) {
  const Calibration calibration = calibrate(testing::make_synthetic_trace(testing::SyntheticRun{}),
                                            AllreduceAlgorithm::Ring);
  EXPECT_EQ(calibration.method, "least squares");
  EXPECT_GT(calibration.alpha_s, 0.0);
}

TEST(Calibrate, TreeShapeInvertsTheTreeFormula) {
  testing::SyntheticRun run;
  const trace::Trace trace = testing::make_synthetic_trace(run);
  const Calibration ring = calibrate(trace, AllreduceAlgorithm::Ring);
  const Calibration tree = calibrate(trace, AllreduceAlgorithm::Tree);
  // Same line, different formula: the tree's α, β reproduce the same t(S).
  for (double bytes : {1e5, 1e7}) {
    EXPECT_NEAR(tree_allreduce_s(4, bytes, tree.alpha_s, tree.beta_bytes_per_s),
                ring_allreduce_s(4, bytes, ring.alpha_s, ring.beta_bytes_per_s), 1e-9);
  }
}

TEST(Calibrate, OneRankHasNothingToFit) {
  testing::SyntheticRun run;
  run.world_size = 1;
  EXPECT_THROW(calibrate(testing::make_synthetic_trace(run), AllreduceAlgorithm::Ring), CalibrationError);
}

TEST(Calibrate, JsonCarriesTheFit) {
  testing::SyntheticRun run;
  const std::string json = calibration_to_json(calibrate(testing::make_synthetic_trace(run), AllreduceAlgorithm::Ring));
  EXPECT_NE(json.find("\"alpha_s\""), std::string::npos);
  EXPECT_NE(json.find("\"r_squared\""), std::string::npos);
  EXPECT_NE(json.find("\"points\""), std::string::npos);
}

TEST(Calibrate, WarnsWhenTooFewSizesOrTheLineMissesThePoints) {
  // The synthetic run's sizes are many and its times exact: nothing to warn about.
  Calibration good = calibrate(testing::make_synthetic_trace(testing::SyntheticRun{}),
                               AllreduceAlgorithm::Ring);
  EXPECT_TRUE(calibration_warnings(good).empty()) << calibration_to_text(good);

  // Two sizes: the line goes through both, whatever the network is.
  Calibration two = good;
  two.points.resize(2);
  const auto warnings = calibration_warnings(two);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("fitted to 2 message sizes"), std::string::npos) << warnings[0];
  EXPECT_NE(calibration_to_text(two).find("warning    fitted to 2"), std::string::npos);
  EXPECT_NE(calibration_to_json(two).find("fitted to 2 message sizes"), std::string::npos);

  // A misfit above the threshold is named with its size.
  Calibration poor = good;
  poor.fit.relative_rms = 1.8126;
  const auto misfit = calibration_warnings(poor);
  ASSERT_EQ(misfit.size(), 1u);
  EXPECT_NE(misfit[0].find("by 181 % RMS"), std::string::npos) << misfit[0];
  poor.fit.relative_rms = kMaxTrustedRelativeRms;  // at the threshold: trusted
  EXPECT_TRUE(calibration_warnings(poor).empty());
}

}  // namespace
}  // namespace ddpsim::sim
