// The skew syntax shared by ddp-train and ddp-sim: parsing, one-line errors, the metadata round
// trip, and the delay sampler (pure, and drawing from the distribution it names).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "ddpsim/trace/skew.hpp"

namespace ddpsim::trace {
namespace {

std::string error_of(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const SkewError& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(SkewSpec, ParsesSlowdown) {
  const Slowdown s = parse_slowdown("3=1.75");
  EXPECT_EQ(s.rank, 3);
  EXPECT_DOUBLE_EQ(s.factor, 1.75);
  EXPECT_DOUBLE_EQ(parse_slowdown("0=1").factor, 1.0);
}

TEST(SkewSpec, ParsesDelayWithAndWithoutIteration) {
  const FixedDelay once = parse_delay("1=10000@3");
  EXPECT_EQ(once.rank, 1);
  EXPECT_DOUBLE_EQ(once.ms, 10000.0);
  EXPECT_EQ(once.iteration, 3);
  const FixedDelay always = parse_delay("all=2.5");
  EXPECT_EQ(always.rank, kAllRanks);
  EXPECT_DOUBLE_EQ(always.ms, 2.5);
  EXPECT_EQ(always.iteration, -1);
}

TEST(SkewSpec, ParsesDistributions) {
  const auto lognormal = parse_delay_distribution("all=lognormal:1.5,0.25");
  EXPECT_EQ(lognormal.rank, kAllRanks);
  EXPECT_EQ(lognormal.kind, DelayDistribution::Kind::LogNormal);
  EXPECT_DOUBLE_EQ(lognormal.a, 1.5);
  EXPECT_DOUBLE_EQ(lognormal.b, 0.25);
  const auto exponential = parse_delay_distribution("2=exp:20");
  EXPECT_EQ(exponential.rank, 2);
  EXPECT_EQ(exponential.kind, DelayDistribution::Kind::Exponential);
  EXPECT_DOUBLE_EQ(exponential.mean_ms(), 20.0);
  const auto uniform = parse_delay_distribution("0=uniform:5,15");
  EXPECT_EQ(uniform.kind, DelayDistribution::Kind::Uniform);
  EXPECT_DOUBLE_EQ(uniform.mean_ms(), 10.0);
}

TEST(SkewSpec, BadValuesGiveOneLineErrorsNamingTheFlag) {
  EXPECT_EQ(error_of([] { parse_slowdown("1=0.5"); }),
            "--slowdown 1=0.5: expected RANK=F with F >= 1 (e.g. 1=1.5)");
  for (const char* bad : {"1", "=2", "x=2", "-1=2", "1=", "1=2x", "1=nan", "all=2"}) {
    EXPECT_NE(error_of([bad] { parse_slowdown(bad); }).find(std::string("--slowdown ") + bad + ":"),
              std::string::npos)
        << bad;
  }
  for (const char* bad : {"1=-5", "1=5@", "1=5@-1", "1=5@x", "one=5", "1=5ms"}) {
    const std::string message = error_of([bad] { parse_delay(bad); });
    EXPECT_EQ(message.rfind(std::string("--delay ") + bad + ": expected RANK=MS", 0), 0u)
        << message;
  }
  EXPECT_EQ(error_of([] { parse_delay_distribution("1=exp:0"); }),
            "--delay-dist 1=exp:0: expected exp:MEAN with MEAN > 0 milliseconds");
  EXPECT_EQ(error_of([] { parse_delay_distribution("1=uniform:5,2"); }),
            "--delay-dist 1=uniform:5,2: expected uniform:A,B with 0 <= A <= B milliseconds");
  EXPECT_EQ(error_of([] { parse_delay_distribution("1=lognormal:1,-1"); }),
            "--delay-dist 1=lognormal:1,-1: expected lognormal:MU,SIGMA with SIGMA >= 0");
  for (const char* bad : {"1=gamma:2", "1=exp", "exp:2", "1=exp:2,3", "1=uniform:a,b"}) {
    const std::string message = error_of([bad] { parse_delay_distribution(bad); });
    EXPECT_EQ(message.rfind(std::string("--delay-dist ") + bad + ": expected", 0), 0u)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
}

// Found by fuzz_skew: a huge stall overflowed llround into a negative sleep, and a line break
// typed into a flag made its error two lines.
TEST(SkewSpec, HugeStallsAreRefusedOrCappedAndErrorsStayOneLine) {
  EXPECT_NE(error_of([] { parse_delay("1=1e308"); }).find("0 <= MS <= 1e12"), std::string::npos);
  EXPECT_EQ(parse_delay("1=1e12").ms, 1e12);
  SkewSpec spec;
  spec.delays = {parse_delay("1=1e12"), parse_delay("all=1e12")};  // summed: capped, not wrapped
  EXPECT_EQ(spec.fixed_delay_ns(1, 0), 1000000000000000000LL);
  spec.distributions = {parse_delay_distribution("1=lognormal:700,1")};  // e^700 ms
  EXPECT_GT(spec.random_delay_ns(1, 3), 0);
  EXPECT_EQ(error_of([] { parse_slowdown("1\n=2"); }).find('\n'), std::string::npos);
  EXPECT_EQ(error_of([] { parse_delay("1=\n5"); }), error_of([] { parse_delay("1=?5"); }));
}

TEST(SkewSpec, ChecksRanksAgainstTheWorldSize) {
  SkewSpec spec;
  spec.delays.push_back(parse_delay("all=5"));
  spec.slowdowns.push_back(parse_slowdown("1=2"));
  EXPECT_NO_THROW(spec.check_ranks(2));
  EXPECT_EQ(error_of([&] { spec.check_ranks(1); }),
            "--slowdown 1=2: rank 1 is not in a job of 1 ranks");
}

TEST(SkewSpec, FixedDelaysMatchRankAndIteration) {
  SkewSpec spec;
  spec.delays = {parse_delay("1=10000@3"), parse_delay("all=2"), parse_delay("0=0.5")};
  EXPECT_EQ(spec.fixed_delay_ns(1, 3), 10'002'000'000);
  EXPECT_EQ(spec.fixed_delay_ns(1, 4), 2'000'000);
  EXPECT_EQ(spec.fixed_delay_ns(0, 3), 2'500'000);
  EXPECT_EQ(spec.random_delay_ns(0, 3), 0);
  spec.slowdowns = {parse_slowdown("1=1.5")};
  EXPECT_DOUBLE_EQ(spec.slowdown_factor(1), 1.5);
  EXPECT_DOUBLE_EQ(spec.slowdown_factor(0), 1.0);
}

TEST(SkewSpec, MetadataRoundTrips) {
  SkewSpec spec;
  spec.slowdowns = {parse_slowdown("1=1.5"), parse_slowdown("2=3")};
  spec.delays = {parse_delay("1=10000@3")};
  spec.distributions = {parse_delay_distribution("all=lognormal:1,0.5"),
                        parse_delay_distribution("0=uniform:0.1,0.3")};
  spec.seed = 18446744073709551615ULL;
  const auto meta = spec.to_meta();
  EXPECT_EQ(meta.at("slowdown"), "1=1.5;2=3");
  EXPECT_EQ(meta.at("delay"), "1=10000@3");
  EXPECT_EQ(meta.at("delay_dist"), "all=lognormal:1,0.5;0=uniform:0.1,0.3");
  EXPECT_EQ(meta.at("seed"), "18446744073709551615");
  const SkewSpec back = skew_from_meta(meta);
  EXPECT_EQ(back.to_meta(), meta);
  EXPECT_EQ(back.seed, spec.seed);
  for (int rank = 0; rank < 3; ++rank) {
    for (int it = 0; it < 5; ++it) EXPECT_EQ(back.delay_ns(rank, it), spec.delay_ns(rank, it));
  }
  EXPECT_TRUE(SkewSpec{}.to_meta().empty());
  EXPECT_TRUE(skew_from_meta({}).empty());
  EXPECT_THROW(skew_from_meta({{"delay", "1=x"}}), SkewError);
  EXPECT_THROW(skew_from_meta({{"seed", "-3"}}), SkewError);
}

TEST(SkewSpec, SamplerIsAPureFunctionOfSeedRankIteration) {
  const auto d = parse_delay_distribution("all=exp:10");
  // Same arguments, any call order: same value.
  const double first = sample_delay_ms(d, 42, 1, 7);
  for (int i = 0; i < 100; ++i) sample_delay_ms(d, 42, i % 3, i);
  EXPECT_EQ(sample_delay_ms(d, 42, 1, 7), first);
  // Every argument matters.
  std::set<double> values = {first, sample_delay_ms(d, 43, 1, 7), sample_delay_ms(d, 42, 0, 7),
                             sample_delay_ms(d, 42, 1, 8), sample_delay_ms(d, 42, 1, 7, 1)};
  EXPECT_EQ(values.size(), 5u);
  // The spec's delay is that same draw (stream 0 for its first distribution), in nanoseconds.
  SkewSpec spec;
  spec.distributions = {d};
  spec.seed = 42;
  EXPECT_EQ(spec.random_delay_ns(1, 7), std::llround(first * 1e6));
}

// Means over many iterations, within a few standard errors.
void expect_mean(const std::string& text, double expected_mean, double expected_sd) {
  const auto d = parse_delay_distribution(text);
  EXPECT_NEAR(d.mean_ms(), expected_mean, 1e-9 * expected_mean);
  constexpr int kDraws = 20000;
  double sum = 0, min = 1e300, max = -1e300;
  for (int it = 0; it < kDraws; ++it) {
    const double x = sample_delay_ms(d, 7, it % 4, it / 4);
    sum += x;
    min = std::min(min, x);
    max = std::max(max, x);
  }
  const double mean = sum / kDraws;
  EXPECT_NEAR(mean, expected_mean, 5 * expected_sd / std::sqrt(kDraws)) << text;
  EXPECT_GE(min, 0.0) << text;
  EXPECT_GT(max, expected_mean) << text;
}

TEST(SkewSpec, DistributionMeansMatch) {
  expect_mean("all=exp:20", 20.0, 20.0);
  expect_mean("all=uniform:5,15", 10.0, 10.0 / std::sqrt(12.0));
  const double mu = 1.0, sigma = 0.5;
  const double mean = std::exp(mu + sigma * sigma / 2);
  const double sd = mean * std::sqrt(std::exp(sigma * sigma) - 1);
  expect_mean("all=lognormal:1,0.5", mean, sd);
}

TEST(SkewSpec, UniformStaysInItsRange) {
  const auto d = parse_delay_distribution("0=uniform:5,6");
  for (int it = 0; it < 1000; ++it) {
    const double x = sample_delay_ms(d, 1, 0, it);
    EXPECT_GE(x, 5.0);
    EXPECT_LE(x, 6.0);
  }
}

}  // namespace
}  // namespace ddpsim::trace
