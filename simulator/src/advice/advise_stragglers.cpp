// Advice 3: what each rank's compute costs the job, like the OSDI'25 straggler study's
// what-if: replay with the rank made typical and see how much faster the job gets (advise.hpp).
#include <algorithm>
#include <numeric>

#include "ddpsim/sim/advise.hpp"
#include "stats.hpp"

namespace ddpsim::sim {

WorkloadModel with_typical_compute(const WorkloadModel& model, int rank) {
  WorkloadModel typical = model;
  const std::size_t ranks = model.costs.size();
  if (ranks == 0) return typical;
  const std::size_t iterations = model.costs.front().size();
  std::vector<std::size_t> order(ranks);
  for (std::size_t k = 0; k < iterations; ++k) {
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Ordered by what makes a rank late to the all-reduces: its compute and its stalls.
    const auto late_s = [&](std::size_t r) { return model.costs[r].at(k).compute_total_s() + model.costs[r].at(k).stall_s; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return late_s(a) < late_s(b); });
    const RankIterationCosts& lower_median = model.costs[order[(ranks - 1) / 2]].at(k);
    for (std::size_t r = 0; r < ranks; ++r) {
      if (rank < 0 || static_cast<std::size_t>(rank) == r) typical.costs[r][k] = lower_median;
    }
  }
  return typical;
}

namespace {

std::vector<double> run_means(const std::vector<RunOutcome>& outcomes) {
  std::vector<double> means;
  for (const RunOutcome& outcome : outcomes) means.push_back(mean_of(outcome.iteration_times_s));
  return means;
}

// Per run (0: in order, then the paired bootstrap replicates), the mean iteration time saved.
std::vector<double> savings(const std::vector<double>& base, const std::vector<double>& replaced) {
  std::vector<double> saved(base.size());
  for (std::size_t run = 0; run < base.size(); ++run) saved[run] = base[run] - replaced[run];
  return saved;
}

RankCost cost_of(int rank, const std::vector<double>& saved, double iterations, double mean_s) {
  RankCost cost;
  cost.rank = rank;
  cost.per_iteration_s = saved.front();
  cost.total_s = cost.per_iteration_s * iterations;
  cost.fraction = mean_s > 0 ? cost.per_iteration_s / mean_s : 0;
  cost.per_iteration_interval_s = interval_of({saved.begin() + 1, saved.end()});
  return cost;
}

}  // namespace

StragglerAdvice attribute_stragglers(const AdviceSetup& setup, int runs, std::uint64_t seed) {
  StragglerAdvice advice;
  advice.model = setup.model_description + "; each rank's compute replaced per iteration by the lower-median rank's";
  advice.iterations = static_cast<int>(setup.options.iterations);
  const std::vector<double> base = run_means(bootstrap_replays(setup.model, setup.options, runs, seed));
  advice.replayed_mean_s = base.front();
  const int world = static_cast<int>(setup.model.costs.size());
  std::vector<std::vector<double>> saved;  // per rank, per run
  for (int rank = 0; rank < world; ++rank) {
    saved.push_back(savings(base, run_means(bootstrap_replays(with_typical_compute(setup.model, rank),
                                                              setup.options, runs, seed))));
    advice.ranks.push_back(cost_of(rank, saved.back(), advice.iterations, advice.replayed_mean_s));
  }
  advice.all = cost_of(-1, savings(base, run_means(bootstrap_replays(with_typical_compute(setup.model, -1),
                                                                     setup.options, runs, seed))),
                       advice.iterations, advice.replayed_mean_s);
  // A straggler costs more than nothing and more than the typical rank costs, both beyond
  // the bootstrap's noise (the excess is paired: the same replicate's typical cost), and its
  // cost exceeds the typical rank's by a share of the iteration that noise does not explain
  // (kMinStragglerShare). The typical rank's own cost is what per-iteration noise alone
  // saves: in an iteration where it is not the lower median its compute is replaced too.
  std::vector<double> fractions;
  for (const RankCost& cost : advice.ranks) fractions.push_back(cost.fraction);
  std::sort(fractions.begin(), fractions.end());
  const double typical_fraction = fractions.empty() ? 0 : fractions[(fractions.size() - 1) / 2];
  for (int rank = 0; rank < world; ++rank) {
    std::vector<double> excess;
    for (std::size_t run = 1; run < base.size(); ++run) {
      std::vector<double> costs;
      for (const auto& per_rank : saved) costs.push_back(per_rank[run]);
      excess.push_back(saved[static_cast<std::size_t>(rank)][run] - median_of(costs));
    }
    RankCost& cost = advice.ranks[static_cast<std::size_t>(rank)];
    cost.excess_interval_s = interval_of(excess);
    cost.excess_fraction = cost.fraction - typical_fraction;
    cost.straggler = world > 1 && cost.per_iteration_interval_s.low > 0 && cost.excess_interval_s.low > 0 &&
                     cost.excess_fraction >= kMinStragglerShare;
  }
  return advice;
}

}  // namespace ddpsim::sim
