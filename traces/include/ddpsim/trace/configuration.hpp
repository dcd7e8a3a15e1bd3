// What makes two measured runs runs of one configuration: the settings of their metadata that
// shape the job (world size, backend, workload, bucket caps, timeout, injected skew, DDP
// settings), not when, where or by which build they ran, nor the seed of their random stalls.
#pragma once

#include <string>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace {

// "" when `run` and `reference` ran one configuration; otherwise the first setting that
// differs, as "NAME VALUE, WHOSE VALUE" (with whose = "the replayed trace's":
// "bucket_cap_bytes 1048576, the replayed trace's 26214400"), for a one-line error.
std::string configuration_difference(const RunMeta& run, const RunMeta& reference, const std::string& whose);

}  // namespace ddpsim::trace
