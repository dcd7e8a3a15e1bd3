// ddp-train's flag parsing and failure classification (no processes, no LibTorch).
#include <gtest/gtest.h>

#include <vector>

#include "ddpsim/runtime/device_selection.hpp"
#include "ddpsim/runtime/failure_kind.hpp"
#include "ddpsim/runtime/train_options.hpp"

namespace ddpsim::runtime {
namespace {

TrainOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "ddp-train");
  int exit_code = -1;
  auto options = parse_train_options(static_cast<int>(args.size()), args.data(), exit_code);
  if (!options) throw std::runtime_error("help requested");
  return *options;
}

TEST(TrainOptions, DefaultsAreThoseOfPyTorchDdp) {
  const TrainOptions o = parse({});
  EXPECT_EQ(o.bucket_cap_bytes(), 25LL * 1024 * 1024);
  EXPECT_EQ(o.first_bucket_cap_bytes(), 1024LL * 1024);
  EXPECT_EQ(o.backend, "gloo");
  EXPECT_TRUE(o.trace);
  EXPECT_EQ(o.threads, 1);
}

TEST(TrainOptions, ReadsEveryFlagOfTheSharedInterface) {
  const TrainOptions o =
      parse({"--model", "transformer", "--iterations", "7", "--batch-size", "3",
             "--bucket-cap-mb", "0.5", "--first-bucket-cap-mb", "2", "--trace-dir", "/x",
             "--no-trace", "--threads", "2", "--seed", "9", "--optimizer", "adam", "--lr",
             "0.001", "--quiet", "--timeout", "5", "--backend", "nccl", "--init",
             "file:///tmp/f", "--d-model", "64", "--heads", "8"});
  EXPECT_EQ(o.model, "transformer");
  EXPECT_EQ(o.iterations, 7);
  EXPECT_EQ(o.batch_size, 3);
  EXPECT_EQ(o.bucket_cap_bytes(), 512 * 1024);
  EXPECT_EQ(o.first_bucket_cap_bytes(), 2 * 1024 * 1024);
  EXPECT_EQ(o.trace_dir, "/x");
  EXPECT_FALSE(o.trace);
  EXPECT_EQ(o.threads, 2);
  EXPECT_EQ(o.seed, 9u);
  EXPECT_EQ(o.optimizer, "adam");
  EXPECT_DOUBLE_EQ(o.lr, 0.001);
  EXPECT_TRUE(o.quiet);
  EXPECT_DOUBLE_EQ(o.timeout_s, 5.0);
  EXPECT_EQ(o.backend, "nccl");
  EXPECT_EQ(o.init_method, "file:///tmp/f");
  EXPECT_EQ(o.workload_settings().at("d_model"), "64");
}

TEST(TrainOptions, RejectsBadValuesWithTheFlagName) {
  const std::vector<std::vector<const char*>> bad = {
      {"--model", "vgg"},          {"--optimizer", "lamb"},   {"--iterations", "0"},
      {"--batch-size", "-1"},      {"--bucket-cap-mb", "0"},  {"--lr", "-0.1"},
      {"--backend", "mpi"},        {"--d-model", "10", "--heads", "3"},
      {"--no-such-flag"},          {"--iterations", "many"}};
  for (const auto& args : bad) {
    try {
      parse(args);
      ADD_FAILURE() << "accepted " << args.front();
    } catch (const UsageError& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_NE(message.find(std::string(args.front()).substr(2)), std::string::npos)
          << "'" << message << "' does not name " << args.front();
    }
  }
}

TEST(TrainOptions, ExpandsRankPlaceholders) {
  EXPECT_EQ(expand_rank_pattern("/d/g-{rank}.txt", 3), "/d/g-3.txt");
  EXPECT_EQ(expand_rank_pattern("{rank}{rank}", 12), "1212");
  EXPECT_EQ(expand_rank_pattern("plain", 1), "plain");
}

TEST(FailureKind, ClassifiesBackendMessagesSeenWithGloo) {
  EXPECT_EQ(classify_failure("[/usr/include/gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:4242"),
            FailureKind::PeerClosed);
  EXPECT_EQ(classify_failure("[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 5000ms for recv operation to complete"),
            FailureKind::Timeout);
  EXPECT_EQ(classify_failure("Socket Timeout"), FailureKind::Timeout);
  EXPECT_EQ(classify_failure("Connection reset by peer"), FailureKind::PeerClosed);
  EXPECT_EQ(classify_failure("Expected all parameters to have the same shape"), FailureKind::Error);
  EXPECT_STREQ(to_string(FailureKind::PeerClosed), "peer_closed");
  EXPECT_STREQ(to_string(FailureKind::Timeout), "timeout");
}

TEST(FailureKind, FirstLineDropsBacktraces) {
  EXPECT_EQ(first_line("  boom \nException raised from x at y\nframe #0"), "boom");
  EXPECT_EQ(first_line("single"), "single");
}

// A node of 8 GPUs under ddp-launch --nproc-per-node 8: LOCAL_RANK r drives cuda:r.
TEST(DeviceSelection, LocalRankIsTheDeviceIndexOnAnEightGpuNode) {
  for (int r = 0; r < 8; ++r) EXPECT_EQ(cuda_device_for_rank(r, 8), r);
}

std::string selection_error(int local_rank, int device_count) {
  try {
    cuda_device_for_rank(local_rank, device_count);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(DeviceSelection, TooFewDevicesOrNoneIsAOneLineUsageError) {
  EXPECT_EQ(selection_error(0, 0),
            "--backend nccl: no CUDA device is visible to this process; use --backend gloo");
  EXPECT_EQ(selection_error(8, 8),
            "--backend nccl: LOCAL_RANK 8 but 8 CUDA device(s) visible; expected one process per "
            "GPU (--nproc-per-node <= 8)");
  EXPECT_NE(selection_error(-1, 8), "");
}

}  // namespace
}  // namespace ddpsim::runtime
