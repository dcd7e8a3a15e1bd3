// Finding the rank files of a trace directory (internal to the library).
#pragma once

#include <map>
#include <string>

namespace ddpsim::trace::detail {

// Every "rank-R.meta.json" and "rank-R.events.csv" in `dir`, by rank (one path per rank).
std::multimap<int, std::string> rank_files_in(const std::string& dir);

}  // namespace ddpsim::trace::detail
