#include "test_support.hpp"

#include <algorithm>
#include <stdexcept>

#include "trace_events.hpp"

namespace ddpsim::trace::testing {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

RunMeta example_meta(int rank, int world_size) {
  RunMeta meta;
  meta.source = "measured";
  meta.tool = {"ddp-train", "0.1.0", "3f2c1ab"};
  meta.start_time_utc = "2026-11-22T04:00:00Z";
  meta.host = "node1";
  meta.rank = rank;
  meta.local_rank = rank;
  meta.world_size = world_size;
  meta.backend = "gloo";
  meta.workload_name = "mlp";
  meta.workload = {{"batch_size", "32"}};
  meta.parameters = {{0, "fc.weight", 8, "float32"},
                     {1, "fc.bias", 2, "float32"},
                     {2, "out.weight", 4, "float32"}};
  meta.bucket_cap_bytes = 26214400;
  meta.first_bucket_cap_bytes = 1048576;
  meta.bucket_assignments = {{0, {{2, 1, 0}}}, {1, {{2}, {1, 0}}}};
  meta.timeout_s = 1800;
  meta.settings = {{"comm_hook", "allreduce"}};
  return meta;
}

namespace {

void append_iteration(RankTrace& rank_trace, std::int64_t iteration, std::int64_t begin,
                      const IterationPlan& plan) {
  const int rank = rank_trace.meta.rank;
  const RunMeta& meta = rank_trace.meta;
  const BucketAssignment& layout = *meta.assignment_for(iteration);
  std::vector<Event>& events = rank_trace.events;
  EventLog log{events, rank, iteration};
  log.add(EventType::IterationBegin, begin);
  log.add(EventType::ForwardBegin, begin + 100);
  log.add(EventType::ForwardEnd, begin + 100 + plan.forward_ns);
  const std::int64_t backward_begin = begin + 200 + plan.forward_ns;
  log.add(EventType::BackwardBegin, backward_begin);
  const int grad_order[3] = {2, 1, 0};
  for (int k = 0; k < 3; ++k) log.add(EventType::GradReady, backward_begin + plan.grad_ready_ns[k]).param = grad_order[k];
  // Buckets become ready when their last parameter is; all-reduces run one after another.
  std::int64_t comm_free = 0;
  for (int b = 0; b < static_cast<int>(layout.buckets.size()); ++b) {
    std::int64_t ready = 0;
    for (int param : layout.buckets[static_cast<std::size_t>(b)]) {
      for (int k = 0; k < 3; ++k) {
        if (grad_order[k] == param) ready = std::max(ready, backward_begin + plan.grad_ready_ns[k]);
      }
    }
    const std::int64_t bytes = meta.bucket_bytes(layout, b);
    log.add(EventType::BucketReady, ready + 1, b, bytes);
    const std::int64_t start = std::max(ready + 2, comm_free);
    log.add(EventType::AllreduceBegin, start, b, bytes);
    comm_free = start + plan.allreduce_ns[b];
    log.add(EventType::AllreduceEnd, comm_free, b, bytes);
  }
  const std::int64_t backward_end = backward_begin + plan.backward_ns;
  log.add(EventType::BackwardEnd, backward_end);
  log.add(EventType::OptimizerBegin, backward_end + 100);
  log.add(EventType::OptimizerEnd, backward_end + 100 + plan.optimizer_ns);
  log.add(EventType::IterationEnd, backward_end + 200 + plan.optimizer_ns);
  sort_by_time(events);
}

}  // namespace

Trace example_trace(int world_size, int iterations, const IterationPlan& plan) {
  return example_trace(std::vector<std::vector<IterationPlan>>(
      static_cast<std::size_t>(world_size),
      std::vector<IterationPlan>(static_cast<std::size_t>(iterations), plan)));
}

Trace example_trace(const std::vector<std::vector<IterationPlan>>& plans) {
  Trace trace;
  const int world_size = static_cast<int>(plans.size());
  for (int rank = 0; rank < world_size; ++rank) {
    RankTrace rank_trace;
    rank_trace.meta = example_meta(rank, world_size);
    const auto& rank_plans = plans[static_cast<std::size_t>(rank)];
    for (std::size_t i = 0; i < rank_plans.size(); ++i) {
      const auto iteration = static_cast<std::int64_t>(i);
      append_iteration(rank_trace, iteration, example_iteration_begin_ns(iteration), rank_plans[i]);
    }
    trace.ranks.push_back(std::move(rank_trace));
  }
  return trace;
}

}  // namespace ddpsim::trace::testing
