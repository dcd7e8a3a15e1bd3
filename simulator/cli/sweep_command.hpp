// `ddp-sim sweep TRACE_DIR --out FILE.csv`: every (bucket cap, slowdown, world size) point in
// parallel processes, resumable (sim/sweep.hpp). Exit 1 when any point failed. `--shard I/N`
// (or `slurm`) simulates one of N shards; `--merge SHARD.csv...` joins shards' CSVs in grid order.
#pragma once

#include "command.hpp"

namespace ddpsim::cli {

Command add_sweep_command(CLI::App& app);

}  // namespace ddpsim::cli
