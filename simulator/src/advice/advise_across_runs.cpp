// The three answers of several runs of one configuration, side by side (advise.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ddpsim/sim/advise.hpp"

namespace ddpsim::sim {

AdviceAcrossRuns advice_across_runs(const std::vector<Advice>& runs) {
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  AdviceAcrossRuns across;
  across.safe_timeout_s = kNone;
  if (runs.empty()) return across;
  std::size_t world = 0;  // the widest run's ranks (runs of one configuration have as many)
  for (const Advice& run : runs) world = std::max(world, run.stragglers.ranks.size());
  across.straggler_runs.assign(world, 0);
  for (const Advice& run : runs) {
    across.trace_dirs.push_back(run.trace_dir);
    across.recommended_caps_mb.push_back(run.bucket.available ? run.bucket.recommended_cap_mb : kNone);
    const double timeout_s = run.timeout.available ? run.timeout.timeout_s : kNone;
    across.timeouts_s.push_back(timeout_s);
    // The largest timeout any run needed: a shorter one would have fired falsely on that run.
    if (!std::isnan(timeout_s) && !(timeout_s <= across.safe_timeout_s)) across.safe_timeout_s = timeout_s;
    std::vector<int> named;
    for (const RankCost& cost : run.stragglers.ranks) {
      if (!cost.straggler) continue;
      named.push_back(cost.rank);
      ++across.straggler_runs.at(static_cast<std::size_t>(cost.rank));
    }
    across.stragglers.push_back(named);
  }
  const double advised_cap = across.recommended_caps_mb.front();
  across.runs_with_advised_cap = static_cast<int>(std::count(across.recommended_caps_mb.begin(),
                                                             across.recommended_caps_mb.end(), advised_cap));
  return across;
}

}  // namespace ddpsim::sim
