// A sweep's shards (sweep.hpp): which points one of N jobs simulates, and the --shard syntax,
// "I/N" or "slurm" (the job array task this process runs in).
#include <cerrno>
#include <cstdlib>
#include <string>

#include "ddpsim/sim/sweep.hpp"

namespace ddpsim::sim {
namespace {

// A whole decimal int, nothing around it (strtol alone accepts " 3", "3x" and overflow).
bool parse_int(const std::string& text, int& value) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  value = std::stoi(text);
  return true;
}

SweepShard from_slurm(const std::function<const char*(const char*)>& env) {
  const char* id = env("SLURM_ARRAY_TASK_ID");
  const char* count = env("SLURM_ARRAY_TASK_COUNT");
  if (id == nullptr || count == nullptr) {
    throw RequestError(
        "--shard slurm: expected SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (a task of sbatch --array=0-N-1), "
        "got them unset");
  }
  const char* min = env("SLURM_ARRAY_TASK_MIN");
  const char* step = env("SLURM_ARRAY_TASK_STEP");
  int task = 0;
  int tasks = 0;
  int first = 0;
  int stride = 1;
  if (!parse_int(id, task) || !parse_int(count, tasks) || (min != nullptr && !parse_int(min, first)) ||
      (step != nullptr && !parse_int(step, stride))) {
    throw RequestError(std::string("--shard slurm: expected whole numbers in SLURM_ARRAY_TASK_*, got ID '") + id +
                       "' COUNT '" + count + "'");
  }
  // A shard's index is its task's offset in the array, so the array must be one contiguous
  // range: with --array=0-7:2 or --array=1,5 the offsets would leave shards out.
  if (stride != 1 || task < first || task - first >= tasks) {
    throw RequestError("--shard slurm: expected a contiguous job array (--array=0-N-1), got task " +
                       std::to_string(task) + " of " + std::to_string(tasks) + " from " + std::to_string(first) +
                       " in steps of " + std::to_string(stride));
  }
  return {task - first, tasks};
}

}  // namespace

std::vector<SweepPoint> sweep_points(const SweepGrid& grid, const SweepShard& shard) {
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
    throw RequestError("--shard: expected I/N with 0 <= I < N, got " + std::to_string(shard.index) + "/" +
                       std::to_string(shard.count));
  }
  const std::vector<SweepPoint> all = sweep_points(grid);
  std::vector<SweepPoint> mine;
  for (std::size_t i = static_cast<std::size_t>(shard.index); i < all.size(); i += static_cast<std::size_t>(shard.count)) {
    mine.push_back(all[i]);
  }
  return mine;
}

SweepShard parse_sweep_shard(const std::string& text) {
  return parse_sweep_shard(text, [](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

SweepShard parse_sweep_shard(const std::string& text, const std::function<const char*(const char*)>& env) {
  if (text == "slurm") return from_slurm(env);
  const std::size_t slash = text.find('/');
  SweepShard shard;
  if (slash == std::string::npos || !parse_int(text.substr(0, slash), shard.index) ||
      !parse_int(text.substr(slash + 1), shard.count) || shard.count < 1 || shard.index >= shard.count) {
    throw RequestError("--shard: expected I/N with 0 <= I < N, or 'slurm', got '" + text + "'");
  }
  return shard;
}

}  // namespace ddpsim::sim
