// Stragglers and failures, end to end: ddp-launch starts real ddp-train processes that talk Gloo
// over loopback, skew is injected with --delay / --slowdown, and the traces are read back.
//
//   - a stall longer than --timeout fails the job the way PyTorch does: the waiting rank's
//     collective times out, the straggler then meets a closed peer; both ranks record a failure
//     event, exit non-zero soon after the timeout, and keep every completed iteration;
//   - a worker killed with SIGKILL: the launcher names it, the others end, traces stay valid;
//   - a stall shorter than the timeout costs the *other* rank all-reduce time;
//   - --slowdown stretches the slow rank's compute and records what it injected.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "ddpsim/trace/io.hpp"
#include "launched_job.hpp"

namespace ddpsim::runtime {
namespace {

using testing::events_of;
using testing::JobResult;
using testing::launch;
using testing::TempDir;

std::string train_command(const TempDir& dir, const std::vector<std::string>& extra) {
  return testing::train_command(dir, "trace", extra);
}

trace::RankTrace read_rank(const TempDir& dir, int rank) {
  return testing::read_rank(dir, "trace", rank);
}

void expect_iterations_complete(const trace::RankTrace& t, std::int64_t up_to) {
  const auto done = t.complete_iterations();
  for (std::int64_t it = 0; it <= up_to; ++it) {
    EXPECT_NE(std::find(done.begin(), done.end(), it), done.end())
        << "rank " << t.meta.rank << " iteration " << it << " incomplete";
  }
}

TEST(Straggler, StallBeyondTheTimeoutFailsEveryRankWithAFailureEvent) {
  TempDir dir;
  constexpr double kTimeout = 2.0;
  const JobResult job = launch(
      train_command(dir, {"--iterations", "8", "--timeout", "2", "--delay", "1=10000@3"}), dir);
  EXPECT_NE(job.exit_code, 0) << job.output;
  // Start-up (rendezvous, model build) under load takes a few seconds of its own; the 10 s
  // stall must not be waited out.
  EXPECT_LT(job.seconds, kTimeout + 5.0 + 5.0) << job.output;
  EXPECT_NE(job.output.find("ddp-train: rank 0 failed at iteration 3 bucket 0: timeout: "),
            std::string::npos)
      << job.output;
  EXPECT_NE(job.output.find("ddp-train: rank 1 failed at iteration 3 bucket 0: peer_closed: "),
            std::string::npos)
      << job.output;

  const trace::RankTrace waiting = read_rank(dir, 0);
  const trace::RankTrace straggler = read_rank(dir, 1);
  for (const auto* t : {&waiting, &straggler}) {
    expect_iterations_complete(*t, 2);
    const auto failures = events_of(*t, trace::EventType::Failure);
    ASSERT_EQ(failures.size(), 1u) << "rank " << t->meta.rank;
    EXPECT_EQ(failures[0]->iteration, 3);
    EXPECT_EQ(failures[0]->bucket, 0);
    EXPECT_FALSE(failures[0]->message.empty());
    EXPECT_EQ(t->meta.timeout_s, kTimeout);
    EXPECT_EQ(t->meta.skew.at("delay"), "1=10000@3");
  }
  const auto* timeout = events_of(waiting, trace::EventType::Failure)[0];
  EXPECT_EQ(timeout->kind, "timeout");
  // The collective waited the whole timeout (Gloo measured ~5.01 s for 5 s).
  EXPECT_GE(timeout->dur_ns, static_cast<std::int64_t>(kTimeout * 1e9 * 0.95));
  EXPECT_LT(timeout->dur_ns, static_cast<std::int64_t>((kTimeout + 3.0) * 1e9));
  EXPECT_EQ(events_of(straggler, trace::EventType::Failure)[0]->kind, "peer_closed");
  // The straggler's stall is on record, cut short when the launcher stopped the job.
  const auto delays = events_of(straggler, trace::EventType::Delay);
  ASSERT_EQ(delays.size(), 1u);
  EXPECT_EQ(delays[0]->kind, "delay");
  EXPECT_EQ(delays[0]->iteration, 3);
  EXPECT_GE(delays[0]->dur_ns, static_cast<std::int64_t>(kTimeout * 1e9 * 0.95));
  EXPECT_LT(delays[0]->dur_ns, 10'000'000'000);
  EXPECT_TRUE(events_of(waiting, trace::EventType::Delay).empty());
}

TEST(Straggler, KilledWorkerIsReportedAndTheOthersEndWithIntactTraces) {
  TempDir dir;
  // Rank 1 is SIGKILLed by a watcher once its trace shows iteration 2 complete; `exec` keeps
  // the shell's pid for ddp-train, so $$ is the trainer.
  const std::string events = dir / "trace/rank-1.events.csv";
  const std::string train =
      train_command(dir, {"--iterations", "400", "--timeout", "60", "--delay", "all=20"});
  const std::string script =
      "if [ \"$RANK\" = 1 ]; then (until grep -q ',2,iteration_end,' " + testing::shell_quote(events) +
      " 2>/dev/null; do sleep 0.05; done; kill -9 $$) & fi; exec " + train;
  const JobResult job = launch("sh -c " + testing::shell_quote(script), dir);
  EXPECT_NE(job.exit_code, 0) << job.output;
  EXPECT_NE(job.output.find("SIGKILL"), std::string::npos) << job.output;
  EXPECT_NE(job.output.find("rank 1"), std::string::npos) << job.output;
  // 400 iterations of >= 20 ms would take >= 8 s; the job ends long before.
  EXPECT_LT(job.seconds, 30.0) << job.output;

  const trace::RankTrace survivor = read_rank(dir, 0);
  const trace::RankTrace killed = read_rank(dir, 1);  // a cut last line is dropped, not an error
  expect_iterations_complete(survivor, 2);
  expect_iterations_complete(killed, 2);
  EXPECT_LT(survivor.complete_iterations().size(), 400u);
  EXPECT_TRUE(events_of(killed, trace::EventType::Failure).empty());
  const auto failures = events_of(survivor, trace::EventType::Failure);
  ASSERT_EQ(failures.size(), 1u) << job.output;
  // Gloo sees the closed connection; if the launcher's SIGTERM came between two iterations,
  // the rank records that instead.
  EXPECT_TRUE(failures[0]->kind == "peer_closed" || failures[0]->kind == "error")
      << failures[0]->kind << ": " << failures[0]->message;
}

// Sum of rank `t`'s all-reduce durations in one iteration, in seconds.
double allreduce_seconds(const trace::RankTrace& t, std::int64_t iteration) {
  std::int64_t total = 0;
  std::map<int, std::int64_t> begun;
  for (const auto& e : t.events) {
    if (e.iteration != iteration) continue;
    if (e.type == trace::EventType::AllreduceBegin) begun[e.bucket] = e.t_ns;
    if (e.type == trace::EventType::AllreduceEnd) total += e.t_ns - begun.at(e.bucket);
  }
  return static_cast<double>(total) / 1e9;
}

TEST(Straggler, StallBelowTheTimeoutShowsUpAsTheOtherRanksAllreduceWait) {
  TempDir dir;
  constexpr double kDelay = 1.5;
  const JobResult job = launch(
      train_command(dir, {"--iterations", "6", "--timeout", "60", "--delay", "1=1500@3"}), dir);
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const trace::Trace t = trace::read_trace(dir / "trace");
  const trace::RankTrace& waiting = t.ranks.at(0);
  const trace::RankTrace& straggler = t.ranks.at(1);
  EXPECT_TRUE(events_of(waiting, trace::EventType::Failure).empty());
  const auto delays = events_of(straggler, trace::EventType::Delay);
  ASSERT_EQ(delays.size(), 1u);
  EXPECT_EQ(delays[0]->iteration, 3);
  EXPECT_NEAR(static_cast<double>(delays[0]->dur_ns) / 1e9, kDelay, 0.3);
  // Rank 0 computed its gradients on time and then waited in the all-reduce for rank 1.
  EXPECT_GE(allreduce_seconds(waiting, 3), 0.8 * kDelay);
  EXPECT_LT(allreduce_seconds(waiting, 5), 0.5 * kDelay);
  EXPECT_LT(allreduce_seconds(straggler, 3), 0.5 * kDelay);
}

TEST(Straggler, SlowdownStretchesOnlyTheSlowRanksCompute) {
  TempDir dir;
  const JobResult job = launch(
      train_command(dir, {"--iterations", "5", "--slowdown", "1=3", "--width", "256"}), dir);
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const trace::Trace t = trace::read_trace(dir / "trace");
  EXPECT_EQ(t.ranks.at(1).meta.skew.at("slowdown"), "1=3");
  EXPECT_TRUE(events_of(t.ranks.at(0), trace::EventType::Delay).empty());
  std::map<std::int64_t, std::int64_t> injected_per_iteration;
  for (const auto* e : events_of(t.ranks.at(1), trace::EventType::Delay)) {
    EXPECT_EQ(e->kind, "slowdown");
    EXPECT_GT(e->dur_ns, 0);
    injected_per_iteration[e->iteration] += e->dur_ns;
  }
  EXPECT_EQ(injected_per_iteration.size(), 5u);
  // Forward: the recorded phase holds the measured compute and a sleep asked for twice as long,
  // so the sleeps are two thirds of it. A sleep never ends early but may wake late (a busy core
  // under a parallel ctest), which only raises the share, and a preempted forward asks for a
  // longer sleep: the smallest share of iterations 1-4 is the one closest to the ask.
  const auto& slow = t.ranks.at(1);
  std::int64_t forward_begin = 0;
  std::vector<double> shares;
  for (const auto& e : slow.events) {
    if (e.iteration < 1) continue;
    if (e.type == trace::EventType::ForwardBegin) forward_begin = e.t_ns;
    if (e.type == trace::EventType::ForwardEnd) {
      std::int64_t slept = 0;
      for (const auto* d : events_of(slow, trace::EventType::Delay)) {
        if (d->t_ns >= forward_begin && d->t_ns < e.t_ns) slept += d->dur_ns;
      }
      shares.push_back(static_cast<double>(slept) / static_cast<double>(e.t_ns - forward_begin));
    }
  }
  ASSERT_EQ(shares.size(), 4u);
  std::sort(shares.begin(), shares.end());
  EXPECT_NEAR(shares[0], 2.0 / 3.0, 0.1) << shares[0] << " " << shares[1] << " " << shares[2] << " " << shares[3];
}

}  // namespace
}  // namespace ddpsim::runtime
