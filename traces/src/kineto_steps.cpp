// What a standard profile says of its steps: where each begins and ends (prof.step()'s, else DDP's
// forwards), and of one step besides its collectives: DDP's forward, the autograd
// engine's backward, the optimizer step, and each gradient as it becomes ready (kineto_detail.hpp).
#include <algorithm>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "ddpsim/trace/io.hpp"
#include "kineto_detail.hpp"

namespace ddpsim::trace::detail {
namespace {

constexpr const char* kDdpForward = "DistributedDataParallel.forward";
constexpr const char* kEngineFunction = "autograd::engine::evaluate_function: ";
constexpr const char* kOptimizerStep = "Optimizer.step#";
constexpr const char* kAccumulateGrad = "torch::autograd::AccumulateGrad";
constexpr const char* kCopyBucketToGrad = "torch.distributed.ddp.reducer::copy_bucket_to_grad";

// CPU-side events only: a GPU trace repeats record_function labels as gpu_user_annotation.
bool on_cpu(const KEvent& e) { return e.cat != "gpu_user_annotation" && e.cat != "kernel"; }

// The events that begin inside [begin_ns, end_ns] (events sorted by begin).
template <typename Visit>
void for_each_in(const std::vector<KEvent>& events, std::int64_t begin_ns, std::int64_t end_ns, Visit visit) {
  auto it = std::lower_bound(events.begin(), events.end(), begin_ns,
                             [](const KEvent& e, std::int64_t t) { return e.begin_ns < t; });
  for (; it != events.end() && it->begin_ns <= end_ns; ++it) {
    if (on_cpu(*it)) visit(*it);
  }
}

// The element count of one "Input Dims" shape ([] is a scalar: 1), or -1 when it is no shape
// (a negative or overflowing extent, as fuzzed profiles have).
std::int64_t numel_of(const nlohmann::json& shape) {
  if (!shape.is_array()) return -1;
  std::int64_t numel = 1;
  for (const nlohmann::json& extent : shape) {
    if (!extent.is_number_integer()) return -1;
    const std::int64_t n = extent.get<std::int64_t>();
    if (n < 0 || (n > 0 && numel > std::numeric_limits<std::int64_t>::max() / n)) return -1;
    numel *= n;
  }
  return numel;
}

// prof.step()'s steps, checked: labels "ProfilerStep#N", N increasing, one after the other.
std::vector<ProfileStep> marked_steps(const std::vector<KEvent>& events, const std::string& path) {
  std::vector<ProfileStep> steps;
  for (const KEvent& e : events) {
    if (!starts_with(e.name, kProfilerStepPrefix) || e.cat == "gpu_user_annotation") continue;
    const std::string number = e.name.substr(std::char_traits<char>::length(kProfilerStepPrefix));
    std::size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != number.size() || value < 0) {
      throw TraceError(path, 0, std::string("step labels ") + kProfilerStepPrefix + "N", "\"" + e.name + "\"");
    }
    if (!steps.empty() && value <= steps.back().number) {
      throw TraceError(path, 0, "ProfilerStep numbers increasing with time", e.name + " after " + steps.back().span->name);
    }
    // prof.step() ends one step where the next begins: overlapping steps are not one job's
    // iterations, and their events would go back in time in the ddpsim trace (found by
    // fuzz_kineto_import: the importer wrote a trace its own reader refused).
    if (!steps.empty() && e.begin_ns < steps.back().span->end_ns) {
      throw TraceError(path, 0, "each ProfilerStep to begin after the previous one ends",
                       e.name + " beginning " + std::to_string(steps.back().span->end_ns - e.begin_ns) +
                           " ns before " + steps.back().span->name + " ends");
    }
    steps.push_back({value, &e});
  }
  return steps;
}

// Steps from DDP's forwards, for a profile without prof.step(): [forward i, forward i + 1), the
// last to the end of the first optimizer step after its forward (without one it is left out).
std::vector<ProfileStep> forward_steps(const std::vector<KEvent>& events, std::deque<KEvent>& synthesized) {
  std::vector<const KEvent*> forwards;
  for (const KEvent& e : events) {
    if (e.name != kDdpForward || !on_cpu(e)) continue;
    // A forward inside the previous one is the same call recorded twice (cpu_op and annotation).
    if (!forwards.empty() && e.begin_ns < forwards.back()->end_ns) continue;
    forwards.push_back(&e);
  }
  std::vector<ProfileStep> steps;
  for (std::size_t i = 0; i < forwards.size(); ++i) {
    std::int64_t end_ns = -1;
    if (i + 1 < forwards.size()) {
      end_ns = forwards[i + 1]->begin_ns - 1;
    } else {
      for (const KEvent& e : events) {
        if (e.begin_ns >= forwards[i]->end_ns && on_cpu(e) && starts_with(e.name, kOptimizerStep)) {
          end_ns = e.end_ns;
          break;
        }
      }
    }
    if (end_ns < forwards[i]->end_ns) continue;
    // Numbered from 0, as prof.step() numbers them: the first step is read as a warm-up, as a
    // profile that starts with the job holds DDP's first iteration and its bucket rebuild.
    const auto number = static_cast<std::int64_t>(steps.size());
    KEvent span;
    span.name = kForwardStepPrefix + std::to_string(number);
    span.cat = "user_annotation";
    span.thread = forwards[i]->thread;
    span.begin_ns = forwards[i]->begin_ns;
    span.end_ns = end_ns;
    synthesized.push_back(std::move(span));
    steps.push_back({number, &synthesized.back()});
  }
  return steps;
}

}  // namespace

std::vector<ProfileStep> profile_steps(const std::vector<KEvent>& events, const std::string& path,
                                       std::deque<KEvent>& synthesized) {
  std::vector<ProfileStep> steps = marked_steps(events, path);
  if (steps.empty()) steps = forward_steps(events, synthesized);
  if (steps.empty()) {
    throw TraceError(path, 0,
                     "ProfilerStep#N events (torch.profiler with a schedule and prof.step()), or "
                     "DistributedDataParallel.forward events to tell the steps apart",
                     "none");
  }
  return steps;
}

bool is_step_structure(const std::string& name, const std::string& cat) {
  if (cat == "gpu_user_annotation") return false;
  return name == kDdpForward || name == kAccumulateGrad || name == kCopyBucketToGrad ||
         starts_with(name, kEngineFunction) || starts_with(name, kOptimizerStep);
}

StepPhases phases_of_step(const std::vector<KEvent>& events, std::int64_t begin_ns, std::int64_t end_ns) {
  StepPhases phases;
  for_each_in(events, begin_ns, end_ns, [&](const KEvent& e) {
    if (phases.forward == nullptr) {
      if (e.name == kDdpForward) phases.forward = &e;
      return;
    }
    if (phases.backward_begin_ns < 0) {
      if (e.begin_ns >= phases.forward->end_ns && starts_with(e.name, kEngineFunction)) {
        phases.backward_begin_ns = e.begin_ns;
      }
      return;
    }
    if (phases.optimizer == nullptr && starts_with(e.name, kOptimizerStep)) phases.optimizer = &e;
  });
  return phases;
}

std::vector<Gradient> gradients_of_step(const std::vector<KEvent>& events, std::int64_t begin_ns,
                                        std::int64_t end_ns) {
  std::vector<Gradient> gradients;
  for_each_in(events, begin_ns, end_ns, [&](const KEvent& e) {
    if (e.name != kAccumulateGrad) return;
    // An undefined gradient (Input type "") accumulates nothing: no parameter DDP buckets.
    if (e.args != nullptr) {
      const auto types = e.args->find("Input type");
      if (types != e.args->end() && types->is_array() && types->size() == 1 && types->front() == "") return;
    }
    Gradient gradient;
    gradient.event = &e;
    // The gradient is AccumulateGrad's one input: "Input Dims" [[d0, d1, ...]], "Input type" [T].
    const auto dims = e.args != nullptr ? e.args->find("Input Dims") : nlohmann::json::const_iterator();
    const auto types = e.args != nullptr ? e.args->find("Input type") : nlohmann::json::const_iterator();
    if (e.args != nullptr && dims != e.args->end() && dims->is_array() && !dims->empty() &&
        types != e.args->end() && types->is_array() && !types->empty() && types->front().is_string()) {
      std::int64_t size = -1;
      const std::string dtype = normalize_dtype(types->front().get<std::string>(), size);
      const std::int64_t numel = numel_of(dims->front());
      if (!dtype.empty() && numel >= 0) {
        gradient.numel = numel;
        gradient.dtype = dtype;
        for (const auto& extent : dims->front()) {
          gradient.shape += (gradient.shape.empty() ? "" : "x") + extent.dump();
        }
        if (gradient.shape.empty()) gradient.shape = "scalar";
      }
    }
    gradients.push_back(std::move(gradient));
  });
  // The engine may run gradients on several threads (one per device): ready is when each ended.
  std::stable_sort(gradients.begin(), gradients.end(),
                   [](const Gradient& a, const Gradient& b) { return a.event->end_ns < b.event->end_ns; });
  return gradients;
}

std::vector<const KEvent*> bucket_copies_of_step(const std::vector<KEvent>& events, std::int64_t begin_ns,
                                                 std::int64_t end_ns) {
  std::vector<const KEvent*> copies;
  for_each_in(events, begin_ns, end_ns, [&](const KEvent& e) {
    if (e.name == kCopyBucketToGrad) copies.push_back(&e);
  });
  return copies;
}

std::string normalize_dtype(const std::string& name, std::int64_t& size) {
  std::string d = lower(name);
  if (starts_with(d, "c10::")) d = d.substr(5);
  static const std::map<std::string, std::pair<std::string, std::int64_t>> table = {
      {"float", {"float32", 4}},    {"float32", {"float32", 4}}, {"half", {"float16", 2}},
      {"float16", {"float16", 2}},  {"bfloat16", {"bfloat16", 2}}, {"double", {"float64", 8}},
      {"float64", {"float64", 8}},  {"long", {"", 8}},           {"long int", {"", 8}},
      {"int64", {"", 8}},           {"int", {"", 4}},            {"int32", {"", 4}},
      {"unsigned char", {"", 1}},   {"signed char", {"", 1}},    {"char", {"", 1}},
      {"byte", {"", 1}},            {"bool", {"", 1}},           {"int8_t", {"", 1}},
      {"uint8", {"", 1}},           {"int8", {"", 1}},           {"short", {"", 2}}};
  const auto found = table.find(d);
  if (found == table.end()) {
    size = -1;
    return "";
  }
  size = found->second.second;
  return found->second.first;
}

std::int64_t first_dims_numel(const nlohmann::json& args, std::size_t* which) {
  const auto dims = args.find("Input Dims");
  if (dims == args.end() || !dims->is_array()) return -1;
  for (std::size_t i = 0; i < dims->size(); ++i) {
    const nlohmann::json& shape = (*dims)[i];
    if (!shape.is_array() || shape.empty()) continue;
    const std::int64_t numel = numel_of(shape);
    if (numel < 0) return -1;
    if (which != nullptr) *which = i;
    return numel;
  }
  return -1;
}

}  // namespace ddpsim::trace::detail
