// configuration_difference: which settings make two runs runs of one configuration, and the
// one-line text that names the first that differs.
#include <gtest/gtest.h>

#include "ddpsim/trace/configuration.hpp"
#include "test_support.hpp"

namespace ddpsim::trace {
namespace {

using testing::example_meta;

const std::string kWhose = "the replayed trace's";

TEST(Configuration, RunsOfOneConfigurationDifferOnlyInWhenWhereAndByWhat) {
  const RunMeta reference = example_meta(0, 2);
  RunMeta run = reference;
  run.start_time_utc = "2030-01-01T00:00:00Z";
  run.host = "elsewhere";
  run.rank = 1;
  run.local_rank = 1;
  run.tool.git_sha = "0123456789ab";
  EXPECT_EQ(configuration_difference(run, reference, kWhose), "");
  // Random stalls from another seed: another sample of the same configuration.
  RunMeta stalled = reference;
  stalled.skew = {{"delay_dist", "1=exp:20"}, {"seed", "1"}};
  run = stalled;
  run.skew["seed"] = "2";
  EXPECT_EQ(configuration_difference(run, stalled, kWhose), "");
}

TEST(Configuration, NamesTheFirstSettingThatDiffers) {
  const RunMeta reference = example_meta(0, 2);
  RunMeta run = reference;
  run.bucket_cap_bytes = 1048576;
  EXPECT_EQ(configuration_difference(run, reference, kWhose),
            "bucket_cap_bytes 1048576, the replayed trace's " + std::to_string(reference.bucket_cap_bytes));
  run.world_size = 3;  // before the caps in the order of the checks
  EXPECT_EQ(configuration_difference(run, reference, kWhose), "world_size 3, the replayed trace's 2");
}

TEST(Configuration, NamesTheKeyOfAWorkloadSkewOrDdpSettingThatDiffersOrIsMissing) {
  RunMeta reference = example_meta(0, 2);
  reference.workload["batch_size"] = "64";
  reference.settings["sync_every"] = "1";
  RunMeta run = reference;
  run.workload["batch_size"] = "8";
  EXPECT_EQ(configuration_difference(run, reference, kWhose), "workload batch_size 8, the replayed trace's 64");
  run = reference;
  run.skew["slowdown"] = "1=2";
  EXPECT_EQ(configuration_difference(run, reference, kWhose), "skew slowdown 1=2, the replayed trace's (none)");
  run = reference;
  run.settings.erase("sync_every");
  EXPECT_EQ(configuration_difference(run, reference, kWhose), "setting sync_every (none), the replayed trace's 1");
  run = reference;
  run.timeout_s = 60;
  EXPECT_EQ(configuration_difference(run, reference, kWhose), "timeout_s 60, the replayed trace's 1800");
}

}  // namespace
}  // namespace ddpsim::trace
