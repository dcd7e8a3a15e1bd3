// What a replay will cost before it runs: its peak memory and wall time, from the prepared
// request alone, so that a request that cannot fit (10^9 ranks on a laptop, a sweep point in a
// SLURM job's cgroup) is refused in one line before anything that grows with the world size is
// allocated. Nothing here allocates per rank: the counts are closed forms.
//
// The estimate is counts of what the replay builds (ReplaySize) times bytes and seconds per
// thing measured on the replay as it is built today (resource_estimate.cpp). A replay keeps its
// result per class of identical ranks (Note [ranks as classes] in docs/model.md): per rank only
// its class's number and its iteration times in the report, unless more is asked for
// (RankOutputs). When the replay stops or starts building something per rank,
// change the count in replay_size, not the coefficient: a coefficient is the cost of one thing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddpsim/sim/prepared_replay.hpp"
#include "ddpsim/trace/memory_limit.hpp"

namespace ddpsim::sim {

// What a caller keeps of every rank beyond its class's number and iteration times.
struct RankOutputs {
  bool events = false;  // every rank's events: --out writes them, advise's replays expand them
  bool json = false;    // a JSON report, which lists every rank's iteration times (--json)
};

// What one replay run builds.
struct ReplaySize {
  std::int64_t ranks = 0;       // simulated world size W
  RankOutputs outputs;
  std::int64_t classes = 0;     // classes of identical ranks, an upper bound (replay_classes.hpp)
  std::int64_t iterations = 0;  // simulated
  std::int64_t events_per_rank_iteration = 0;  // trace events one rank records per iteration
  double rank_iterations = 0;   // ranks × iterations: each rank's iteration times in the report
  double rank_events = 0;       // with outputs.events: every rank's events, in the expanded result and the predicted trace
  double class_events = 0;      // events the simulated classes record
  double actors = 0;            // SimGrid actors (each with a stack of stack_bytes of address space)
  double hosts = 0;             // SimGrid hosts and links built (the whole platform when messages are simulated)
  double messages = 0;          // point-to-point messages simulated (the explicit ring's)
  double message_pairs = 0;     // messages × flows in flight beside each (SimGrid's sharing solve)
  double stack_bytes = 0;       // one actor's stack (SimGrid's contexts/stack-size)
};

ReplaySize replay_size(const WorkloadModel& model, const ReplayOptions& options, RankOutputs outputs = {});

struct ResourceEstimate {
  ReplaySize size;
  int runs = 1;
  double resident_bytes = 0;       // peak resident memory of the largest process of the replay
  double address_space_bytes = 0;  // its peak mapped address space (what ulimit -v bounds)
  double bytes_per_rank = 0;       // of resident_bytes, what each simulated rank adds
  double wall_s = 0;               // all runs, one after another
  int trace_world_size = 0;        // the measured ranks (a larger size.ranks is a --world-size what-if)
  std::string trace_dir;
  // What a refusal names first; empty: --world-size W, else --iterations N, else the trace.
  std::string subject;
};

// `runs` runs of `prepared` (they run one at a time, so memory is one run's, time all of theirs).
ResourceEstimate estimate_replay(const PreparedReplay& prepared, int runs, RankOutputs outputs = {});
// The same from the model and options, `trace_events` the measured trace's events.
ResourceEstimate estimate_replay(const WorkloadModel& model, const ReplayOptions& options, double trace_events, int runs,
                                 RankOutputs outputs = {});

// RequestError in one line when `estimate`, run `processes` at once, exceeds one of `limits`
// (trace::memory_limits): names what drives it (--world-size W, else --iterations N, else the
// trace), the estimate, the limit and its source, and what to do. `what`: "the replay",
// "the sweep's largest point", ...
void check_fits(const ResourceEstimate& estimate, const std::vector<trace::MemoryLimit>& limits, const std::string& what,
                int processes = 1);

// "12 s", "3.5 min", "2.1 h", "4.0 days".
std::string duration_text(double seconds);

}  // namespace ddpsim::sim
