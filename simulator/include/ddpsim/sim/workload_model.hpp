// What one DDP iteration costs on each rank, extracted from a recorded trace.
//
// The simulator replays computation as measured durations (it has no model of the GPU/CPU)
// and only simulates communication. A rank's iteration is cut at the trace's events into
// phases; the gradient buckets become ready at measured offsets from backward_begin.
//
//   iteration_begin ─ before_forward ─ forward ─ before_backward ─ backward_begin (T0)
//     T0 + bucket_ready_s[b]: bucket b may be all-reduced (one stream, bucket order)
//     T0 + backward_compute_s: autograd done; then wait for the last all-reduce
//   max(compute done, last all-reduce end) ─ backward_tail ─ backward_end (the reducer's
//     copies back, placed by the replay after its own all-reduces: finalize_exposed_s)
//     ─ before_optimizer ─ optimizer ─ after_optimizer ─ iteration_end
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::sim {

// How measured compute durations become simulated ones.
enum class ComputeMode {
  Median,        // per rank and phase, the median over the chosen iterations
  Mean,          // the mean instead
  PerIteration,  // simulated iteration k replays source iteration k (cycling); ddp-sim's default
};

const char* to_string(ComputeMode mode);
std::optional<ComputeMode> compute_mode_from_string(const std::string& name);

// One rank's costs for one iteration, in seconds.
struct RankIterationCosts {
  // The stall ddp-train injected at the iteration's start (--delay, --delay-dist: its `delay`
  // events of kind delay/distribution): a sleep, not compute, so a slowdown or --cores does not
  // stretch it; replayed where it was, before before_forward.
  double stall_s = 0;
  double before_forward_s = 0;    // iteration_begin → forward_begin, less the stall
  double forward_s = 0;           // forward_begin → forward_end
  double before_backward_s = 0;   // forward_end → backward_begin
  double backward_compute_s = 0;  // backward_begin → last grad_ready / bucket_ready
  std::vector<double> bucket_ready_s;  // per bucket of the layout, offset from backward_begin
  std::vector<double> grad_ready_s;    // per parameter, offset from backward_begin (-1: unknown)
  double backward_tail_s = 0;     // max(compute done, the last all-reduce's end on its first rank) → backward_end
  // The reducer's finalize copies exposed in this recorded iteration at the trace's fitted cost
  // (WorkloadModel::finalize_seconds_per_byte): a replay puts its own timeline's in their place
  // (backward_tail_s − this + its own). See Note [reducer finalize] in docs/model.md.
  double finalize_exposed_s = 0;
  double before_optimizer_s = 0;  // backward_end → optimizer_begin
  double optimizer_s = 0;         // optimizer_begin → optimizer_end
  double after_optimizer_s = 0;   // optimizer_end → iteration_end
  // Evaluation after iteration_end (ddp-train --eval-every): not training compute, replayed
  // as its own phase between this iteration and the next; 0 when there was none. Its
  // eval_end's message (CORRECT/TOTAL) is carried into the predicted trace.
  double eval_after_s = 0;
  std::string eval_message;

  // The iteration's compute time alone (no communication, no stall).
  double compute_total_s() const;
};

struct WorkloadModel {
  int world_size = 0;
  // The bucket layout replayed: the trace's last bucket assignment (param indices per bucket)
  // and each bucket's bytes on the wire.
  std::vector<std::vector<int>> buckets;
  std::vector<std::int64_t> bucket_bytes;
  // The reducer's finalize copies each bucket's gradients back at this cost, fitted to the
  // trace's tails after the last all-reduce (0: no tail to fit, the tail replayed as measured).
  double finalize_seconds_per_byte = 0;
  // A one-rank trace's all-reduces cross no network: each window is the rank's own work around
  // the collective (a comm hook's averaging pass over the bucket, the process group's call),
  // fitted per byte; the replay starts each transfer this long per byte after its launch. 0 for
  // a trace of more ranks, whose network fit already holds it, and for NCCL's (a kernel on the
  // stream). Note [local all-reduce work].
  double local_seconds_per_byte = 0;
  // costs[rank][k]: one entry per rank for Median/Mean; one per source iteration for
  // PerIteration (simulated iteration i uses entry i mod size).
  std::vector<std::vector<RankIterationCosts>> costs;
  // The source iterations the costs were taken from.
  std::vector<std::int64_t> source_iterations;
  ComputeMode mode = ComputeMode::Median;
  // Rank 0's metadata, the template of the predicted trace's metadata.
  trace::RunMeta source_meta;
  std::string source_dir;

  const RankIterationCosts& costs_for(int rank, std::int64_t simulated_iteration) const;
  // Simulated iteration k is numbered first_source_iteration() + k in the predicted trace,
  // so that with per-iteration compute it carries the number of the iteration it replays.
  std::int64_t first_source_iteration() const {
    return source_iterations.empty() ? 0 : source_iterations.front();
  }
};

// Thrown when a valid trace still cannot be replayed (e.g. no complete iteration).
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Builds the model from complete iterations (every rank) under the trace's last layout,
// skipping iteration 0 (one bucket, bucket rebuild) and gradient-accumulation (no_sync)
// iterations when others exist. Missing optional events (e.g. no forward_* recorded) become
// zero-length phases. With compute_fraction_during_allreduce < 1, autograd is taken to have
// run at that fraction of its rate alone while the collective transferred (from the last
// rank's all-reduce begin to the end, collective_windows), and its gradient and bucket ready
// offsets are autograd's time alone: the replay slows it again only where its own all-reduces
// run (ReplayOptions::compute_fraction_during_allreduce).
// With core_slowdown (s(k), ReplayOptions::core_slowdown), the trace's
// ranks shared one machine's cores: forward, autograd's offsets and the optimizer step become
// the work done at the pace they allowed each other, the integral of s(W) / s(k(t)) over the
// phase, k(t) the trace's ranks computing at t, W its world size. A replay paced by the same s
// gives the measured lengths back where the ranks compute as they did (a slowed or stalled
// trace's lone rank included) and moves them only where a what-if moves the ranks. With both,
// an instant of autograd beside a transfer counts `fraction` of the pace s(W) / s(k(t)).
WorkloadModel extract_workload(const trace::Trace& trace, ComputeMode mode,
                               double compute_fraction_during_allreduce = 1,
                               const std::function<double(double)>& core_slowdown = {});

// Every compute phase of every rank and iteration, its gradient and bucket ready offsets and
// its evaluation, times `factor` (> 0). Stalls (stall_s) and communication are not compute and stay.
void stretch_compute(WorkloadModel& model, double factor);
// Only the steps between the compute phases (DDP's hooks, the reducer's finalisation, the
// evaluation), times `factor`: what --core-sharing paced leaves to a uniform stretch, as it
// paces forward, autograd and the optimizer itself.
void stretch_steps(WorkloadModel& model, double factor);

// Ranks that share the cores of one machine (loopback, or testbed hosts that are namespaces of
// one machine) slow each other's compute once there are more ranks than cores. The stretch of a
// what-if with `world_size` ranks over a trace measured with `trace_world_size` ranks, all on
// `cores` cores: max(1, world_size / cores) / max(1, trace_world_size / cores). `cores` may be a
// fraction: effective cores (ReplayRequest::cores), so that 1 -> 2 ranks on a 2-core machine
// whose two ranks slow each other by 1.2x is stretched 1.2x. A uniform model:
// it ignores that a rank waiting on the network leaves its core to others (so it overstates the
// stretch of communication-bound jobs) and the CPU Gloo's copies take (so it understates it).
double shared_cores_stretch(double cores, int trace_world_size, int world_size);
// s(k) of shared_cores_stretch for a real number of ranks k computing at once: max(1, k / cores).
double shared_cores_slowdown(double cores, double ranks);

// The same stretch from co-running measured at several rank counts, for a machine whose ranks
// slow each other more as more share it (time slices evict each other's caches): k ranks at
// once each run k / C(k) times slower than one alone, C(k) being
// experiments/peer/corun_bench.sh --copies k's effective cores, `effective_cores` mapping k >= 2
// to C(k) in (0, k] (C(1) = 1). Between measured counts C is interpolated linearly in k; past the
// largest, the ranks time-share its C. The stretch is s(world_size) / s(trace_world_size) with
// s(k) = k / C(k); {2: N} with 1 <= N <= 2 gives shared_cores_stretch(N, ...) for every k.
double corun_stretch(const std::map<int, double>& effective_cores, int trace_world_size, int world_size);

// s(k) of corun_stretch for a real number of ranks k computing at once (a rank slowed xF by
// sleeps computes 1/F of the time: it counts 1/F); 1 for k <= 1.
double corun_slowdown(const std::map<int, double>& effective_cores, double ranks);

// Compute's pace with `computing` ranks at once on shared cores, relative to its pace with
// `trace_ranks` at once: s(trace_ranks) / s(computing), s one of the two above. What a trace is
// read at (extract_workload's core_slowdown) and the paced replay runs at
// (ReplayOptions::core_slowdown): one formula, so the one inverts the other.
double shared_core_pace(const std::function<double(double)>& core_slowdown, double trace_ranks, double computing);

}  // namespace ddpsim::sim
