// Statistics of a trace, and its Chrome-trace (Perfetto) export.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace {

struct BucketStats {
  int bucket = 0;
  std::int64_t bytes = 0;
  int num_params = 0;
  // Each rank's own begin → end, waiting for slower peers included, over complete iterations
  // and ranks, layout of the last iteration.
  double median_allreduce_s = 0;
  double mean_allreduce_s = 0;
  // The network's time: on the rank that started last (collective.hpp), over the complete
  // iterations ≥ 1 of the same layout. 0 when no all-reduce completed on every rank.
  double median_transfer_s = 0;
  double algbw_gbps = 0;  // bytes / median transfer time, in GB/s (1e9), as nccl-tests times it
  double busbw_gbps = 0;  // algbw * 2(W-1)/W
};

struct IterationStats {
  std::int64_t iteration = 0;
  double time_s = 0;  // slowest rank's iteration_end - iteration_begin
  std::vector<double> rank_time_s;
};

struct Summary {
  int world_size = 0;
  std::string source;
  std::string workload;
  std::string backend;
  int num_parameters = 0;
  std::int64_t parameter_bytes = 0;
  int num_buckets = 0;  // in the last layout
  std::vector<IterationStats> iterations;  // complete on every rank
  double median_iteration_s = 0;   // over iterations >= 1 when there are any (0 rebuilds buckets)
  double mean_iteration_s = 0;
  double samples_per_s = 0;        // world_size * batch_size / median iteration, when known
  double median_forward_s = 0;
  double median_backward_s = 0;
  double median_optimizer_s = 0;
  bool has_phases = false;  // forward/backward/optimizer recorded (profiler imports have none)
  double total_allreduce_s_per_iter = 0;  // median over iterations of the summed bucket times
  double overlap_fraction = 0;  // all-reduce time hidden behind gradient computation
  std::vector<BucketStats> buckets;
  std::vector<std::string> failures;  // "rank R iteration I bucket B: kind: message"
  std::vector<std::string> notes;  // one line each: replicated ranks, imported buckets, other collectives
};

Summary summarize(const Trace& trace);
// The summary of a trace whose entries are classes of identical ranks, as a simulated run keeps
// them: trace.ranks[c] stands for every rank r with class_of[r] == c, is the first of them and
// carries its number, and the classes are numbered in order of their first rank. Number for
// number the summary of the trace with every rank written out (its own events under its own
// number, a failure on the first rank of its class only); time linear in the ranks, memory in
// the classes (but for IterationStats::rank_time_s). See Note [ranks as classes] in docs/model.md.
Summary summarize(const Trace& trace, const std::vector<int>& class_of);
std::string summary_to_json(const Summary& summary);
std::string summary_to_table(const Summary& summary);

// Chrome trace JSON (chrome://tracing, Perfetto): a process per rank, a compute and a comm
// track, bucket id and bytes as args.
std::string to_chrome_trace(const Trace& trace);

}  // namespace ddpsim::trace
