// ddp-train's flag parsing and failure classification (no processes, no LibTorch).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ddpsim/runtime/device_selection.hpp"
#include "ddpsim/runtime/failure_kind.hpp"
#include "ddpsim/runtime/lr_schedule.hpp"
#include "ddpsim/runtime/train_options.hpp"
#include "train_numeric_flags.hpp"

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
      {"--no-such-flag"},          {"--iterations", "many"},  {"--amp", "fp8"},
      {"--loss-scale-init", "0"},  {"--lr-schedule", "linear"}, {"--warmup-steps", "-1"},
      {"--eval-every", "-2"},      {"--inject-inf-at", "3"},  {"--clip-grad-norm", "-1"},
      {"--eval-every", "1", "--model", "transformer"}, {"--device", "gpu"},
      {"--device", "cpu", "--backend", "nccl"}};
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

// Every numeric flag with every bad value (train_numeric_flags.hpp; tests/hardening sends each
// flag once through the binary): refused while reading the options, in one line naming the flag.
TEST(TrainOptions, EveryNumericFlagRefusesEveryBadValueInOneLine) {
  int rows = 0;
  for (const auto& flag : testing::train_numeric_flags()) {
    for (const auto& value : testing::bad_values(flag)) {
      std::vector<const char*> args = {"--model", flag.transformer ? "transformer" : "mlp", flag.flag.c_str(),
                                       value.c_str()};
      try {
        parse(args);
        ADD_FAILURE() << "accepted " << flag.flag << " '" << value << "'";
      } catch (const UsageError& error) {
        const std::string message = error.what();
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        EXPECT_NE(message.find(flag.flag), std::string::npos) << "'" << message << "' does not name " << flag.flag;
      }
      ++rows;
    }
  }
  EXPECT_GT(rows, 240);  // 29 flags, most with all 9 bad values
}

// --device auto follows the backend as a Python DDP script does (NCCL: CUDA, Gloo: CPU); Gloo
// may be asked for CUDA tensors.
TEST(TrainOptions, DeviceAutoFollowsTheBackendAndGlooMayUseCuda) {
  EXPECT_FALSE(parse({}).on_cuda());
  EXPECT_TRUE(parse({"--backend", "nccl"}).on_cuda());
  EXPECT_TRUE(parse({"--backend", "gloo", "--device", "cuda"}).on_cuda());
  EXPECT_TRUE(parse({"--backend", "nccl", "--device", "cuda"}).on_cuda());
  EXPECT_FALSE(parse({"--device", "cpu"}).on_cuda());
}

// --bucket-caps-mb: DDP's bucket_cap_mb_list. The list in bytes for the Reducer and the trace;
// the single caps then hold its largest value, as Python DDP sets them.
TEST(TrainOptions, BucketCapListReplacesTheTwoCaps) {
  const TrainOptions o = parse({"--bucket-caps-mb", "0.5,4,2"});
  EXPECT_EQ(o.bucket_cap_bytes_list(), (std::vector<std::int64_t>{512 * 1024, 4LL << 20, 2LL << 20}));
  EXPECT_EQ(o.bucket_cap_bytes(), 4LL << 20);
  EXPECT_EQ(o.first_bucket_cap_bytes(), 4LL << 20);
  EXPECT_TRUE(parse({}).bucket_cap_bytes_list().empty());
  EXPECT_EQ(parse({"--bucket-caps-mb", "3"}).bucket_cap_bytes_list(), (std::vector<std::int64_t>{3LL << 20}));
}

TEST(TrainOptions, BucketCapListRefusesBadListsAndTheSingleCapsInOneLine) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> bad = {
      {{"--bucket-caps-mb", "1,,25"}, "--bucket-caps-mb 1,,25: expected a comma-separated list of positive MiB up to 1048576 (e.g. 1,4,25)"},
      {{"--bucket-caps-mb", "1,0"}, "--bucket-caps-mb 1,0: expected a comma-separated list of positive MiB up to 1048576 (e.g. 1,4,25)"},
      {{"--bucket-caps-mb", "1,x"}, "--bucket-caps-mb 1,x: expected a comma-separated list of positive MiB up to 1048576 (e.g. 1,4,25)"},
      {{"--bucket-caps-mb", "1,"}, "--bucket-caps-mb 1,: expected a comma-separated list of positive MiB up to 1048576 (e.g. 1,4,25)"},
      {{"--bucket-caps-mb", "nan"}, "--bucket-caps-mb nan: expected a comma-separated list of positive MiB up to 1048576 (e.g. 1,4,25)"},
      {{"--bucket-caps-mb", "2e6"}, "--bucket-caps-mb 2e6: expected a comma-separated list of positive MiB up to 1048576 (e.g. 1,4,25)"},
      {{"--bucket-caps-mb", "1,4", "--bucket-cap-mb", "25"},
       "--bucket-caps-mb: expected either the list or --bucket-cap-mb/--first-bucket-cap-mb, got both"},
      {{"--first-bucket-cap-mb", "1", "--bucket-caps-mb", "1,4"},
       "--bucket-caps-mb: expected either the list or --bucket-cap-mb/--first-bucket-cap-mb, got both"}};
  for (const auto& [args, expected] : bad) {
    try {
      parse(args);
      ADD_FAILURE() << "accepted " << args[1];
    } catch (const UsageError& error) {
      EXPECT_EQ(std::string(error.what()), expected);
    }
  }
}

TEST(TrainOptions, ReadsTheLabsLoopFlags) {
  const TrainOptions o = parse({"--amp", "bf16", "--loss-scale-init", "16384", "--clip-grad-norm",
                                "1.5", "--inject-inf-at", "4", "--lr-schedule", "cosine",
                                "--warmup-steps", "3", "--eval-every", "10", "--eval-batch-size",
                                "64"});
  EXPECT_EQ(o.amp, "bf16");
  EXPECT_DOUBLE_EQ(o.loss_scale_init, 16384.0);
  EXPECT_DOUBLE_EQ(o.clip_grad_norm, 1.5);
  EXPECT_EQ(o.inject_inf_at, 4);
  EXPECT_EQ(o.lr_schedule, "cosine");
  EXPECT_EQ(o.warmup_steps, 3);
  EXPECT_EQ(o.eval_every, 10);
  EXPECT_EQ(o.eval_batch_size, 64);
  EXPECT_EQ(o.workload_settings().at("lr_schedule"), "cosine");
  // Defaults: fp32, GradScaler's init_scale, no schedule, no evaluation.
  const TrainOptions d = parse({});
  EXPECT_EQ(d.amp, "none");
  EXPECT_DOUBLE_EQ(d.loss_scale_init, 65536.0);
  EXPECT_EQ(d.eval_every, 0);
  EXPECT_EQ(d.workload_settings().count("lr_schedule"), 0u);
}

// The rate of each batch, against values worked out by hand (lr_schedule.hpp's formulas).
TEST(LrSchedule, LinearWarmupThenCosineToZero) {
  LrSchedule s = LrSchedule::from(parse({"--lr", "0.1", "--lr-schedule", "cosine",
                                         "--warmup-steps", "4", "--iterations", "14"}));
  EXPECT_DOUBLE_EQ(s.rate_at(0), 0.0);
  EXPECT_DOUBLE_EQ(s.rate_at(1), 0.025);
  EXPECT_DOUBLE_EQ(s.rate_at(3), 0.075);
  EXPECT_DOUBLE_EQ(s.rate_at(4), 0.1);               // warm-up done: the peak
  EXPECT_NEAR(s.rate_at(9), 0.05, 1e-15);            // half way through the 10 cosine steps
  EXPECT_NEAR(s.rate_at(6), 0.1 * 0.5 * (1 + std::cos(0.2 * std::acos(-1.0))), 1e-15);
  EXPECT_NEAR(s.rate_at(14), 0.0, 1e-15);            // the end
  EXPECT_NEAR(s.rate_at(20), 0.0, 1e-15);            // and stays there
}

TEST(LrSchedule, StepDecaysByGammaEveryStepSizeAfterWarmup) {
  LrSchedule s = LrSchedule::from(parse({"--lr", "0.2", "--lr-schedule", "step", "--warmup-steps",
                                         "2", "--lr-step-size", "3", "--lr-gamma", "0.5"}));
  const std::vector<double> expected = {0.0, 0.1, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.05};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    EXPECT_DOUBLE_EQ(s.rate_at(static_cast<std::int64_t>(k)), expected[k]) << "batch " << k;
  }
  // Without a schedule the rate is --lr throughout.
  LrSchedule constant = LrSchedule::from(parse({"--lr", "0.3"}));
  EXPECT_DOUBLE_EQ(constant.rate_at(0), 0.3);
  EXPECT_DOUBLE_EQ(constant.rate_at(1000), 0.3);
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
            "GPU (--nproc-per-node <= 8, or --backend gloo --device cuda to share)");
  EXPECT_NE(selection_error(-1, 8), "");
}

// Gloo with --device cuda: more ranks than GPUs share them round-robin (2 ranks on 1 GPU both
// drive cuda:0); with none visible, the error names --device.
TEST(DeviceSelection, GlooRanksShareTheGpusRoundRobin) {
  EXPECT_EQ(cuda_device_for_rank(0, 1, GpuSharing::Shared), 0);
  EXPECT_EQ(cuda_device_for_rank(1, 1, GpuSharing::Shared), 0);
  EXPECT_EQ(cuda_device_for_rank(5, 4, GpuSharing::Shared), 1);
  EXPECT_EQ(cuda_device_for_rank(3, 8, GpuSharing::Shared), 3);
  try {
    cuda_device_for_rank(0, 0, GpuSharing::Shared);
    ADD_FAILURE() << "no device accepted";
  } catch (const UsageError& error) {
    EXPECT_STREQ(error.what(),
                 "--device cuda: no CUDA device is visible to this process; use --device cpu");
  }
}

}  // namespace
}  // namespace ddpsim::runtime
