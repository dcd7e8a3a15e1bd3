// Advice 3: what each rank's compute costs the job, like the OSDI'25 straggler study's
// what-if: replay with the rank made typical and see how much faster the job gets (advise.hpp).
#include <algorithm>
#include <numeric>

#include "ddpsim/sim/advise.hpp"
#include "stats.hpp"

namespace ddpsim::sim {

namespace {

// The model with each rank for which `replaced(rank)` holds given, per iteration, the typical
// rank's compute.
template <typename Replaced>
WorkloadModel with_typical_compute_where(const WorkloadModel& model, Replaced replaced) {
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
      if (replaced(static_cast<int>(r))) typical.costs[r][k] = lower_median;
    }
  }
  return typical;
}

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

// Per replicate (runs 1..), each rank's saving minus the median rank's.
std::vector<double> excess_over_median(const std::vector<std::vector<double>>& saved, std::size_t rank) {
  std::vector<double> excess;
  for (std::size_t run = 1; run < saved.front().size(); ++run) {
    std::vector<double> costs;
    for (const auto& per_rank : saved) costs.push_back(per_rank[run]);
    excess.push_back(saved[rank][run] - median_of(costs));
  }
  return excess;
}

double median_fraction(std::vector<double> fractions) {
  std::sort(fractions.begin(), fractions.end());
  return fractions.empty() ? 0 : fractions[(fractions.size() - 1) / 2];
}

}  // namespace

WorkloadModel with_typical_compute(const WorkloadModel& model, int rank) {
  return with_typical_compute_where(model, [rank](int r) { return rank < 0 || r == rank; });
}

WorkloadModel with_typical_compute_except(const WorkloadModel& model, int rank) {
  return with_typical_compute_where(model, [rank](int r) { return r != rank; });
}

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
  const std::vector<double> all_typical =
      run_means(bootstrap_replays(with_typical_compute(setup.model, -1), setup.options, runs, seed));
  advice.all = cost_of(-1, savings(base, all_typical), advice.iterations, advice.replayed_mean_s);
  // Alone: every other rank typical, this one as recorded, against every rank typical; what
  // the rank costs where no other slow rank hides it (two ranks slowed alike each save nothing
  // when made typical one at a time).
  std::vector<std::vector<double>> alone;  // per rank, per run
  if (world > 1) {
    for (int rank = 0; rank < world; ++rank) {
      alone.push_back(savings(run_means(bootstrap_replays(with_typical_compute_except(setup.model, rank),
                                                          setup.options, runs, seed)),
                              all_typical));
    }
  }
  // A straggler costs more than nothing and more than the typical rank costs, both beyond
  // the bootstrap's noise (the excess is paired: the same replicate's typical cost), and its
  // cost exceeds the typical rank's by a share of the iteration that noise does not explain
  // (kMinStragglerShare). The typical rank's own cost is what per-iteration noise alone
  // saves: in an iteration where it is not the lower median its compute is replaced too.
  // The test is made on the rank's cost among the others as recorded, or alone.
  std::vector<double> fractions, alone_fractions;
  for (const RankCost& cost : advice.ranks) fractions.push_back(cost.fraction);
  for (const auto& per_run : alone) {
    alone_fractions.push_back(advice.replayed_mean_s > 0 ? per_run.front() / advice.replayed_mean_s : 0);
  }
  const double typical_fraction = median_fraction(fractions);
  const double typical_alone_fraction = median_fraction(alone_fractions);
  for (int rank = 0; rank < world; ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    RankCost& cost = advice.ranks[r];
    cost.excess_interval_s = interval_of(excess_over_median(saved, r));
    cost.excess_fraction = cost.fraction - typical_fraction;
    cost.straggler = world > 1 && cost.per_iteration_interval_s.low > 0 && cost.excess_interval_s.low > 0 &&
                     cost.excess_fraction >= kMinStragglerShare;
    if (alone.empty()) continue;
    cost.alone_fraction = alone_fractions[r];
    cost.alone_excess_interval_s = interval_of(excess_over_median(alone, r));
    cost.alone_excess_fraction = cost.alone_fraction - typical_alone_fraction;
    const Interval alone_interval = interval_of({alone[r].begin() + 1, alone[r].end()});
    cost.straggler = cost.straggler || (alone_interval.low > 0 && cost.alone_excess_interval_s.low > 0 &&
                                        cost.alone_excess_fraction >= kMinStragglerShare);
  }
  return advice;
}

}  // namespace ddpsim::sim
