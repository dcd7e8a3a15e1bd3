// Ranks that replay exactly the same thing, simulated once (replay.cpp).
//
// A rank's replay is fixed by what it computes (the measured rank it replays in each
// iteration), its slowdown and its stalls. Every all-reduce model but the explicit ring
// treats the ranks alike: all join, the collective's network phase is global (every
// rank's flows start together and every rank leaves with the slowest), so two ranks with
// the same inputs have the same timeline to the nanosecond. They are one class, played by
// one pair of actors; the other ranks' traffic is still put on the network (collectives.hpp).
// At W = 65,536 ranks replaying one iteration of a 2-rank trace that is 2 classes instead
// of 131,072 actors. The result stays per class up to the report (Note [ranks as classes] in
// docs/model.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddpsim/sim/replay.hpp"

namespace ddpsim::sim {

struct RankClasses {
  std::vector<int> class_of;              // rank → class
  std::vector<std::vector<int>> members;  // class → its ranks, ascending; [0] plays the class
  int size() const { return static_cast<int>(members.size()); }
};

// The measured rank that simulated rank `rank` replays in simulated iteration `iteration`:
// itself when it was measured, else one drawn from (rank_copy_seed, rank, iteration), so that
// ranks beyond the trace follow the measured ranks' distribution without copying one
// rank's pattern W/W_trace times.
int source_rank(const WorkloadModel& model, const ReplayOptions& options, int rank, std::int64_t iteration);

// The measured iteration (an index into the model's per-iteration costs, WorkloadModel::costs_for
// wraps it) that simulated rank `rank` replays in simulated iteration `iteration`: the
// iteration itself, or with resample_seed a bootstrap draw shared by every rank; a rank
// beyond the trace with independent_copies draws its own (ReplayOptions::independent_copies).
std::int64_t source_iteration(const WorkloadModel& model, const ReplayOptions& options, int rank,
                              std::int64_t iteration);

// Classes of identical ranks, numbered in order of their first rank (so that when no two
// ranks are alike, class r is rank r). With `merge` false every rank is its own class
// (the explicit ring sends rank-to-rank messages: its ranks are not interchangeable).
RankClasses group_identical_ranks(const WorkloadModel& model, const ReplayOptions& options, int world_size,
                                  bool merge);

// A replay as simulated: the events of each class's first rank. replay_isolated's child
// sends this through its pipe, not W copies of it.
struct ClassReplayResult {
  RankClasses classes;
  std::vector<std::vector<trace::Event>> events;  // per class, sorted by t_ns
  double simulated_end_s = 0;
  double wall_s = 0;
  std::int64_t messages = 0;
  std::string failure;
  std::vector<AllreduceChoice> allreduce_choices;  // ReplayResult's
};

// replay() before its result is copied out to every rank (replay.cpp).
ClassReplayResult replay_classes(const WorkloadModel& model, const ReplayOptions& options);
// The result kept per class (ReplayResult::class_of).
ReplayResult by_class(ClassReplayResult&& classes);
// Every rank gets its class's events under its own number; a failure stays with the rank
// that saw it, the class's first (the run stopped there): per_rank(by_class(classes)).
ReplayResult expand(ClassReplayResult&& classes);

}  // namespace ddpsim::sim
