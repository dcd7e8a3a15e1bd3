// ddp-train as users run it: real processes, real Gloo over loopback, real trace files.
//
// What DDP promises, checked on small models so each test takes seconds:
//   - after backward, every rank holds the same gradients, and they are the average of the
//     ranks' local gradients;
//   - W ranks with batch b train exactly like 1 rank with batch W*b;
//   - the trace of a run is valid and complete (a grad_ready per parameter, every bucket's
//     all-reduce on every rank);
//   - a smaller --bucket-cap-mb gives more buckets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "ddpsim/trace/io.hpp"
#include "param_dump.hpp"
#include "rank_processes.hpp"

namespace ddpsim::runtime {
namespace {

using testing::RankResult;
using testing::TempDir;

constexpr auto kDeadline = std::chrono::seconds(90);

// A small MLP: 3 weight matrices and biases, fast enough for several runs per test.
std::vector<std::string> small_mlp_args(int batch_size, int iterations) {
  return {"--model", "mlp", "--width", "24", "--depth", "2", "--batch-size",
          std::to_string(batch_size), "--iterations", std::to_string(iterations),
          "--dataset-size", "1200", "--lr", "0.05", "--seed", "7", "--quiet"};
}

std::vector<RankResult> run_job(int world_size, std::vector<std::string> args,
                                const TempDir& dir, const std::string& tag) {
  // file:// rendezvous: no port to race for between concurrently running tests.
  const std::string store = dir / ("store-" + tag);
  args.push_back("--init");
  args.push_back("file://" + store);
  const std::string scratch = dir / ("logs-" + tag);
  std::filesystem::create_directories(scratch);
  auto results = testing::run_ranks(DDP_TRAIN_PATH, args, world_size, 0, scratch, kDeadline);
  for (std::size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "rank " << r << " stderr: " << results[r].err;
  }
  return results;
}

using testing::Dump;
using testing::max_abs_difference;
using testing::read_dump;

int parameter_count(const Dump& dump, const std::string& kind) {
  return static_cast<int>(std::count_if(dump.begin(), dump.end(),
                                        [&](const auto& entry) { return entry.first.first == kind; }));
}

// (world size, traced): traced runs average in ddp-train's comm hook, untraced ones in the
// Reducer's built-in path; both must give the same result.
class GradientAveraging : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(GradientAveraging, GradientsAreTheSameOnEveryRankAndTheAverageOfLocalOnes) {
  const auto [world, traced] = GetParam();
  TempDir dir;
  auto args = small_mlp_args(8, 3);
  args.insert(args.end(), {"--dump-grads", dir / "grads-{rank}.txt"});
  if (traced) {
    args.insert(args.end(), {"--trace-dir", dir / "trace"});
  } else {
    args.push_back("--no-trace");
  }
  run_job(world, args, dir, "grads");

  std::vector<Dump> dumps;
  for (int r = 0; r < world; ++r) dumps.push_back(read_dump(dir / ("grads-" + std::to_string(r) + ".txt")));
  const int params = parameter_count(dumps[0], "ddp_grad");
  ASSERT_EQ(params, 6);
  ASSERT_EQ(parameter_count(dumps[0], "local_grad"), params);

  for (int p = 0; p < params; ++p) {
    const auto& averaged = dumps[0].at({"ddp_grad", p});
    std::vector<double> mean(averaged.size(), 0.0);
    for (int r = 0; r < world; ++r) {
      // Bit-identical across ranks: every rank receives the same all-reduce result.
      EXPECT_EQ(dumps[r].at({"ddp_grad", p}), averaged) << "param " << p << " rank " << r;
      const auto& local = dumps[r].at({"local_grad", p});
      for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += local[i] / world;
    }
    // Ranks saw different samples, so averaging was not a no-op...
    EXPECT_GT(max_abs_difference(dumps[0].at({"local_grad", p}), dumps[1].at({"local_grad", p})), 1e-4)
        << "param " << p;
    // ...and DDP's result is their mean (float32 sums in another order: tiny differences).
    EXPECT_LT(max_abs_difference(averaged, mean), 1e-6) << "param " << p;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, GradientAveraging,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::Bool()),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks_" +
                                  (std::get<1>(info.param) ? "traced" : "untraced");
                         });

class DdpEquivalence : public ::testing::TestWithParam<int> {};

TEST_P(DdpEquivalence, WRanksWithBatchBTrainLikeOneRankWithBatchWB) {
  const int world = GetParam();
  const int batch = 6;
  const int steps = 5;
  TempDir dir;
  auto with_dump = [&](std::vector<std::string> args, const std::string& file) {
    args.insert(args.end(), {"--no-trace", "--dump-params", dir / file});
    return args;
  };
  run_job(world, with_dump(small_mlp_args(batch, steps), "dist-{rank}.txt"), dir, "dist");
  run_job(1, with_dump(small_mlp_args(world * batch, steps), "single.txt"), dir, "single");
  run_job(1, with_dump(small_mlp_args(batch, steps), "small.txt"), dir, "small");

  const Dump distributed = read_dump(dir / "dist-0.txt");
  const Dump single = read_dump(dir / "single.txt");
  const Dump small_batch = read_dump(dir / "small.txt");
  ASSERT_EQ(parameter_count(distributed, "param"), 6);
  double worst = 0;
  double control = 0;
  for (const auto& [key, values] : single) {
    worst = std::max(worst, max_abs_difference(distributed.at(key), values));
    control = std::max(control, max_abs_difference(small_batch.at(key), values));
  }
  EXPECT_LT(worst, 2e-5) << "W ranks x batch b diverged from 1 rank x batch W*b";
  // The property is not vacuous: a different batch does give different parameters.
  EXPECT_GT(control, 100 * worst + 1e-4);
  // And every rank ends with the same parameters.
  for (int r = 1; r < world; ++r) {
    const Dump other = read_dump(dir / ("dist-" + std::to_string(r) + ".txt"));
    for (const auto& [key, values] : distributed) EXPECT_EQ(other.at(key), values);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DdpEquivalence, ::testing::Values(2, 3));

// Last bucket layout recorded in rank 0's metadata.
std::size_t last_bucket_count(const std::string& trace_dir) {
  const trace::Trace t = trace::read_trace(trace_dir);
  return t.meta().bucket_assignments.back().buckets.size();
}

TEST(DdpTrace, TwoRankTraceIsValidAndComplete) {
  TempDir dir;
  const int iterations = 4;
  auto args = small_mlp_args(8, iterations);
  args.insert(args.end(), {"--trace-dir", dir / "trace", "--bucket-cap-mb", "0.001",
                           "--first-bucket-cap-mb", "0.001"});
  run_job(2, args, dir, "trace");

  const trace::Trace t = trace::read_trace(dir / "trace");  // throws on any format violation
  ASSERT_EQ(t.world_size(), 2);
  const auto params = t.meta().parameters.size();
  ASSERT_EQ(params, 6u);
  for (const trace::RankTrace& rank : t.ranks) {
    EXPECT_EQ(rank.complete_iterations().size(), static_cast<std::size_t>(iterations));
    for (std::int64_t it = 0; it < iterations; ++it) {
      const trace::BucketAssignment* layout = rank.meta.assignment_for(it);
      ASSERT_NE(layout, nullptr) << "iteration " << it;
      // The layout holds every parameter exactly once.
      std::multiset<int> members;
      for (const auto& bucket : layout->buckets) members.insert(bucket.begin(), bucket.end());
      EXPECT_EQ(members.size(), params);
      EXPECT_EQ(std::set<int>(members.begin(), members.end()).size(), params);

      std::set<int> ready_params;
      std::map<trace::EventType, std::set<int>> bucket_events;
      for (const trace::Event& e : rank.events) {
        if (e.iteration != it) continue;
        if (e.type == trace::EventType::GradReady) ready_params.insert(e.param);
        if (e.bucket >= 0) {
          bucket_events[e.type].insert(e.bucket);
          EXPECT_EQ(e.bytes, rank.meta.bucket_bytes(*layout, e.bucket));
        }
      }
      EXPECT_EQ(ready_params.size(), params) << "rank " << rank.meta.rank << " iteration " << it;
      for (auto type : {trace::EventType::BucketReady, trace::EventType::AllreduceBegin,
                        trace::EventType::AllreduceEnd}) {
        EXPECT_EQ(bucket_events[type].size(), layout->buckets.size())
            << trace::to_string(type) << " rank " << rank.meta.rank << " iteration " << it;
      }
    }
  }
  // Iteration 0 runs with one bucket (registration order is not backward order); from
  // iteration 1, the layout rebuilt with these tiny caps has several.
  EXPECT_EQ(t.meta().bucket_assignments.front().buckets.size(), 1u);
  EXPECT_EQ(t.meta().bucket_assignments.back().first_iteration, 1);
  EXPECT_GT(last_bucket_count(dir / "trace"), 1u);
}

TEST(DdpTrace, TcpRendezvousFromEnvironment) {
  TempDir dir;
  auto args = small_mlp_args(4, 2);
  args.insert(args.end(), {"--trace-dir", dir / "trace"});  // env:// (the default)
  auto results = testing::run_ranks(DDP_TRAIN_PATH, args, 2, testing::free_port(), dir.str(), kDeadline);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(trace::read_trace(dir / "trace").world_size(), 2);
}

TEST(DdpBuckets, SmallerBucketCapGivesMoreBuckets) {
  TempDir dir;
  // 3 x (512 x 512) weights: 3 MiB of gradients.
  auto args = [&](const std::string& cap, const std::string& trace) {
    return std::vector<std::string>{
        "--model", "mlp", "--width", "512", "--depth", "3", "--batch-size", "4", "--iterations",
        "2", "--quiet", "--bucket-cap-mb", cap, "--trace-dir", dir / trace};
  };
  run_job(2, args("25", "default"), dir, "default");
  run_job(2, args("0.5", "small"), dir, "small");
  const std::size_t default_buckets = last_bucket_count(dir / "default");
  const std::size_t small_buckets = last_bucket_count(dir / "small");
  // PyTorch's default: a first bucket closed at 1 MiB (the last layer and one hidden layer,
  // whose gradients come first), then everything else within 25 MiB.
  EXPECT_EQ(default_buckets, 2u);
  EXPECT_GT(small_buckets, default_buckets);
}

// --bucket-caps-mb (DDP's bucket_cap_mb_list): the Reducer rebuilds the buckets with the list,
// bucket i closing once its bytes reach cap i, the last cap repeating. The expected layout is
// worked out here, independently of c10d and of the simulator, from the order in which rank 0's
// gradients became ready in iteration 0 (the order the Reducer rebuilds from).
TEST(DdpBuckets, ListOfCapsBuildsTheBucketsTheListAsksFor) {
  TempDir dir;
  // 4 x (512 x 512) weights (1 MiB each, 2 KiB biases) and a 10 x 512 output layer.
  auto args = [&](std::vector<std::string> caps, const std::string& trace) {
    std::vector<std::string> a = {"--model", "mlp", "--width", "512", "--depth", "4", "--batch-size", "4",
                                  "--iterations", "3", "--quiet", "--trace-dir", dir / trace};
    a.insert(a.end(), caps.begin(), caps.end());
    return a;
  };
  run_job(2, args({"--bucket-caps-mb", "0.25,2,0.25"}, "list"), dir, "list");
  run_job(2, args({"--bucket-cap-mb", "25"}, "single"), dir, "single");
  const trace::Trace t = trace::read_trace(dir / "list");
  const trace::RunMeta& meta = t.meta();
  constexpr std::int64_t kMiB = 1 << 20;
  const std::vector<std::int64_t> limits = {kMiB / 4, 2 * kMiB, kMiB / 4};
  EXPECT_EQ(meta.bucket_cap_bytes_list, limits);
  EXPECT_EQ(meta.bucket_cap_bytes, 2 * kMiB);  // max(list), as Python DDP sets it

  // Rank 0's gradient order in iteration 0.
  std::vector<int> order;
  for (const trace::Event& e : t.ranks[0].events) {
    if (e.iteration == 0 && e.type == trace::EventType::GradReady) order.push_back(e.param);
  }
  ASSERT_EQ(order.size(), meta.parameters.size());
  std::vector<std::set<int>> expected(1);
  std::int64_t bytes = 0;
  std::size_t limit = 0;
  for (int p : order) {
    expected.back().insert(p);
    bytes += meta.parameters[static_cast<std::size_t>(p)].bytes();
    if (bytes >= limits[limit]) {
      expected.emplace_back();
      bytes = 0;
      limit = std::min(limit + 1, limits.size() - 1);
    }
  }
  if (expected.back().empty()) expected.pop_back();
  ASSERT_EQ(meta.bucket_assignments.back().first_iteration, 1);
  const auto& rebuilt = meta.bucket_assignments.back().buckets;
  std::vector<std::set<int>> recorded;
  for (const auto& bucket : rebuilt) recorded.emplace_back(bucket.begin(), bucket.end());
  EXPECT_EQ(recorded, expected);
  // Here: ~1.02 MiB (closed at 0.25), ~2.004 MiB (closed at 2), ~1.002 MiB (0.25 repeating).
  ASSERT_EQ(rebuilt.size(), 3u);
  EXPECT_GE(meta.bucket_bytes(meta.bucket_assignments.back(), 1), 2 * kMiB);
  // Every all-reduce of iteration 1 on: one per bucket of this layout, with its bytes.
  for (const trace::RankTrace& rank : t.ranks) {
    std::map<int, std::int64_t> allreduced;
    for (const trace::Event& e : rank.events) {
      if (e.iteration >= 1 && e.type == trace::EventType::AllreduceBegin) allreduced[e.bucket] = e.bytes;
    }
    ASSERT_EQ(allreduced.size(), rebuilt.size());
    for (const auto& [bucket, wire] : allreduced) EXPECT_EQ(wire, meta.bucket_bytes(meta.bucket_assignments.back(), bucket));
  }
  // Iteration 0 is bucketed by the list too (in registration order), as Python DDP does.
  EXPECT_GT(meta.bucket_assignments.front().buckets.size(), 1u);
  // One cap (first bucket 1 MiB, then 25 MiB) gives another layout: 2 buckets.
  const trace::Trace single = trace::read_trace(dir / "single");
  EXPECT_TRUE(single.meta().bucket_cap_bytes_list.empty());
  EXPECT_EQ(last_bucket_count(dir / "single"), 2u);
}

TEST(DdpFailure, SurvivorRecordsThePeersDeathAndExits) {
  TempDir dir;
  auto args = small_mlp_args(8, 6);
  args.insert(args.end(), {"--trace-dir", dir / "trace", "--timeout", "30", "--fail-rank", "1",
                           "--fail-iteration", "3", "--init", "file://" + dir / "store"});
  const auto start = std::chrono::steady_clock::now();
  auto results = testing::run_ranks(DDP_TRAIN_PATH, args, 2, 0, dir.str(), kDeadline);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(results[1].exit_code, 3) << results[1].err;
  EXPECT_EQ(results[0].exit_code, 1) << results[0].err;
  // A dead peer is noticed at once, not after the 30 s timeout.
  EXPECT_LT(seconds, 25.0);
  EXPECT_NE(results[0].err.find("peer_closed"), std::string::npos) << results[0].err;

  const trace::Trace t = trace::read_trace(dir / "trace");  // both ranks' records stay valid
  for (const auto& rank : t.ranks) {
    EXPECT_EQ(rank.complete_iterations().size(), 3u) << "rank " << rank.meta.rank;
    ASSERT_FALSE(rank.events.empty());
    const trace::Event& last = rank.events.back();
    EXPECT_EQ(last.type, trace::EventType::Failure);
    EXPECT_EQ(last.iteration, 3);
    EXPECT_EQ(last.kind, rank.meta.rank == 0 ? "peer_closed" : "error");
  }
}

// What one rank of `ddp-train FLAGS` prints on stderr, checked to exit 2 (a usage error).
std::string usage_error_of(std::vector<std::string> flags) {
  TempDir dir;
  flags.push_back("--quiet");
  auto results = testing::run_ranks(DDP_TRAIN_PATH, flags, 1, 0, dir.str(), kDeadline);
  if (results.size() != 1u) return "expected 1 rank, got " + std::to_string(results.size());
  EXPECT_EQ(results[0].exit_code, 2);
  return results[0].err;
}

// Without a GPU, --backend nccl is refused in one line before any rendezvous: on a CPU LibTorch
// because NCCL is not compiled in, on a CUDA LibTorch (CI's CUDA leg) because no device is seen.
// --device cuda with Gloo: the same, naming --device.
TEST(DdpBackend, CudaWithoutAGpuIsAOneLineUsageError) {
#ifdef DDPSIM_RUNTIME_HAS_NCCL
  EXPECT_EQ(usage_error_of({"--backend", "nccl"}),
            "ddp-train: --backend nccl: no CUDA device is visible to this process; use --backend gloo\n");
  EXPECT_EQ(usage_error_of({"--device", "cuda"}),
            "ddp-train: --device cuda: no CUDA device is visible to this process; use --device cpu\n");
#else
  EXPECT_EQ(usage_error_of({"--backend", "nccl"}),
            "ddp-train: this build of ddp-train has no NCCL (LibTorch without CUDA); use --backend gloo\n");
  EXPECT_EQ(usage_error_of({"--device", "cuda"}),
            "ddp-train: --device cuda: this build of ddp-train has no CUDA (LibTorch without CUDA); "
            "use --device cpu\n");
#endif
}

}  // namespace
}  // namespace ddpsim::runtime
