// What an [advice] experiment measures besides the tools' own outputs: which ranks a run
// slowed (the truth the named stragglers are checked against), how long a hung rank took to be
// detected, and the rows of advice.csv.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spec.hpp"

namespace ddpsim::experiment {

// The ranks a --slowdown setting slows (factor > 1), ascending; "all=F" names every rank below
// `world_size`. Throws std::runtime_error for a flag not of the form RANK=F.
std::vector<int> slowed_ranks(const SkewSetting& slowdown, int world_size);

// The hang's stall in whole milliseconds: `factor` x the advised timeout, rounded up.
long hang_stall_ms(double timeout_s, double factor);

// From a hung run's trace: the first `failure` event of any rank minus rank `hang_rank`'s
// first `delay` event (both on one machine's monotonic clock, rank-R.events.csv's t_ns), in
// seconds; nullopt when either is missing. Hosts of the testbed share the machine's clock.
std::optional<double> detection_time_s(const std::string& trace_dir, int world_size, int hang_rank);

// advice.csv: one row per job, the columns in this order (ddpsim.bench.advice reads them by name).
const std::vector<std::string>& advice_columns();
using AdviceRow = std::map<std::string, std::string>;
// The header line, and one row's line (columns it lacks empty; RFC 4180 quoting).
std::string advice_header_line();
std::string advice_row_line(const AdviceRow& row);
// Ranks as "1;3" ("" for none): one CSV field.
std::string rank_list(const std::vector<int>& ranks);

}  // namespace ddpsim::experiment
