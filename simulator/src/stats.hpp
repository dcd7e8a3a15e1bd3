// The simulator's statistics are the trace library's (one definition of the median).
#pragma once

#include "ddpsim/trace/stats.hpp"

namespace ddpsim::sim {

using trace::mean_of;
using trace::median_of;

}  // namespace ddpsim::sim
