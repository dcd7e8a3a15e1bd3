// Grouping the ranks that replay the same thing (replay_classes.hpp).
#include "replay/replay_classes.hpp"

#include <cstring>
#include <map>

#include "ddpsim/trace/splitmix.hpp"

namespace ddpsim::sim {

namespace {

std::uint64_t mix(std::uint64_t value) { return trace::splitmix64(value); }

double slowdown_of(const ReplayOptions& options, int rank) {
  const auto found = options.slowdown.find(rank);
  return found == options.slowdown.end() ? 1.0 : found->second;
}

}  // namespace

int source_rank(const WorkloadModel& model, const ReplayOptions& options, int rank, std::int64_t iteration) {
  const int measured = static_cast<int>(model.costs.size());
  if (rank < measured) return rank;
  const std::uint64_t draw = mix(mix(mix(options.rank_copy_seed) ^ static_cast<std::uint64_t>(rank)) ^
                                 static_cast<std::uint64_t>(iteration));
  return static_cast<int>(draw % static_cast<std::uint64_t>(measured));
}

std::int64_t source_iteration(const WorkloadModel& model, const ReplayOptions& options, int rank,
                              std::int64_t iteration) {
  const auto at = static_cast<std::uint64_t>(iteration);
  if (options.independent_copies && rank >= static_cast<int>(model.costs.size())) {
    // Its own stream ("iter" in ASCII), apart from the one source_rank draws the rank from.
    const std::uint64_t stream = mix(mix(options.rank_copy_seed ^ 0x69746572ULL) ^ options.resample_seed);
    return static_cast<std::int64_t>(mix(mix(stream ^ static_cast<std::uint64_t>(rank)) ^ at) >> 1);
  }
  if (options.resample_seed == 0) return iteration;
  return static_cast<std::int64_t>(mix(mix(options.resample_seed) ^ at) >> 1);
}

RankClasses group_identical_ranks(const WorkloadModel& model, const ReplayOptions& options, int world_size,
                                  bool merge) {
  RankClasses classes;
  classes.class_of.resize(static_cast<std::size_t>(world_size));
  // Everything the actors of a rank read that depends on the rank: its slowdown, then per
  // iteration the measured rank it replays and its two stalls (their sum is slept, whether
  // one is random names the delay event).
  std::map<std::vector<std::int64_t>, int> class_by_inputs;
  std::vector<std::int64_t> inputs;
  for (int rank = 0; rank < world_size; ++rank) {
    int found = -1;
    if (merge) {
      inputs.clear();
      const double factor = slowdown_of(options, rank);
      std::int64_t factor_bits = 0;
      std::memcpy(&factor_bits, &factor, sizeof factor);
      inputs.push_back(factor_bits);
      for (std::int64_t iteration = 0; iteration < options.iterations; ++iteration) {
        const std::int64_t label = model.first_source_iteration() + iteration;
        inputs.push_back(source_rank(model, options, rank, iteration));
        if (options.independent_copies) inputs.push_back(source_iteration(model, options, rank, iteration));
        inputs.push_back(options.skew.fixed_delay_ns(rank, label));
        inputs.push_back(options.skew.random_delay_ns(rank, label));
      }
      const auto [entry, inserted] = class_by_inputs.try_emplace(inputs, classes.size());
      if (!inserted) found = entry->second;
    }
    if (found < 0) {
      found = classes.size();
      classes.members.emplace_back();
    }
    classes.class_of[static_cast<std::size_t>(rank)] = found;
    classes.members[static_cast<std::size_t>(found)].push_back(rank);
  }
  return classes;
}

}  // namespace ddpsim::sim
