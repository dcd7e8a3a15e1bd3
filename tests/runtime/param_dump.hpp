// Reading ddp-train's --dump-grads / --dump-params files, shared by the runtime tests.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ddpsim::runtime::testing {

// "<kind> <index> <name> <numel> <values...>" per line, keyed by (kind, parameter index).
using Dump = std::map<std::pair<std::string, int>, std::vector<double>>;

Dump read_dump(const std::string& path);
double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace ddpsim::runtime::testing
