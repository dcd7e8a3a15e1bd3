// The replay's actors and the SimGrid run (replay.hpp).
#include "ddpsim/sim/replay.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <xbt/config.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "engine/collectives.hpp"
#include "engine/paced_transfers.hpp"
#include "engine/platform_builder.hpp"
#include "engine/routes.hpp"
#include "replay/replay_classes.hpp"
#include "workload/reducer_finalize.hpp"

namespace sg4 = simgrid::s4u;

namespace ddpsim::sim {

const std::vector<std::string> kDefaultSimgridConfig = {
    "network/model:CM02",
    "network/crosstraffic:0",
    "network/TCP-gamma:0",
};

namespace {

// More actors than this run without stack guard pages (see replay_classes).
constexpr int kGuardedActorsLimit = 16384;

using trace::Event;
using trace::EventType;

// One class's state (replay_classes.hpp), shared by its two actors (they run one at a
// time: no locking). Its events are those of its first rank.
struct RankState {
  sg4::SemaphorePtr backward_started = sg4::Semaphore::create(0);  // compute → comm
  sg4::SemaphorePtr all_reduced = sg4::Semaphore::create(0);       // comm → compute
  double backward_begin_s = 0;
  double compute_done_s = 0;  // when this iteration's autograd ends (backward_begin + compute)
  std::vector<Event> events;
  // Autograd slowed while this class's all-reduces transfer (compute_fraction_during_allreduce
  // < 1): its pace is only known as it goes, so compute-R tells comm-R when each bucket is
  // ready, and comm-R tells compute-R when a transfer starts and ends.
  sg4::MutexPtr mutex;
  sg4::ConditionVariablePtr changed;
  bool transferring = false;
  std::vector<double> bucket_ready_at;  // this iteration's, -1 until ready
  // Autograd's progress: work_done_s of autograd-alone seconds at work_since_s, going on at
  // work_rate (autograd seconds per simulated second) out of work_total_s.
  double work_total_s = 0;
  double work_done_s = 0;
  double work_since_s = 0;
  double work_rate = 0;
  double pace_alone = 1;  // autograd seconds per simulated second alone: 1 / its slowdown
  // Two lanes (ReplayOptions::allreduces_in_flight): the lanes free, the iteration's all-reduces
  // not yet done (the reducer finalizes after the last), and how many are transferring.
  sg4::SemaphorePtr lanes_free;
  int all_reduces_left = 0;
  int in_flight = 0;
  // This iteration's all-reduce ends per bucket (-1 until ended): the reducer's finalize waits
  // for them in bucket order (backward_tail_s).
  std::vector<double> allreduce_end_s;
};

struct Simulation {
  const WorkloadModel& model;
  const ReplayOptions& options;
  RankClasses classes;
  CommunicationGroup group;
  std::vector<RankState> ranks;  // per class
  std::string failure;
  // With contention (options.overlap_bandwidth_fraction < 1) every class meets here before a
  // transfer, so all see the same start time and autograd state (contended_bytes).
  std::optional<JoinPoint> transfer_start = std::nullopt;
  // Ranks computing now on the shared cores (ReplayOptions::core_slowdown), a slowed rank
  // counting 1 / its slowdown.
  double computing = 0;
  // Two lanes: every all-reduce in flight, paced together, and a join per bucket (two
  // buckets' joins can be open at once, which one sequence of joins cannot tell apart).
  std::unique_ptr<PacedTransfers> transfers = nullptr;
  std::vector<std::unique_ptr<JoinPoint>> bucket_joins = {};

  bool lanes() const { return options.allreduces_in_flight > 1; }
  // Some class's autograd still runs: all-reduces go at overlap_bandwidth_fraction.
  bool autograd_running() const {
    return std::any_of(ranks.begin(), ranks.end(), [](const RankState& state) { return !std::isfinite(state.compute_done_s); });
  }
  bool shared_cores() const { return static_cast<bool>(options.core_slowdown); }
  // Autograd's pace is known only as it goes: it changes with its rank's transfers or with the
  // ranks computing beside it. Resume costs after a slowed rank's sleeps sit between its
  // gradients, which only the paced walk through them places. Two lanes' transfers change
  // pace when the last autograd ends, which the paced walk tells them.
  bool paced_autograd() const {
    return options.compute_fraction_during_allreduce < 1 || shared_cores() || options.sleep_resume_cost_s > 0 ||
           lanes();
  }
  // Compute's pace on the shared cores now, relative to the trace's (1 unless shared).
  double core_pace() const {
    return shared_cores() ? shared_core_pace(options.core_slowdown, options.core_trace_ranks, computing) : 1.0;
  }
  double slowdown(int rank) const {
    auto found = options.slowdown.find(rank);
    return found == options.slowdown.end() ? 1.0 : found->second;
  }
};

std::int64_t to_ns(double seconds) { return std::llround(seconds * 1e9); }

Event make_event(int rank, std::int64_t iteration, EventType type, double at_s) {
  Event event;
  event.rank = rank;
  event.iteration = iteration;
  event.type = type;
  event.t_ns = to_ns(at_s);
  return event;
}

// The measured costs a simulated rank replays (source_rank: itself, or a measured rank
// drawn per iteration; source_iteration: which of its iterations). Pure, so the compute and
// comm actors of a rank agree.
const RankIterationCosts& costs_of(const Simulation& sim, int rank, std::int64_t iteration) {
  return sim.model.costs_for(source_rank(sim.model, sim.options, rank, iteration),
                             source_iteration(sim.model, sim.options, rank, iteration));
}

// An injected stall at the start of an iteration, recorded as `ddp-train` records it: a
// `delay` event at the time the sleep began, its length in dur_ns.
void stall(const Simulation& sim, RankState& state, int rank, std::int64_t iteration) {
  const std::int64_t fixed_ns = sim.options.skew.fixed_delay_ns(rank, iteration);
  const std::int64_t random_ns = sim.options.skew.random_delay_ns(rank, iteration);
  if (fixed_ns + random_ns <= 0) return;
  Event delay = make_event(rank, iteration, EventType::Delay, sg4::Engine::get_clock());
  delay.dur_ns = fixed_ns + random_ns;
  delay.kind = random_ns > 0 ? "distribution" : "delay";
  state.events.push_back(delay);
  sg4::this_actor::sleep_for(static_cast<double>(fixed_ns + random_ns) * 1e-9);
}

// Autograd seconds (its time alone) done by now in this iteration.
double autograd_work_done(const RankState& state) {
  return state.work_done_s + (sg4::Engine::get_clock() - state.work_since_s) * state.work_rate;
}

// Adds the progress made at the current pace since work_since_s.
void bank_progress(RankState& state) {
  state.work_done_s = autograd_work_done(state);
  state.work_since_s = sg4::Engine::get_clock();
}

// Runs `work_s` of autograd at its rate alone over `factor` (a slowdown), or at
// compute_fraction_during_allreduce of that while this class's all-reduce transfers; a
// transfer that starts or ends part way changes the pace from then on (set_transferring).
void autograd_for(const Simulation& sim, RankState& state, double factor, double work_s) {
  const double target_s = state.work_done_s + work_s;
  std::unique_lock<sg4::Mutex> lock(*state.mutex);
  while (state.work_done_s < target_s) {
    state.work_since_s = sg4::Engine::get_clock();
    state.work_rate =
        (state.transferring ? sim.options.compute_fraction_during_allreduce : 1.0) * sim.core_pace() / factor;
    const double wait_s = (target_s - state.work_done_s) / state.work_rate;
    const bool finished = state.changed->wait_for(lock, wait_s) == std::cv_status::timeout;
    bank_progress(state);
    if (finished) state.work_done_s = target_s;  // exactly: no rounding left to wait for
  }
  state.work_rate = 0;
}

// Class `index` (its ranks slowed x`factor`) starts (+1) or stops (-1) computing on the shared
// cores: every rank computing learns its new pace (each banks what it did at the old one when
// it wakes, at this same instant).
void set_computing(Simulation& sim, int index, double factor, int sign) {
  if (!sim.shared_cores()) return;
  const double ranks = static_cast<double>(sim.classes.members[static_cast<std::size_t>(index)].size());
  sim.computing = std::max(0.0, sim.computing + sign * ranks / factor);
  for (RankState& state : sim.ranks) state.changed->notify_all();
}

// Forward or the optimizer step: `work_s` as measured, x`factor` (a slowdown); on shared
// cores at the pace they allow, which changes as other ranks start and stop computing.
void compute_for(Simulation& sim, RankState& state, int index, double factor, double work_s) {
  if (!sim.shared_cores()) {
    sg4::this_actor::sleep_for(factor * work_s);
    return;
  }
  set_computing(sim, index, factor, +1);
  {
    std::unique_lock<sg4::Mutex> lock(*state.mutex);
    double done_s = 0;
    while (done_s < work_s) {
      const double since_s = sg4::Engine::get_clock();
      const double rate = sim.core_pace() / factor;
      const bool finished = state.changed->wait_for(lock, (work_s - done_s) / rate) == std::cv_status::timeout;
      done_s = finished ? work_s : done_s + (sg4::Engine::get_clock() - since_s) * rate;
    }
  }
  set_computing(sim, index, factor, -1);
}

// Backward when autograd is paced by the all-reduces (Simulation::paced_autograd): the ready
// offsets are autograd's time alone (extract_workload), reached at the pace autograd_for
// allows; each bucket is handed to comm-R when reached, each gradient recorded when reached.
void paced_autograd(Simulation& sim, RankState& state, int index, int rank, std::int64_t label,
                    const RankIterationCosts& costs, double factor) {
  struct Milestone {
    double work_s;
    int bucket;  // or -1: a gradient
    int param;
  };
  std::vector<Milestone> milestones;
  for (std::size_t b = 0; b < costs.bucket_ready_s.size(); ++b) {
    milestones.push_back({std::max(costs.bucket_ready_s[b], 0.0), static_cast<int>(b), -1});
  }
  for (std::size_t param = 0; param < costs.grad_ready_s.size(); ++param) {
    if (costs.grad_ready_s[param] >= 0) milestones.push_back({costs.grad_ready_s[param], -1, static_cast<int>(param)});
  }
  std::stable_sort(milestones.begin(), milestones.end(),
                   [](const Milestone& a, const Milestone& b) { return a.work_s < b.work_s; });
  // A rank slowed by sleeps (ddp-train --slowdown) sleeps after forward and after each
  // gradient, and resumes slower each time: sleep_resume_cost_s more work before each gradient
  // (the first after forward's sleep), stretched with it. A milestone moves by the costs of the
  // gradients up to it, its own and a bucket's last gradient's included.
  const double resume_s = factor > 1 ? sim.options.sleep_resume_cost_s : 0;
  std::vector<double> grads_at;
  for (const Milestone& milestone : milestones) {
    if (milestone.param >= 0) grads_at.push_back(milestone.work_s);  // sorted
  }
  for (Milestone& milestone : milestones) {
    const auto resumed = std::upper_bound(grads_at.begin(), grads_at.end(), milestone.work_s) - grads_at.begin();
    milestone.work_s += resume_s * static_cast<double>(resumed);
  }
  state.bucket_ready_at.assign(costs.bucket_ready_s.size(), -1.0);
  state.work_total_s = costs.backward_compute_s + resume_s * static_cast<double>(grads_at.size());
  state.work_done_s = 0;
  state.work_since_s = state.backward_begin_s;
  state.work_rate = 0;
  state.pace_alone = 1 / factor;
  state.compute_done_s = std::numeric_limits<double>::infinity();  // known when reached
  if (sim.transfers) sim.transfers->rate_changed();
  state.backward_started->release();
  set_computing(sim, index, factor, +1);
  for (const Milestone& milestone : milestones) {
    autograd_for(sim, state, factor, milestone.work_s - state.work_done_s);
    if (milestone.bucket >= 0) {
      state.bucket_ready_at[static_cast<std::size_t>(milestone.bucket)] = sg4::Engine::get_clock();
      state.changed->notify_all();
    } else {
      Event ready = make_event(rank, label, EventType::GradReady, sg4::Engine::get_clock());
      ready.param = milestone.param;
      state.events.push_back(ready);
    }
  }
  autograd_for(sim, state, factor, state.work_total_s - state.work_done_s);
  set_computing(sim, index, factor, -1);
  state.compute_done_s = sg4::Engine::get_clock();
  if (sim.transfers) sim.transfers->rate_changed();
}

// What backward takes after autograd and the last all-reduce: the measured tail, with the
// reducer's finalize copies of the recorded layout replaced by those of the replayed one, after
// the replay's own all-reduce ends (Note [reducer finalize]). As measured: never stretched.
double tail_after_allreduces_s(const Simulation& sim, const RankState& state, const RankIterationCosts& costs) {
  if (!(sim.model.finalize_seconds_per_byte > 0)) return costs.backward_tail_s;
  const double exposed_s = finalize_exposed_s(state.compute_done_s, state.allreduce_end_s, sim.model.bucket_bytes,
                                              sim.model.finalize_seconds_per_byte);
  return std::max(0.0, costs.backward_tail_s - costs.finalize_exposed_s + exposed_s);
}

// compute-R: the measured compute phases; backward hands the buckets to comm-R. R is the
// first rank of a class, and plays all of them.
void compute_actor(Simulation& sim, int index) {
  RankState& state = sim.ranks[static_cast<std::size_t>(index)];
  const int rank = sim.classes.members[static_cast<std::size_t>(index)].front();
  const double factor = sim.slowdown(rank);
  const auto now = [] { return sg4::Engine::get_clock(); };
  // --slowdown stretches what ddp-train's SkewInjector stretches, so that a what-if predicts
  // the run ddp-train --slowdown records: forward, autograd up to each gradient (backward's
  // offsets, below) and the optimizer step. The framework's steps between them (the DDP
  // hooks before forward and backward, the reducer's finalisation after the last all-reduce)
  // and evaluation run as measured. See Note [slowdown stretches compute only] in docs/model.md.
  // A slowed rank resumes from a sleep at the start of forward (the last iteration's optimizer
  // slept) and of the optimizer step (the last gradient slept): see paced_autograd.
  const double resume_s = factor > 1 ? sim.options.sleep_resume_cost_s : 0;
  const auto phase = [&](double duration_s) { compute_for(sim, state, index, factor, duration_s + resume_s); };
  const auto as_measured = [](double duration_s) { sg4::this_actor::sleep_for(duration_s); };
  for (std::int64_t iteration = 0; iteration < sim.options.iterations; ++iteration) {
    const RankIterationCosts& costs = costs_of(sim, rank, iteration);
    const std::int64_t label = sim.model.first_source_iteration() + iteration;
    const auto record = [&](EventType type) {
      state.events.push_back(make_event(rank, label, type, now()));
    };
    record(EventType::IterationBegin);
    stall(sim, state, rank, label);
    if (costs.stall_s > 0) {  // the source run's own stall, as measured; never stretched
      Event measured = make_event(rank, label, EventType::Delay, now());
      measured.dur_ns = to_ns(costs.stall_s);
      measured.kind = "measured";
      state.events.push_back(measured);
      sg4::this_actor::sleep_for(costs.stall_s);
    }
    as_measured(costs.before_forward_s);
    record(EventType::ForwardBegin);
    phase(costs.forward_s);
    record(EventType::ForwardEnd);
    as_measured(costs.before_backward_s);
    record(EventType::BackwardBegin);
    state.backward_begin_s = now();
    if (sim.paced_autograd()) {
      paced_autograd(sim, state, index, rank, label, costs, factor);
    } else {
      state.compute_done_s = state.backward_begin_s + factor * costs.backward_compute_s;
      state.backward_started->release();
      // Gradients become ready while autograd runs; nothing waits on them individually, so
      // they are recorded at their offsets without waking the actor for each.
      for (std::size_t param = 0; param < costs.grad_ready_s.size(); ++param) {
        if (costs.grad_ready_s[param] < 0) continue;
        Event ready = make_event(rank, label, EventType::GradReady,
                                 state.backward_begin_s + factor * costs.grad_ready_s[param]);
        ready.param = static_cast<int>(param);
        state.events.push_back(ready);
      }
      phase(costs.backward_compute_s);
    }
    state.all_reduced->acquire();  // the reducer's finalize waits for the last bucket
    as_measured(tail_after_allreduces_s(sim, state, costs));
    record(EventType::BackwardEnd);
    as_measured(costs.before_optimizer_s);
    record(EventType::OptimizerBegin);
    phase(costs.optimizer_s);
    record(EventType::OptimizerEnd);
    as_measured(costs.after_optimizer_s);
    record(EventType::IterationEnd);
    // Evaluation between this iteration and the next (ddp-train --eval-every): its own
    // phase, as measured, never training compute; it delays the next iteration's start.
    if (costs.eval_after_s > 0) {
      record(EventType::EvalBegin);
      as_measured(costs.eval_after_s);
      state.events.push_back(make_event(rank, label, EventType::EvalEnd, now()));
      state.events.back().message = costs.eval_message;
    }
  }
}

// When a class's autograd ends: known, or with paced autograd still running, estimated at the
// pace it has while the transfer about to start runs (compute_fraction_during_allreduce, on
// the shared cores as they are now).
double autograd_end_estimate(const Simulation& sim, const RankState& state) {
  if (std::isfinite(state.compute_done_s)) return state.compute_done_s;
  const double left_s = std::max(0.0, state.work_total_s - autograd_work_done(state));
  return sg4::Engine::get_clock() +
         left_s / (state.pace_alone * sim.options.compute_fraction_during_allreduce * sim.core_pace());
}

// What an all-reduce of `bytes` carries over the simulated network: its bytes, or on a
// machine profile's ladder the payload that takes the ladder's time (ReplayOptions::network_ladder).
double carried_bytes(const Simulation& sim, std::int64_t bytes) {
  return sim.options.network_ladder.carried_bytes(bytes, sim.group.world_size());
}

// The bytes that take as long at the network's full rate as `bytes` take when the transfer
// starts at now() and goes at `fraction` of that rate until every class's autograd is done
// (ReplayOptions::overlap_bandwidth_fraction). Bandwidth term only: 2(W−1)/W · S / β.
double contended_bytes(const Simulation& sim, double bytes) {
  const double fraction = sim.options.overlap_bandwidth_fraction;
  double compute_done_s = 0;
  for (const RankState& state : sim.ranks) compute_done_s = std::max(compute_done_s, autograd_end_estimate(sim, state));
  const double busy_s = compute_done_s - sg4::Engine::get_clock();
  const double seconds_per_byte =
      allreduce_formula_shape(AllreduceAlgorithm::Ring, sim.group.world_size()).bandwidth_coefficient /
      sim.options.beta_bytes_per_s;
  if (busy_s <= 0 || !(seconds_per_byte > 0)) return bytes;
  const double busy_bytes = busy_s * fraction / seconds_per_byte;  // what the busy time carries
  if (bytes <= busy_bytes) return bytes / fraction;
  return busy_s / seconds_per_byte + (bytes - busy_bytes);
}

// Paced autograd (compute-R waiting in autograd_for) learns at once that its pace changed.
void set_transferring(RankState& state, bool transferring) {
  if (!state.changed) return;
  bank_progress(state);  // what was done at the old pace
  state.transferring = transferring;
  state.changed->notify_all();
}

// Waits until `bucket` is ready (known when autograd reaches it, with paced autograd) and
// records it as DDP's reducer does: bucket_ready, and allreduce_begin at the same time, the
// launch (FORMAT.md). Returns the launch time.
double launch_when_ready(Simulation& sim, RankState& state, int rank, std::int64_t label,
                         const RankIterationCosts& costs, double factor, int bucket) {
  const std::int64_t bytes = sim.model.bucket_bytes[static_cast<std::size_t>(bucket)];
  double ready_s = state.backward_begin_s + factor * costs.bucket_ready_s[static_cast<std::size_t>(bucket)];
  if (sim.paced_autograd()) {  // known when autograd reaches it
    std::unique_lock<sg4::Mutex> lock(*state.mutex);
    while (state.bucket_ready_at[static_cast<std::size_t>(bucket)] < 0) state.changed->wait(lock);
    ready_s = state.bucket_ready_at[static_cast<std::size_t>(bucket)];
  }
  for (const EventType type : {EventType::BucketReady, EventType::AllreduceBegin}) {
    Event event = make_event(rank, label, type, ready_s);
    event.bucket = bucket;
    event.bytes = bytes;
    state.events.push_back(event);
  }
  if (sg4::Engine::get_clock() < ready_s) sg4::this_actor::sleep_until(ready_s);
  return ready_s;
}

// The rank's own work on a bucket launched at `launch_s` before its transfer can start (a comm
// hook's averaging pass; WorkloadModel::local_seconds_per_byte): done by then unless the transfer
// would start sooner.
void finish_local_work(const Simulation& sim, double launch_s, std::int64_t bytes) {
  const double done_s = launch_s + sim.model.local_seconds_per_byte * static_cast<double>(bytes);
  if (sg4::Engine::get_clock() < done_s) sg4::this_actor::sleep_until(done_s);
}

void record_allreduce_end(RankState& state, int rank, std::int64_t label, int bucket, std::int64_t bytes) {
  if (static_cast<std::size_t>(bucket) < state.allreduce_end_s.size()) {
    state.allreduce_end_s[static_cast<std::size_t>(bucket)] = sg4::Engine::get_clock();
  }
  Event end = make_event(rank, label, EventType::AllreduceEnd, sg4::Engine::get_clock());
  end.bucket = bucket;
  end.bytes = bytes;
  state.events.push_back(end);
}

// As with Gloo, the first rank to time out fails the job: record it and stop everyone.
void fail_on_timeout(Simulation& sim, RankState& state, int rank, std::int64_t label, int bucket, double begin_s,
                     const CollectiveTimeout& timeout) {
  const double now = sg4::Engine::get_clock();
  Event failure = make_event(rank, label, EventType::Failure, now);
  failure.kind = "timeout";
  failure.bucket = bucket;
  failure.dur_ns = to_ns(now - begin_s);
  failure.message = timeout.what();
  state.events.push_back(failure);
  sim.failure = "rank " + std::to_string(rank) + " iteration " + std::to_string(label) + " bucket " +
                std::to_string(bucket) + ": timeout after " + std::to_string(now - begin_s) + " s: " + timeout.what();
  sg4::Actor::kill_all();
}

// comm-R: one stream; bucket b is all-reduced once it is ready and bucket b−1 is done.
void comm_actor(Simulation& sim, int index) {
  RankState& state = sim.ranks[static_cast<std::size_t>(index)];
  const int rank = sim.classes.members[static_cast<std::size_t>(index)].front();
  const double factor = sim.slowdown(rank);
  const auto now = [] { return sg4::Engine::get_clock(); };
  std::int64_t iteration = 0;
  std::int64_t label = sim.model.first_source_iteration();
  int bucket = -1;
  double begin_s = 0;
  try {
    for (; iteration < sim.options.iterations; ++iteration) {
      state.backward_started->acquire();
      const RankIterationCosts& costs = costs_of(sim, rank, iteration);
      label = sim.model.first_source_iteration() + iteration;
      state.allreduce_end_s.assign(sim.model.bucket_bytes.size(), -1.0);
      for (bucket = 0; bucket < static_cast<int>(sim.model.bucket_bytes.size()); ++bucket) {
        const std::int64_t bytes = sim.model.bucket_bytes[static_cast<std::size_t>(bucket)];
        const double launch_s = launch_when_ready(sim, state, rank, label, costs, factor, bucket);
        finish_local_work(sim, launch_s, bytes);
        // The transfer starts once the previous bucket's is done (begin_s, the deadline's base).
        begin_s = now();
        const double deadline_s = sim.options.timeout_s > 0 ? begin_s + sim.options.timeout_s : -1;
        const double carried = carried_bytes(sim, bytes);
        std::int64_t sent = std::llround(carried);
        AllreduceAlgorithm algorithm = sim.options.algorithm;
        if (sim.options.overlap_bandwidth_fraction < 1 || sim.paced_autograd()) {
          // Transfers start together: the network and autograd slow each other only then.
          if (!sim.transfer_start) sim.transfer_start.emplace(static_cast<int>(sim.ranks.size()));
          sim.transfer_start->join(index, deadline_s);
        }
        if (sim.options.overlap_bandwidth_fraction < 1) {
          sent = std::llround(contended_bytes(sim, carried));
          // --allreduce auto chooses by the bucket's real size, as NCCL's tuner would.
          if (algorithm == AllreduceAlgorithm::Auto) algorithm = sim.group.choose(bytes).algorithm;
        }
        set_transferring(state, true);
        run_allreduce(sim.group, algorithm, Participant{index, rank}, sent, deadline_s);
        set_transferring(state, false);
        record_allreduce_end(state, rank, label, bucket, bytes);
      }
      state.all_reduced->release();
    }
  } catch (const CollectiveTimeout& timeout) {
    fail_on_timeout(sim, state, rank, label, bucket, begin_s, timeout);
  }
}

// One bucket's all-reduce on a lane of class `index` (two lanes): from when it had a lane
// (the deadline's base) it joins the other classes, transfers paced with whatever else is in
// flight, and frees the lane; the iteration's last to end lets the reducer finalize.
void lane_transfer(Simulation& sim, int index, std::int64_t label, int bucket, double launch_s) {
  RankState& state = sim.ranks[static_cast<std::size_t>(index)];
  const int rank = sim.classes.members[static_cast<std::size_t>(index)].front();
  const std::int64_t bytes = sim.model.bucket_bytes[static_cast<std::size_t>(bucket)];
  finish_local_work(sim, launch_s, bytes);
  const double begin_s = sg4::Engine::get_clock();
  const double deadline_s = sim.options.timeout_s > 0 ? begin_s + sim.options.timeout_s : -1;
  try {
    sim.bucket_joins[static_cast<std::size_t>(bucket)]->join(index, deadline_s);
    if (state.in_flight++ == 0) set_transferring(state, true);
    const auto key = label * static_cast<std::int64_t>(sim.bucket_joins.size()) + bucket;
    const std::int64_t carried = std::llround(carried_bytes(sim, bytes));
    sim.transfers->run(key, closed_form_allreduce_s(sim.group, sim.options.algorithm, carried), deadline_s);
    if (--state.in_flight == 0) set_transferring(state, false);
  } catch (const CollectiveTimeout& timeout) {
    fail_on_timeout(sim, state, rank, label, bucket, begin_s, timeout);
    return;
  }
  record_allreduce_end(state, rank, label, bucket, bytes);
  state.lanes_free->release();
  if (--state.all_reduces_left == 0) state.all_reduced->release();
}

// comm-R with two lanes: launches each bucket once it is ready, in bucket order, and hands it
// to an actor of its own once one of Gloo's two workers is free (ProcessGroupGloo's queue).
void lanes_comm_actor(Simulation& sim, int index) {
  RankState& state = sim.ranks[static_cast<std::size_t>(index)];
  const int rank = sim.classes.members[static_cast<std::size_t>(index)].front();
  const double factor = sim.slowdown(rank);
  const int buckets = static_cast<int>(sim.model.bucket_bytes.size());
  for (std::int64_t iteration = 0; iteration < sim.options.iterations; ++iteration) {
    state.backward_started->acquire();
    const RankIterationCosts& costs = costs_of(sim, rank, iteration);
    const std::int64_t label = sim.model.first_source_iteration() + iteration;
    state.all_reduces_left = buckets;
    state.allreduce_end_s.assign(static_cast<std::size_t>(buckets), -1.0);
    if (buckets == 0) state.all_reduced->release();
    for (int bucket = 0; bucket < buckets; ++bucket) {
      const double launch_s = launch_when_ready(sim, state, rank, label, costs, factor, bucket);
      state.lanes_free->acquire();
      sg4::Actor::create("allreduce-" + std::to_string(rank) + "-" + std::to_string(bucket), sg4::this_actor::get_host(),
                         [&sim, index, label, bucket, launch_s] { lane_transfer(sim, index, label, bucket, launch_s); });
    }
  }
}


// "key:value" → key, after checking SimGrid knows the key (an unknown key would abort).
void apply_simgrid_config(const std::string& entry) {
  const auto colon = entry.find(':');
  if (colon == std::string::npos || colon == 0) {
    throw SimulationError("--cfg " + entry + ": expected KEY:VALUE, got no ':'");
  }
  const std::string key = entry.substr(0, colon);
  if (key == "contexts/nthreads" && entry.substr(colon + 1) != "1") {
    // The actors share state (join counters, per-rank event lists) without locks, relying on
    // SimGrid running one actor at a time; SimGrid 3.32 also crashed with 2 threads at W=64.
    throw SimulationError("--cfg " + entry + ": expected contexts/nthreads:1, the only value the replay supports");
  }
  try {
    (void)simgrid::config::is_default(key.c_str());
  } catch (const std::out_of_range&) {
    throw SimulationError("--cfg " + entry + ": expected a SimGrid configuration key, got unknown key '" + key + "'");
  }
  try {
    sg4::Engine::set_config(entry);
  } catch (const std::exception& error) {
    std::string reason = error.what();
    throw SimulationError("--cfg " + entry + ": " + reason.substr(0, reason.find('\n')));
  }
}

}  // namespace

void check_replay_options(const WorkloadModel& model, const ReplayOptions& options) {
  const int world = options.world_size > 0 ? options.world_size : model.world_size;
  if (world < 1) throw SimulationError("--world-size: expected at least 1 rank, got " + std::to_string(world));
  if (options.iterations < 1) {
    throw SimulationError("--iterations: expected at least 1, got " + std::to_string(options.iterations));
  }
  const PlatformSpec& platform = options.platform;
  const auto positive = [](double value) { return std::isfinite(value) && value > 0; };
  const auto non_negative = [](double value) { return std::isfinite(value) && value >= 0; };
  if (platform.kind == PlatformKind::Star) {
    if (!positive(platform.beta_bytes_per_s)) throw SimulationError("--bandwidth: expected a positive number of bytes/s");
    if (!non_negative(platform.alpha_s)) throw SimulationError("--latency: expected a non-negative number of seconds");
  }
  if (platform.kind == PlatformKind::TwoLevel) {
    if (platform.gpus_per_node < 1) throw SimulationError("--gpus-per-node: expected at least 1");
    if (!positive(platform.intra_bandwidth)) throw SimulationError("--intra-bandwidth: expected a positive number of bytes/s");
    if (!positive(platform.inter_bandwidth)) throw SimulationError("--inter-bandwidth: expected a positive number of bytes/s");
    if (!non_negative(platform.intra_latency_s)) throw SimulationError("--intra-latency: expected a non-negative number of seconds");
    if (!non_negative(platform.inter_latency_s)) throw SimulationError("--inter-latency: expected a non-negative number of seconds");
  }
  if (options.algorithm == AllreduceAlgorithm::Analytic &&
      (!positive(options.beta_bytes_per_s) || !non_negative(options.alpha_s))) {
    throw SimulationError("--allreduce analytic: expected a positive bandwidth and non-negative latency");
  }
  if (!non_negative(options.timeout_s)) throw SimulationError("--timeout: expected a non-negative number of seconds");
  if (!(options.compute_fraction_during_allreduce > 0 && options.compute_fraction_during_allreduce <= 1)) {
    throw SimulationError("compute fraction during all-reduces: expected a number in (0, 1], got " +
                          std::to_string(options.compute_fraction_during_allreduce));
  }
  if (!(options.overlap_bandwidth_fraction > 0 && options.overlap_bandwidth_fraction <= 1)) {
    throw SimulationError("overlap bandwidth fraction: expected a number in (0, 1], got " +
                          std::to_string(options.overlap_bandwidth_fraction));
  }
  if (options.allreduces_in_flight != 1 && options.allreduces_in_flight != 2) {
    throw SimulationError("--allreduces-in-flight: expected 1 or 2 all-reduces at once, got " +
                          std::to_string(options.allreduces_in_flight));
  }
  if (options.allreduces_in_flight == 2) {
    if (!(options.in_flight_gain > 0 && options.in_flight_gain <= 2)) {
      throw SimulationError("--allreduces-in-flight: expected two at once at a gain in (0, 2] of one's rate, got " +
                            std::to_string(options.in_flight_gain));
    }
    if (options.algorithm == AllreduceAlgorithm::Ring) {
      throw SimulationError("--allreduces-in-flight: expected --allreduce ring-agg, tree, analytic or auto (closed "
                            "forms), got ring (point-to-point messages, one all-reduce at a time)");
    }
    for (const std::string& entry : options.simgrid_config) {
      if (entry.rfind("network/", 0) == 0) {
        throw SimulationError("--allreduces-in-flight: expected the default network model (closed forms), got --cfg " +
                              entry);
      }
    }
  }
  for (const auto& [rank, factor] : options.slowdown) {
    if (rank < 0 || rank >= world) {
      throw SimulationError("--slowdown: expected a rank in 0.." + std::to_string(world - 1) + ", got " + std::to_string(rank));
    }
    if (!positive(factor)) throw SimulationError("--slowdown: expected a positive factor for rank " + std::to_string(rank));
  }
  try {
    options.skew.check_ranks(world);
  } catch (const trace::SkewError& error) {
    throw SimulationError(error.what());
  }
  for (const auto& costs : model.costs) {
    for (const auto& iteration : costs) {
      if (iteration.bucket_ready_s.size() != model.bucket_bytes.size()) {
        throw SimulationError("workload: bucket ready times do not match the bucket layout");
      }
    }
  }
}

ClassReplayResult replay_classes(const WorkloadModel& model, const ReplayOptions& options) {
  check_replay_options(model, options);
  const auto wall_start = std::chrono::steady_clock::now();
  const int world = options.world_size > 0 ? options.world_size : model.world_size;

  char program[] = "ddp-sim";
#if defined(__SANITIZE_ADDRESS__)
  // Under ASan (the asan preset) actors run as threads: SimGrid's default raw contexts switch
  // stacks behind ASan's back, so a timeout thrown in an actor was reported as a
  // stack-buffer-underflow on the actor's stack (github.com/google/sanitizers/issues/189).
  // SimGrid documents threads as its debugger-friendly factory; the factory is chosen when the
  // engine starts, so it goes on the engine's command line, after a quiet log (SimGrid logs the
  // change at INFO, and a CLI's error is one line).
  char quiet[] = "--log=root.thres:error";
  char threads[] = "--cfg=contexts/factory:thread";
  char* argv[] = {program, quiet, threads, nullptr};
  int argc = 3;
#else
  char* argv[] = {program, nullptr};
  int argc = 1;
#endif
  sg4::Engine engine(&argc, argv);
  // SimGrid logs every configuration change at INFO; only its errors matter here.
  xbt_log_control_set("root.thres:error");
  for (const auto& entry : kDefaultSimgridConfig) apply_simgrid_config(entry);
  for (const auto& entry : options.simgrid_config) apply_simgrid_config(entry);

  // The explicit ring sends rank-to-rank messages: its ranks are never interchangeable.
  RankClasses classes =
      group_identical_ranks(model, options, world, options.algorithm != AllreduceAlgorithm::Ring);
  const auto configured = [&options](const std::string& prefix) {
    return std::any_of(options.simgrid_config.begin(), options.simgrid_config.end(),
                       [&prefix](const std::string& entry) { return entry.rfind(prefix, 0) == 0; });
  };
  // Each actor's stack has a guard page, which splits its mapping in two; Linux allows a
  // process 65,530 mappings (vm.max_map_count), so beyond ~30,000 actors SimGrid failed with
  // "Failed to protect stack". Many actors go without guards (their stacks stay 8 MiB of
  // address space, touched only as deep as the replay's shallow calls go).
  // Per class: compute and comm, and with two lanes up to two transfer actors.
  const int actors_per_class = 2 + (options.allreduces_in_flight > 1 ? options.allreduces_in_flight : 0);
  if (actors_per_class * classes.size() > kGuardedActorsLimit && !configured("contexts/guard-size")) {
    apply_simgrid_config("contexts/guard-size:0");
  }

  // The closed forms know CM02's sharing without cross-traffic; another network model or
  // option is left to SimGrid's flows (network_phase.hpp).
  const bool network_reconfigured = configured("network/");
  const int participants = classes.size();
  // hosts[r]: rank r's host, when the whole platform is built. A built-in platform's routes
  // come from its description (routes.hpp): SimGrid 3.32 builds the two-level platform in
  // time quadratic in W, so it is built only when a message is simulated on it.
  std::vector<sg4::Host*> hosts;
  std::unique_ptr<Routes> routes;
  if (options.platform.kind == PlatformKind::File) {
    hosts = build_platform(options.platform, world);
    routes = simgrid_routes(hosts);
  } else {
    routes = platform_routes(options.platform, world);
  }
  Simulation sim{model,
                 options,
                 std::move(classes),
                 CommunicationGroup(*routes, participants, options.algorithm, options.alpha_s,
                                    options.beta_bytes_per_s, network_reconfigured, options.max_simulated_flows),
                 std::vector<RankState>(static_cast<std::size_t>(participants)),
                 {}};
  if (sim.paced_autograd()) {
    for (RankState& state : sim.ranks) {
      state.mutex = sg4::Mutex::create();
      state.changed = sg4::ConditionVariable::create();
    }
  }
  if (sim.lanes()) {
    // n in flight together: the gain for two, at overlap_bandwidth_fraction while any
    // autograd runs (contended_bytes' rule, applied as the state changes).
    sim.transfers = std::make_unique<PacedTransfers>([&sim](int in_flight) {
      const double busy = sim.autograd_running() ? sim.options.overlap_bandwidth_fraction : 1.0;
      return busy * (in_flight >= 2 ? sim.options.in_flight_gain : 1.0);
    });
    for (std::size_t bucket = 0; bucket < model.bucket_bytes.size(); ++bucket) {
      sim.bucket_joins.push_back(std::make_unique<JoinPoint>(participants));
    }
    for (RankState& state : sim.ranks) state.lanes_free = sg4::Semaphore::create(options.allreduces_in_flight);
  }
  routes.reset();
  const std::vector<NetworkPhase*> phases = sim.group.phases();
  const bool flows = std::any_of(phases.begin(), phases.end(),
                                 [](const NetworkPhase* phase) { return phase->method() == PhaseMethod::Flows; });
  const bool sends = options.algorithm == AllreduceAlgorithm::Ring || flows;
  if (sends && hosts.empty()) hosts = build_platform(options.platform, world);
  for (NetworkPhase* phase : phases) {
    if (phase->method() == PhaseMethod::Flows) phase->set_hosts(hosts);
  }
  std::vector<sg4::Host*> actor_hosts;  // per class
  if (hosts.empty()) {
    std::vector<int> first_ranks;
    for (const auto& members : sim.classes.members) first_ranks.push_back(members.front());
    actor_hosts = build_hosts_only(first_ranks);
  } else {
    for (const auto& members : sim.classes.members) actor_hosts.push_back(hosts[static_cast<std::size_t>(members.front())]);
  }
  for (int index = 0; index < participants; ++index) {
    const int rank = sim.classes.members[static_cast<std::size_t>(index)].front();
    sg4::Host* host = actor_hosts[static_cast<std::size_t>(index)];
    sg4::Actor::create("compute-" + std::to_string(rank), host, [&sim, index] { compute_actor(sim, index); });
    if (sim.lanes()) {
      sg4::Actor::create("comm-" + std::to_string(rank), host, [&sim, index] { lanes_comm_actor(sim, index); });
    } else {
      sg4::Actor::create("comm-" + std::to_string(rank), host, [&sim, index] { comm_actor(sim, index); });
    }
  }
  engine.run();

  ClassReplayResult result;
  result.simulated_end_s = sg4::Engine::get_clock();
  result.messages = sim.group.messages;
  result.failure = sim.failure;
  for (const auto& entry : sim.group.choices) result.allreduce_choices.push_back(entry.second);
  for (auto& state : sim.ranks) {
    std::stable_sort(state.events.begin(), state.events.end(),
                     [](const Event& a, const Event& b) { return a.t_ns < b.t_ns; });
    result.events.push_back(std::move(state.events));
  }
  result.classes = std::move(sim.classes);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

ReplayResult by_class(ClassReplayResult&& classes) {
  ReplayResult result;
  result.simulated_end_s = classes.simulated_end_s;
  result.wall_s = classes.wall_s;
  result.messages = classes.messages;
  result.failure = std::move(classes.failure);
  result.allreduce_choices = std::move(classes.allreduce_choices);
  result.events = std::move(classes.events);
  result.class_of = std::move(classes.classes.class_of);
  return result;
}

ReplayResult per_rank(ReplayResult result) {
  if (result.class_of.empty()) return result;
  const std::vector<std::vector<Event>> classes = std::move(result.events);
  const std::vector<int> class_of = std::move(result.class_of);
  result.class_of.clear();
  result.events.assign(class_of.size(), {});
  std::vector<bool> seen(classes.size(), false);
  for (std::size_t rank = 0; rank < class_of.size(); ++rank) {
    const auto index = static_cast<std::size_t>(class_of[rank]);
    const bool first = !seen[index];
    seen[index] = true;
    std::vector<Event>& events = result.events[rank];
    events.reserve(classes[index].size());
    for (const Event& event : classes[index]) {
      // A timeout stops the job at the first rank that sees it: one failure event.
      if (event.type == EventType::Failure && !first) continue;
      events.push_back(event);
      events.back().rank = static_cast<int>(rank);
    }
  }
  return result;
}

ReplayResult expand(ClassReplayResult&& classes) { return per_rank(by_class(std::move(classes))); }

ReplayResult replay(const WorkloadModel& model, const ReplayOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  ReplayResult result = expand(replay_classes(model, options));
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace ddpsim::sim
