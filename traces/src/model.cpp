// Small helpers of the in-memory trace model (model.hpp).
#include "ddpsim/trace/model.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <set>
#include <utility>

namespace ddpsim::trace {

std::int64_t dtype_size(const std::string& dtype) {
  if (dtype == "float32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "float64") return 8;
  return 0;
}

std::int64_t Parameter::bytes() const { return numel * dtype_size(dtype); }

const BucketAssignment* RunMeta::assignment_for(std::int64_t iteration) const {
  // Layouts are stored in increasing first_iteration order; the one in force is the last
  // that starts at or before the iteration.
  const BucketAssignment* in_force = nullptr;
  for (const BucketAssignment& layout : bucket_assignments) {
    if (layout.first_iteration > iteration) break;
    in_force = &layout;
  }
  return in_force;
}

std::int64_t RunMeta::bucket_bytes(const BucketAssignment& layout, int bucket) const {
  if (bucket < 0 || bucket >= static_cast<int>(layout.buckets.size())) return 0;
  std::int64_t total = 0;
  for (int param : layout.buckets[static_cast<std::size_t>(bucket)]) {
    if (param >= 0 && param < static_cast<int>(parameters.size())) {
      total += parameters[static_cast<std::size_t>(param)].bytes();
    }
  }
  return total;
}

namespace {

// The single table that ties every EventType to its name in the CSV file.
constexpr std::array<std::pair<EventType, const char*>, 17> kEventNames{{
    {EventType::IterationBegin, "iteration_begin"},
    {EventType::IterationEnd, "iteration_end"},
    {EventType::ForwardBegin, "forward_begin"},
    {EventType::ForwardEnd, "forward_end"},
    {EventType::BackwardBegin, "backward_begin"},
    {EventType::BackwardEnd, "backward_end"},
    {EventType::GradReady, "grad_ready"},
    {EventType::BucketReady, "bucket_ready"},
    {EventType::AllreduceBegin, "allreduce_begin"},
    {EventType::AllreduceEnd, "allreduce_end"},
    {EventType::OptimizerBegin, "optimizer_begin"},
    {EventType::OptimizerEnd, "optimizer_end"},
    {EventType::Delay, "delay"},
    {EventType::Failure, "failure"},
    {EventType::Collective, "collective"},
    {EventType::EvalBegin, "eval_begin"},
    {EventType::EvalEnd, "eval_end"},
}};

}  // namespace

const char* to_string(EventType type) {
  for (const auto& [candidate, name] : kEventNames) {
    if (candidate == type) return name;
  }
  return "unknown";
}

std::optional<EventType> event_type_from_string(const std::string& name) {
  for (const auto& [type, candidate] : kEventNames) {
    if (name == candidate) return type;
  }
  return std::nullopt;
}

std::vector<std::int64_t> RankTrace::complete_iterations() const {
  std::set<std::int64_t> begun;
  std::set<std::int64_t> complete;
  for (const Event& event : events) {
    if (event.type == EventType::IterationBegin) {
      begun.insert(event.iteration);
    } else if (event.type == EventType::IterationEnd && begun.count(event.iteration) != 0) {
      complete.insert(event.iteration);
    }
  }
  return {complete.begin(), complete.end()};
}

std::vector<std::int64_t> Trace::complete_iterations() const {
  if (ranks.empty()) return {};
  std::vector<std::int64_t> everywhere = ranks.front().complete_iterations();
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    const std::vector<std::int64_t> here = ranks[r].complete_iterations();
    std::vector<std::int64_t> both;
    std::set_intersection(everywhere.begin(), everywhere.end(), here.begin(), here.end(), std::back_inserter(both));
    everywhere = std::move(both);
  }
  return everywhere;
}

std::vector<std::int64_t> without_warmup(std::vector<std::int64_t> iterations) {
  if (iterations.size() > 1 && iterations.front() == 0) iterations.erase(iterations.begin());
  return iterations;
}

}  // namespace ddpsim::trace
