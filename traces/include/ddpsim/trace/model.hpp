// The in-memory form of a ddpsim trace (traces/FORMAT.md, schema v1).
//
// Plain structs, no behaviour beyond small helpers: the runtime fills them while it trains,
// the simulator fills them while it predicts, and every tool reads them back the same way.
// Nothing here depends on LibTorch or SimGrid.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::trace {

inline constexpr int kSchemaVersion = 1;
inline constexpr const char* kSchemaName = "ddpsim-trace";

// One model parameter, in registration order (model.parameters()).
struct Parameter {
  int index = 0;
  std::string name;
  std::int64_t numel = 0;
  std::string dtype = "float32";  // float32 | float16 | bfloat16 | float64
  // DDP gives it a bucket of its own at every cap, where it stands in gradient-ready order, as
  // c10d's bucketing does for a parameter with a sparse gradient. An import sets it where a
  // recorded bucket holds this parameter alone, out of gradient-ready order.
  bool alone = false;

  std::int64_t bytes() const;
};

// Bytes per element of a dtype name; 0 for an unknown name.
std::int64_t dtype_size(const std::string& dtype);

// A bucket layout: buckets[b] lists the parameter indices of bucket b, which DDP all-reduces
// b-th. It is in force from first_iteration until the next layout's first_iteration.
struct BucketAssignment {
  std::int64_t first_iteration = 0;
  std::vector<std::vector<int>> buckets;
};

struct ToolInfo {
  std::string name;
  std::string version;
  std::string git_sha;
};

// Everything in rank-R.meta.json.
struct RunMeta {
  int schema_version = kSchemaVersion;
  std::string source = "measured";  // measured | simulated | imported
  ToolInfo tool;
  std::string start_time_utc;
  std::string clock = "CLOCK_MONOTONIC";
  std::string host;
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  std::string backend = "gloo";
  std::string workload_name;
  std::map<std::string, std::string> workload;  // settings other than the name
  std::vector<Parameter> parameters;
  std::int64_t bucket_cap_bytes = 25LL * 1024 * 1024;
  std::int64_t first_bucket_cap_bytes = 1024LL * 1024;
  // DDP's bucket_cap_mb_list in bytes (PyTorch 2.13, PR #169026): bucket i's cap, the last
  // repeating (c10d's size-limit vector). Empty: none given, the two caps above apply.
  std::vector<std::int64_t> bucket_cap_bytes_list;
  std::vector<BucketAssignment> bucket_assignments;
  double timeout_s = 1800.0;
  std::map<std::string, std::string> skew;
  std::map<std::string, std::string> settings;

  // The layout in force for an iteration, or nullptr if none is recorded yet.
  const BucketAssignment* assignment_for(std::int64_t iteration) const;
  // Total bytes of one bucket under a layout.
  std::int64_t bucket_bytes(const BucketAssignment& layout, int bucket) const;
};

enum class EventType {
  IterationBegin,
  IterationEnd,
  ForwardBegin,
  ForwardEnd,
  BackwardBegin,
  BackwardEnd,
  GradReady,
  BucketReady,
  AllreduceBegin,
  AllreduceEnd,
  OptimizerBegin,
  OptimizerEnd,
  Delay,
  Failure,
  Collective,  // a collective other than a bucket's all-reduce (profiler imports)
  EvalBegin,   // evaluation over the test split, between two iterations
  EvalEnd,
};

const char* to_string(EventType type);
std::optional<EventType> event_type_from_string(const std::string& name);

// One line of rank-R.events.csv. Fields that do not apply stay at -1 / empty.
struct Event {
  int rank = 0;
  std::int64_t iteration = 0;
  EventType type = EventType::IterationBegin;
  std::int64_t t_ns = 0;
  int bucket = -1;
  int param = -1;
  std::int64_t bytes = -1;
  std::int64_t dur_ns = -1;
  std::string kind;
  std::string message;
};

// One rank's record.
struct RankTrace {
  RunMeta meta;
  std::vector<Event> events;  // sorted by t_ns
  std::string meta_path;
  std::string events_path;
  bool truncated = false;  // the events file ended in a cut line (the rank died mid-write)

  // Iterations with both iteration_begin and iteration_end recorded, ascending.
  std::vector<std::int64_t> complete_iterations() const;
};

// One complete iteration's length on each rank: its iteration_end - iteration_begin, ns.
struct IterationTime {
  std::int64_t iteration = 0;
  std::vector<std::int64_t> rank_ns;  // rank r at [r]

  // The job's time for the iteration: DDP's all-reduces make every rank wait for the slowest.
  std::int64_t slowest_ns() const {
    std::int64_t slowest = 0;
    for (const std::int64_t ns : rank_ns) slowest = ns > slowest ? ns : slowest;
    return slowest;
  }
};

// All ranks of a run, rank r at ranks[r].
struct Trace {
  std::string dir;
  std::vector<RankTrace> ranks;

  int world_size() const { return static_cast<int>(ranks.size()); }
  const RunMeta& meta() const { return ranks.at(0).meta; }

  // Iterations every rank began and ended, ascending: the one meaning of "complete" that
  // summaries, validation, calibration and the replay share (a cut rank lowers the count).
  std::vector<std::int64_t> complete_iterations() const;

  // Each complete iteration's time, ascending, begin and end paired as the timelines pair them
  // (a rank's first iteration_begin, its last iteration_end): the one meaning of "iteration
  // time" that the summary and the replay's Monte Carlo share.
  std::vector<IterationTime> iteration_times() const;
};

// DDP's iteration 0 is a warm-up: it all-reduces one bucket, rebuilds the layout at its end
// and runs on cold caches. Steady-state figures leave it out whenever another iteration is
// there to go by; `iterations` ascending.
std::vector<std::int64_t> without_warmup(std::vector<std::int64_t> iterations);

}  // namespace ddpsim::trace
