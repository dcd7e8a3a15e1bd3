// The run-to-run spread of a configuration's measured medians and the intervals it widens,
// against closed-form quantiles.
#include <gtest/gtest.h>

#include <stdexcept>

#include "ddpsim/sim/run_to_run.hpp"

namespace ddpsim::sim {
namespace {

// Medians 1, 2 and 4 s: the six ratios of two runs, sorted, are 1/4, 1/2, 1/2, 2, 2, 4. Linear
// interpolation puts the 5 % quantile at position 0.25 (1/4 + 0.25 · 1/4 = 0.3125) and the 95 %
// one at position 4.75 (2 + 0.75 · 2 = 3.5).
TEST(RunToRunSpread, IsTheCentralQuantilesOfTheRatiosOfEveryTwoRuns) {
  const RunToRunSpread spread = run_to_run_spread({1.0, 2.0, 4.0});
  EXPECT_EQ(spread.runs, 3);
  EXPECT_DOUBLE_EQ(spread.level, 0.9);
  EXPECT_NEAR(spread.ratio_low, 0.3125, 1e-12);
  EXPECT_NEAR(spread.ratio_high, 3.5, 1e-12);
  // Two equal runs: no spread.
  const RunToRunSpread still = run_to_run_spread({0.05, 0.05});
  EXPECT_DOUBLE_EQ(still.ratio_low, 1.0);
  EXPECT_DOUBLE_EQ(still.ratio_high, 1.0);
}

TEST(RunToRunSpread, WidensTheBootstrapIntervalOrThePredictionByTheRatios) {
  const RunToRunSpread spread = run_to_run_spread({1.0, 2.0, 4.0});
  MedianInterval bootstrap;
  bootstrap.replicates = 20;
  bootstrap.low_s = 0.1;
  bootstrap.high_s = 0.2;
  const MedianInterval wide = widened(bootstrap, spread);
  EXPECT_NEAR(wide.low_s, 0.03125, 1e-12);
  EXPECT_NEAR(wide.high_s, 0.7, 1e-12);
  EXPECT_EQ(wide.replicates, 20);
  const MedianInterval around = widened(1.0, spread);
  EXPECT_NEAR(around.low_s, 0.3125, 1e-12);
  EXPECT_NEAR(around.high_s, 3.5, 1e-12);
  const std::string text = run_to_run_interval_to_text(wide, spread);
  EXPECT_NE(text.find("90 % interval with the run-to-run spread of 3 runs of the baseline (ratios 0.3125-3.5): "
                      "[31.25, 700] ms"),
            std::string::npos)
      << text;
}

TEST(RunToRunSpread, NeedsTwoRunsWithPositiveMedians) {
  EXPECT_THROW(run_to_run_spread({1.0}), std::invalid_argument);
  EXPECT_THROW(run_to_run_spread({1.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(run_to_run_spread({1.0, -2.0, 3.0}), std::invalid_argument);
}

}  // namespace
}  // namespace ddpsim::sim
