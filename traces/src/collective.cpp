// The transfer time of every all-reduce, from the rank that started it last (collective.hpp).
#include "ddpsim/trace/collective.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace ddpsim::trace {
namespace {

struct RankAllreduce {
  std::int64_t bytes = -1;
  std::int64_t start_ns = 0;  // when the rank's stream could start it
  std::int64_t end_ns = 0;
};

}  // namespace

std::vector<CollectiveTransfer> collective_transfers(const Trace& trace) {
  std::vector<Timelines> timelines;
  for (const RankTrace& rank : trace.ranks) timelines.push_back(build_timelines(rank));
  return collective_transfers(trace, timelines);
}

std::vector<CollectiveTransfer> collective_transfers(const Trace& trace, const std::vector<Timelines>& timelines) {
  std::vector<CollectiveTransfer> transfers;
  const std::vector<std::int64_t> iterations = without_warmup(trace.complete_iterations());

  // per_rank[r][(iteration, bucket)], from the rank's begin/end pairs (timeline.hpp).
  std::vector<std::map<std::pair<std::int64_t, int>, RankAllreduce>> per_rank(timelines.size());
  for (std::size_t r = 0; r < timelines.size(); ++r) {
    for (const std::int64_t iteration : iterations) {
      const auto timeline = timelines[r].find(iteration);
      if (timeline == timelines[r].end()) continue;
      // The stream is free once every all-reduce that ended before this one (in the order
      // the ends were recorded) has ended.
      std::vector<const BucketAllreduce*> by_end;
      for (const BucketAllreduce& allreduce : timeline->second.allreduces) {
        if (allreduce.bucket >= 0) by_end.push_back(&allreduce);
      }
      std::sort(by_end.begin(), by_end.end(),
                [](const auto* a, const auto* b) { return a->end_order < b->end_order; });
      std::int64_t stream_free_ns = 0;
      for (const BucketAllreduce* allreduce : by_end) {
        RankAllreduce& sample = per_rank[r][{iteration, allreduce->bucket}];  // a repeat: the last
        sample.bytes = allreduce->bytes;
        sample.start_ns = std::max(allreduce->interval.begin, stream_free_ns);
        sample.end_ns = allreduce->interval.end;
        stream_free_ns = std::max(stream_free_ns, allreduce->interval.end);
      }
    }
  }
  if (per_rank.empty()) return transfers;

  for (const auto& [key, first] : per_rank.front()) {
    (void)first;
    const RankAllreduce* last_to_start = nullptr;
    bool everywhere = true;
    for (const auto& rank : per_rank) {
      const auto found = rank.find(key);
      if (found == rank.end() || found->second.end_ns == 0) {
        everywhere = false;
        break;
      }
      if (last_to_start == nullptr || found->second.start_ns > last_to_start->start_ns) {
        last_to_start = &found->second;
      }
    }
    if (!everywhere || last_to_start == nullptr || last_to_start->bytes <= 0) continue;
    CollectiveTransfer transfer;
    transfer.iteration = key.first;
    transfer.bucket = key.second;
    transfer.bytes = last_to_start->bytes;
    transfer.transfer_s = static_cast<double>(last_to_start->end_ns - last_to_start->start_ns) * 1e-9;
    transfers.push_back(transfer);
  }
  return transfers;
}

}  // namespace ddpsim::trace
