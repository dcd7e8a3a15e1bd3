// The DDP features beyond plain data parallelism, each checked against the result it promises:
//   - checkpoints: k iterations, stop, resume, k more == 2k straight (bit for bit); a missing or
//     corrupt checkpoint is one clear line and a non-zero exit;
//   - fp16 / bf16 compression hooks: the averaged gradient within the format's precision of the
//     exact average, and half the bytes on the wire in the trace;
//   - gradient accumulation (--sync-every K): W ranks x K steps of batch b == one rank with batch
//     W*K*b; the no_sync steps are marked and all-reduce nothing;
//   - model-parallel DDP (mp-mlp: two stages per process): gradients still averaged across ranks.
// Real processes under ddp-launch, real Gloo, two ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ddpsim/trace/io.hpp"
#include "param_dump.hpp"
#include "job_helpers.hpp"
#include "launched_job.hpp"

namespace ddpsim::runtime {
namespace {

using testing::events_of;
using testing::JobResult;
using testing::launch;
using testing::TempDir;
using testing::train_command;

using testing::Dump;
using testing::max_abs_difference;
using testing::read_dump;

using testing::max_difference;
using testing::run_ok;

TEST(Checkpoint, ResumedRunEndsWithTheParametersOfAStraightRun) {
  TempDir dir;
  const std::string ckpt = dir / "ckpt";
  run_ok(dir, "straight", {"--iterations", "6", "--dump-params", dir / "straight-{rank}.txt"});
  run_ok(dir, "first", {"--iterations", "3", "--checkpoint-dir", ckpt, "--checkpoint-every", "3",
                        "--dump-params", dir / "first-{rank}.txt"});
  EXPECT_TRUE(std::filesystem::is_regular_file(ckpt + "/checkpoint.pt"));
  EXPECT_FALSE(std::filesystem::exists(ckpt + "/.checkpoint.pt.tmp"));
  run_ok(dir, "resumed", {"--iterations", "6", "--checkpoint-dir", ckpt, "--resume",
                          "--dump-params", dir / "resumed-{rank}.txt"});

  for (const std::string rank : {"0", "1"}) {
    const Dump straight = read_dump(dir / ("straight-" + rank + ".txt"));
    const Dump resumed = read_dump(dir / ("resumed-" + rank + ".txt"));
    ASSERT_EQ(straight.size(), 6u);
    EXPECT_EQ(max_difference(straight, resumed), 0.0) << "rank " << rank;
    // Not vacuous: the checkpointed state differs from the end state.
    EXPECT_GT(max_difference(straight, read_dump(dir / ("first-" + rank + ".txt"))), 1e-4);
  }
  // The resumed trace starts where the checkpoint left off.
  const trace::RankTrace resumed = testing::read_rank(dir, "resumed", 0);
  const auto done = resumed.complete_iterations();
  EXPECT_EQ(done, (std::vector<std::int64_t>{3, 4, 5}));
  // Both runs record DDP's start-up (traces/FORMAT.md): the parameter check and the broadcast
  // of rank 0's parameters, `collective` events with message start_up before the first
  // iteration_begin, in the run's first iteration.
  for (const auto& [run, first] : {std::pair<std::string, std::int64_t>{"straight", 0}, {"resumed", 3}}) {
    for (const int rank : {0, 1}) {
      const trace::RankTrace recorded = testing::read_rank(dir, run, rank);
      const auto& events = recorded.events;
      ASSERT_GE(events.size(), 3u) << run;
      std::int64_t parameter_bytes = 0;
      for (const trace::Parameter& parameter : recorded.meta.parameters) parameter_bytes += parameter.bytes();
      const std::vector<std::string> kinds = {"all_gather", "broadcast"};
      for (std::size_t i = 0; i < kinds.size(); ++i) {
        EXPECT_EQ(events[i].type, trace::EventType::Collective) << run << " rank " << rank;
        EXPECT_EQ(events[i].kind, kinds[i]) << run << " rank " << rank;
        EXPECT_EQ(events[i].message, "start_up") << run << " rank " << rank;
        EXPECT_EQ(events[i].iteration, first) << run << " rank " << rank;
        EXPECT_GE(events[i].dur_ns, 0);
      }
      EXPECT_GE(events[1].t_ns, events[0].t_ns + events[0].dur_ns);
      EXPECT_EQ(events[1].bytes, parameter_bytes) << run;  // the MLP has no buffers
      EXPECT_EQ(events[2].type, trace::EventType::IterationBegin) << run;
      EXPECT_LE(events[1].t_ns + events[1].dur_ns, events[2].t_ns) << run;
    }
  }
}

TEST(Checkpoint, MissingOrCorruptCheckpointIsOneClearLine) {
  TempDir dir;
  const std::string ckpt = dir / "ckpt";
  std::filesystem::create_directories(ckpt);
  JobResult missing = launch(
      train_command(dir, "missing", {"--iterations", "2", "--checkpoint-dir", ckpt, "--resume"}),
      dir, 2, "missing");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("ddp-train: --resume: " + ckpt +
                                "/checkpoint.pt: no checkpoint there"),
            std::string::npos)
      << missing.output;
  EXPECT_NE(missing.output.find("exited with status 2"), std::string::npos) << missing.output;

  std::ofstream(ckpt + "/checkpoint.pt") << "PK this is not a zip archive";
  JobResult corrupt = launch(
      train_command(dir, "corrupt", {"--iterations", "2", "--checkpoint-dir", ckpt, "--resume"}),
      dir, 2, "corrupt");
  EXPECT_NE(corrupt.exit_code, 0);
  EXPECT_NE(corrupt.output.find("ddp-train: --resume: " + ckpt +
                                "/checkpoint.pt: not a readable checkpoint: "),
            std::string::npos)
      << corrupt.output;
  // One line per rank, no backtrace.
  EXPECT_EQ(corrupt.output.find("Exception raised from"), std::string::npos) << corrupt.output;
  EXPECT_EQ(corrupt.output.find("terminate called"), std::string::npos) << corrupt.output;
}

void check_compression(const std::string& hook, double relative_precision) {
  TempDir dir;
  run_ok(dir, hook, {"--iterations", "2", "--comm-hook", hook, "--dump-grads",
                     dir / "grads-{rank}.txt"});
  const Dump r0 = read_dump(dir / "grads-0.txt");
  const Dump r1 = read_dump(dir / "grads-1.txt");
  double worst_relative = 0;
  double largest = 0;
  for (int p = 0; p < 6; ++p) {
    const auto& averaged = r0.at({"ddp_grad", p});
    EXPECT_EQ(r1.at({"ddp_grad", p}), averaged);  // every rank gets the same result
    const auto& a = r0.at({"local_grad", p});
    const auto& b = r1.at({"local_grad", p});
    for (std::size_t i = 0; i < averaged.size(); ++i) {
      const double exact = (a[i] + b[i]) / 2;
      largest = std::max(largest, std::abs(exact));
      // Each operand is rounded once to the wire format, the sum once more.
      const double bound = relative_precision * (std::abs(a[i]) + std::abs(b[i])) + 1e-7;
      worst_relative = std::max(worst_relative, std::abs(averaged[i] - exact) / bound);
    }
  }
  EXPECT_GT(largest, 1e-3);
  EXPECT_LE(worst_relative, 1.0) << hook << " error beyond the format's precision";

  // The wire carried 2-byte values: half the float32 bucket bytes.
  const trace::RankTrace t = testing::read_rank(dir, hook, 0);
  EXPECT_EQ(t.meta.settings.at("comm_hook"), hook);
  std::int64_t float32_bytes = 0;
  for (const auto& p : t.meta.parameters) float32_bytes += p.numel * 4;
  for (const std::int64_t it : {0, 1}) {
    std::int64_t wire = 0;
    for (const auto* e : events_of(t, trace::EventType::AllreduceBegin)) {
      if (e->iteration == it) wire += e->bytes;
    }
    EXPECT_EQ(wire * 2, float32_bytes) << "iteration " << it;
  }
}

TEST(CommHook, Fp16AveragesWithinHalfPrecisionOnHalfTheBytes) {
  check_compression("fp16", std::ldexp(1.0, -11) * 1.5);
}

TEST(CommHook, Bf16AveragesWithinBfloat16PrecisionOnHalfTheBytes) {
  check_compression("bf16", std::ldexp(1.0, -8) * 1.5);
}

TEST(SyncEvery, AccumulatedStepsTrainLikeOneLargeBatch) {
  TempDir dir;
  // 2 ranks x 2 accumulated micro-batches of 4 == 1 rank with batch 16, for 2 optimizer steps.
  run_ok(dir, "accumulated", {"--batch-size", "4", "--sync-every", "2", "--iterations", "4",
                              "--dump-params", dir / "acc-{rank}.txt"});
  run_ok(dir, "large", {"--batch-size", "16", "--iterations", "2", "--no-trace",
                        "--dump-params", dir / "large.txt"}, 1);
  run_ok(dir, "plain", {"--batch-size", "4", "--iterations", "4", "--no-trace", "--dump-params",
                        dir / "plain-{rank}.txt"});
  const Dump accumulated = read_dump(dir / "acc-0.txt");
  const Dump large = read_dump(dir / "large.txt");
  const double worst = max_difference(accumulated, large);
  EXPECT_LT(worst, 2e-5);
  EXPECT_EQ(max_difference(accumulated, read_dump(dir / "acc-1.txt")), 0.0);
  // Not vacuous: four synchronised steps of batch 4 end elsewhere.
  EXPECT_GT(max_difference(read_dump(dir / "plain-0.txt"), large), 100 * worst + 1e-4);

  // The trace marks the accumulation steps, which all-reduce nothing and step no optimizer.
  const trace::RankTrace t = testing::read_rank(dir, "accumulated", 0);
  EXPECT_EQ(t.meta.settings.at("sync_every"), "2");
  for (const auto* begin : events_of(t, trace::EventType::IterationBegin)) {
    const bool synced = begin->iteration % 2 == 1;
    EXPECT_EQ(begin->kind, synced ? "" : "no_sync") << "iteration " << begin->iteration;
  }
  for (const auto type : {trace::EventType::AllreduceBegin, trace::EventType::OptimizerBegin}) {
    for (const auto* e : events_of(t, type)) EXPECT_EQ(e->iteration % 2, 1);
    EXPECT_FALSE(events_of(t, type).empty());
  }
}

TEST(ModelParallel, TwoStageModelStillAveragesGradientsAcrossRanks) {
  TempDir dir;
  run_ok(dir, "mp", {"--model", "mp-mlp", "--iterations", "3", "--dump-grads",
                     dir / "grads-{rank}.txt", "--dump-params", dir / "params-{rank}.txt"});
  run_ok(dir, "dp", {"--iterations", "3", "--no-trace", "--dump-params", dir / "dp-{rank}.txt"});
  const Dump r0 = read_dump(dir / "grads-0.txt");
  const Dump r1 = read_dump(dir / "grads-1.txt");
  for (int p = 0; p < 6; ++p) {
    const auto& averaged = r0.at({"ddp_grad", p});
    EXPECT_EQ(r1.at({"ddp_grad", p}), averaged) << "param " << p;
    const auto& a = r0.at({"local_grad", p});
    const auto& b = r1.at({"local_grad", p});
    std::vector<double> mean(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) mean[i] = (a[i] + b[i]) / 2;
    EXPECT_GT(max_abs_difference(a, b), 1e-4) << "param " << p;
    EXPECT_LT(max_abs_difference(averaged, mean), 1e-6) << "param " << p;
  }
  // Both stages are in the one DDP module: their parameters carry the stage names.
  const trace::RankTrace t = testing::read_rank(dir, "mp", 0);
  ASSERT_EQ(t.meta.parameters.size(), 6u);
  EXPECT_EQ(t.meta.parameters.front().name.rfind("stage0.", 0), 0u);
  EXPECT_EQ(t.meta.parameters.back().name.rfind("stage1.", 0), 0u);
  // Split or not, it is the same network from the same seed: it trains the same.
  EXPECT_LT(max_difference(read_dump(dir / "params-0.txt"), read_dump(dir / "dp-0.txt")), 1e-6);
}

}  // namespace
}  // namespace ddpsim::runtime
