// Import of standard PyTorch profiler traces (torch.profiler) of a DDP job.
//
// What a torch.profiler trace of a DDP job holds, and what we use (PyTorch 1.13-2.x,
// schemaVersion 1; see /work/shared/kineto-real/README.md for the real ones tested):
//  - "ProfilerStep#N" (cpu_op / user_annotation) bounds iteration N; a profile without them
//    (no schedule, no prof.step()) is cut at DDP's forwards instead (kineto_steps.cpp);
//  - every collective is a "c10d::<name>_" cpu_op (allreduce_, alltoall_base_,
//    _allgather_base_, broadcast_, ...). Inside it, on the same thread: "record_param_comms"
//    ("Collective name", "In msg nelems", "dtype" in newer PyTorch), the "nccl:<name>"
//    annotation ("Input Dims" and "Input type" when record_shapes was on), and the CUDA
//    runtime launch whose "correlation" names the NCCL kernel on the GPU;
//  - DDP's Reducer launches bucket b's all-reduce when the bucket is ready, in bucket order:
//    the k-th all-reduce of a step is bucket k, its launch (cpu_op start) is bucket_ready,
//    and its kernel's start/end are allreduce_begin/end;
//  - with record_shapes=True, every "torch::autograd::AccumulateGrad" carries its gradient's
//    shape and ends when that gradient is ready: the parameters, in gradient-ready order, and
//    the buckets as lists of them, a parameter DDP bucketed alone marked so ("parameters":
//    "per-gradient" in settings), so DDP's rule re-buckets the import exactly; the caps under
//    which that rule gives the recorded buckets are inferred (settings.bucket_caps,
//    bucket_caps.hpp). Without shapes each bucket becomes one pseudo-parameter ("parameters":
//    "per-bucket", the reason in parameters_reason) and re-bucketing is approximate;
//  - DDP's "DistributedDataParallel.forward", the autograd engine's first function and
//    "Optimizer.step#..." give the phases (kineto_steps.cpp); the rest of the step (and the
//    other collectives, recorded as "collective" events) is replayed as measured compute.

#include "kineto_detail.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/bucket_caps.hpp"
#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"

namespace ddpsim::trace::detail {
namespace {

using nlohmann::json;

struct Collective {
  std::string kind;  // "all_reduce", "all_to_all", ...
  const KEvent* op = nullptr;
  const KEvent* kernel = nullptr;  // NCCL: the kernel the launch enqueued (by correlation)
  const KEvent* worker = nullptr;  // Gloo: the "gloo:all_reduce" span on Gloo's worker thread
  std::int64_t numel = -1;
  std::string dtype;  // ddpsim spelling when known, else the profiler's
  std::int64_t bytes = -1;
  bool sized_by_span = false;  // the launch said no size: the Gloo span it was paired with did
};

// One step's bucket all-reduces, each as (elements, dtype), in launch order.
using SizeSequence = std::vector<std::pair<std::int64_t, std::string>>;

SizeSequence sizes_of(const std::vector<Collective*>& launches) {
  SizeSequence sizes;
  for (const Collective* c : launches) sizes.emplace_back(c->numel, c->dtype);
  return sizes;
}

// Gloo's two worker threads take queued work in order but may record their spans' begins out of
// it (one descheduled between taking its work and recording): where no launch says its size,
// two works queued together can be paired with each other's span. A step whose sizes are
// `layout`'s in another order is paired again, each launch with the first of the step's spans of
// its layout size that began after it; unchanged where that fails. Whether it was.
bool pair_again(std::vector<Collective*>& launches, const SizeSequence& layout) {
  if (launches.size() != layout.size() || sizes_of(launches) == layout) return false;
  for (const Collective* c : launches) {
    if (!c->sized_by_span || c->worker == nullptr) return false;
  }
  std::vector<std::size_t> owner(launches.size());  // launch b takes launch owner[b]'s span and size
  std::vector<bool> taken(launches.size(), false);
  for (std::size_t b = 0; b < launches.size(); ++b) {
    std::optional<std::size_t> first;
    for (std::size_t s = 0; s < launches.size(); ++s) {
      const Collective& c = *launches[s];
      if (taken[s] || std::pair(c.numel, c.dtype) != layout[b] || c.worker->begin_ns < launches[b]->op->begin_ns) continue;
      if (!first || c.worker->begin_ns < launches[*first]->worker->begin_ns) first = s;
    }
    if (!first) return false;
    taken[*first] = true;
    owner[b] = *first;
  }
  std::vector<Collective> before;
  for (const Collective* c : launches) before.push_back(*c);
  for (std::size_t b = 0; b < launches.size(); ++b) {
    const Collective& from = before[owner[b]];
    launches[b]->worker = from.worker;
    launches[b]->numel = from.numel;
    launches[b]->dtype = from.dtype;
    launches[b]->bytes = from.bytes;
  }
  return true;
}

// Step names as settings list them: "ProfilerStep#N ...", space-separated.
std::string step_list(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : " ") + name;
  return list;
}

// Parses a standard profile keeping only the events the importer reads: a real profile is
// mostly operators and kernels of the model, and holding all of them costs ~9x the file in
// memory. Kept: complete ("X") events that are steps, collectives (c10d::, nccl:, gloo:,
// record_param_comms), CUDA runtime calls (their correlation ids lead to kernels), NCCL
// kernels, and the phase and gradient events of kineto_steps.cpp; `saw_kernel` says whether
// any GPU kernel was dropped (a GPU trace).
json parse_standard_profile(const std::string& path, const std::string& what, bool& saw_kernel) {
  const std::string text = read_maybe_gzip(path, what);
  bool in_events = false;
  saw_kernel = false;
  auto keep = [&in_events, &saw_kernel](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) {
      in_events = parsed.is_string() && parsed.get_ref<const std::string&>() == "traceEvents";
      return true;
    }
    if (depth != 2 || !in_events || event != json::parse_event_t::object_end) return true;
    const auto text_of = [&parsed](const char* key) -> std::string {
      const auto field = parsed.find(key);
      return field != parsed.end() && field->is_string() ? field->get<std::string>() : "";
    };
    if (text_of("ph") != "X") return false;
    const std::string name = text_of("name");
    const std::string cat = text_of("cat");
    if (cat == "kernel" && !starts_with(name, "nccl")) {
      saw_kernel = true;
      return false;
    }
    return cat == "kernel" || cat == "cuda_runtime" || starts_with(name, kProfilerStepPrefix) ||
           starts_with(name, "c10d::") || starts_with(name, "nccl:") ||
           starts_with(name, "gloo:") || name == "record_param_comms" ||
           is_step_structure(name, cat);
  };
  try {
    return json::parse(text, keep);
  } catch (const json::exception& error) {
    throw TraceError(path, 0, what, std::string("invalid JSON (") + error.what() + ")");
  }
}

std::string collective_kind(const std::string& op_name) {
  std::string name = op_name.substr(std::char_traits<char>::length("c10d::"));
  while (!name.empty() && name.front() == '_') name.erase(0, 1);
  while (!name.empty() && name.back() == '_') name.pop_back();
  if (name == "allreduce" || name == "allreduce_coalesced") return "all_reduce";
  if (starts_with(name, "alltoall")) return "all_to_all";
  if (starts_with(name, "allgather")) return "all_gather";
  if (starts_with(name, "reduce_scatter")) return "reduce_scatter";
  return name;  // broadcast, barrier, send, recv, reduce, gather, scatter, ...
}

bool is_nccl_kernel(const std::string& name) { return starts_with(name, "nccl"); }

// Fills numel/dtype/bytes of a collective from what lies inside its cpu_op.
void size_collective(Collective& c, const std::vector<const KEvent*>& inside) {
  auto take = [&](std::int64_t numel, const std::string& dtype_name) {
    if (numel < 0 || dtype_name.empty()) return false;
    std::int64_t size = -1;
    const std::string dtype = normalize_dtype(dtype_name, size);
    c.numel = numel;
    c.dtype = dtype.empty() ? lower(dtype_name) : dtype;
    c.bytes = size > 0 ? numel * size : -1;
    return true;
  };
  auto from_param_comms = [&](const json& args) {
    const auto nelems = args.find("In msg nelems");
    const auto dtype = args.find("dtype");
    if (nelems == args.end() || !nelems->is_number_integer() || dtype == args.end() ||
        !dtype->is_string()) {
      return false;
    }
    return take(nelems->get<std::int64_t>(), dtype->get<std::string>());
  };
  auto from_dims = [&](const json& args) {
    std::size_t which = 0;
    const std::int64_t numel = first_dims_numel(args, &which);
    const auto types = args.find("Input type");
    if (numel < 0 || types == args.end() || !types->is_array() || types->size() <= which ||
        !(*types)[which].is_string()) {
      return false;
    }
    return take(numel, (*types)[which].get<std::string>());
  };
  for (const KEvent* e : inside) {
    if (e->name == "record_param_comms" && e->args != nullptr && from_param_comms(*e->args)) return;
  }
  if (c.kernel != nullptr && c.kernel->args != nullptr && from_param_comms(*c.kernel->args)) return;
  for (const KEvent* e : inside) {
    if (starts_with(e->name, "nccl:") && e->args != nullptr && from_dims(*e->args)) return;
  }
  if (c.op->args != nullptr) from_dims(*c.op->args);
}

// Parameters from the gradients of one step and the recorded buckets as lists of them.
struct GradientLayout {
  std::vector<Parameter> parameters;
  BucketAssignment assignment;
};

// A trace needs parameters in registration order, which a profile does not show: the k-th of n
// gradients to become ready is taken as parameter n-1-k, the order DDP itself assumes when it
// first buckets a model (reverse registration order) and the one that breaks the replay's ties
// as the profile ordered them. Each dtype's buckets take that dtype's gradients in the order
// they became ready, as DDP's rebuilt buckets do, and a bucket's gradients must add up to its
// all-reduce's elements. A bucket those gradients overfill may be one parameter that DDP
// bucketed alone (Parameter::alone: c10d does so for a sparse gradient), taken out of turn: the
// last gradient of its dtype and exact size ready before its all-reduce launched. Nullopt, with
// `why`, where the profile cannot give this.
std::optional<GradientLayout> layout_from_gradients(const std::vector<Gradient>& gradients,
                                                    const std::vector<const Collective*>& buckets, std::string& why) {
  if (gradients.empty()) {
    why = "the profile has no torch::autograd::AccumulateGrad events, so no per-parameter sizes or gradient times";
    return std::nullopt;
  }
  const auto without_shape = std::count_if(gradients.begin(), gradients.end(), [](const Gradient& g) { return g.numel < 0; });
  if (without_shape > 0) {
    why = std::to_string(without_shape) + " of " + std::to_string(gradients.size()) +
          " AccumulateGrad events have no \"Input Dims\" (profile with record_shapes=True for exact re-bucketing)";
    return std::nullopt;
  }
  const int n = static_cast<int>(gradients.size());
  GradientLayout result;
  result.parameters.resize(gradients.size());
  std::map<std::string, std::vector<int>> queue;  // dtype -> its gradients' positions, in ready order
  for (int k = 0; k < n; ++k) {
    const Gradient& g = gradients[static_cast<std::size_t>(k)];
    Parameter& parameter = result.parameters[static_cast<std::size_t>(n - 1 - k)];
    parameter.index = n - 1 - k;
    parameter.name = "grad" + std::to_string(k) + ":" + g.shape;
    parameter.numel = g.numel;
    parameter.dtype = g.dtype;
    queue[g.dtype].push_back(k);
  }
  std::vector<bool> used(gradients.size(), false);  // in a bucket already
  std::int64_t gradient_elements = 0;
  std::int64_t bucket_elements = 0;
  for (const Gradient& g : gradients) gradient_elements += g.numel;
  for (const Collective* c : buckets) bucket_elements += c->numel;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const Collective& all_reduce = *buckets[b];
    const std::vector<int>& ready = queue[all_reduce.dtype];
    std::vector<int> in_turn;  // the dtype's next gradients until they reach the bucket's elements
    std::int64_t elements = 0;
    for (const int k : ready) {
      if (elements >= all_reduce.numel) break;
      if (used[static_cast<std::size_t>(k)]) continue;
      elements += gradients[static_cast<std::size_t>(k)].numel;
      in_turn.push_back(k);
    }
    if (elements != all_reduce.numel) in_turn.clear();
    if (in_turn.empty()) {
      for (auto k = ready.rbegin(); k != ready.rend(); ++k) {
        const Gradient& g = gradients[static_cast<std::size_t>(*k)];
        if (!used[static_cast<std::size_t>(*k)] && g.numel == all_reduce.numel && g.event->end_ns <= all_reduce.op->begin_ns) {
          in_turn = {*k};
          result.parameters[static_cast<std::size_t>(n - 1 - *k)].alone = true;
          break;
        }
      }
    }
    if (in_turn.empty()) {
      why = "the " + std::to_string(n) + " gradients (" + std::to_string(gradient_elements) +
            " elements) do not fill the all-reduced buckets (" + std::to_string(bucket_elements) +
            " elements) in the order they became ready: bucket " + std::to_string(b) + " of " +
            std::to_string(all_reduce.numel) + " elements";
      return std::nullopt;
    }
    std::vector<int> bucket;
    for (int k : in_turn) {
      used[static_cast<std::size_t>(k)] = true;
      bucket.push_back(n - 1 - k);
    }
    result.assignment.buckets.push_back(std::move(bucket));
  }
  const auto left = std::count(used.begin(), used.end(), false);
  if (left > 0) {
    why = std::to_string(left) + " gradients are in no all-reduced bucket (parameters DDP does not own?)";
    return std::nullopt;
  }
  return result;
}

// Whether a step's gradients are the reference step's: the same shapes in the same order.
bool same_gradients(const std::vector<Gradient>& step, const std::vector<Gradient>& reference) {
  return std::equal(step.begin(), step.end(), reference.begin(), reference.end(), [](const Gradient& a, const Gradient& b) {
    return a.numel == b.numel && a.dtype == b.dtype && a.shape == b.shape;
  });
}

struct StandardFile {
  json document;
  std::vector<KEvent> events;  // complete events, sorted by begin
};

std::string thread_of(const json& event) {
  const auto pid = event.find("pid");
  const auto tid = event.find("tid");
  return (pid == event.end() ? std::string() : pid->dump()) + "/" +
         (tid == event.end() ? std::string() : tid->dump());
}

}  // namespace

RankTrace import_standard(const std::string& path, int position, int file_count) {
  const std::string what = "a PyTorch profiler trace (torch.profiler, .json or .json.gz)";
  StandardFile file;
  bool saw_compute_kernel = false;
  file.document = parse_standard_profile(path, what, saw_compute_kernel);
  const json& document = file.document;
  if (document.is_array()) {
    throw TraceError(path, 0, what + " with a traceEvents object (torch.profiler, not the legacy autograd profiler)",
                     "a bare JSON array, which holds no message sizes");
  }
  if (!document.is_object() || !document.contains("traceEvents") ||
      !document["traceEvents"].is_array()) {
    throw TraceError(path, 0, what, "JSON without a traceEvents array");
  }
  // A profile's times are microseconds, since the Unix epoch in real traces (~1.8e15 in 2026).
  // Beyond 4e15 (the year 2096) begin + duration could overflow int64 nanoseconds, so such an
  // event is refused with the file named.
  constexpr double kMaxMicroseconds = 4e15;
  for (const json& event : document["traceEvents"]) {
    if (!event.is_object()) continue;
    const auto ph = event.find("ph");
    if (ph == event.end() || !ph->is_string() || ph->get_ref<const std::string&>() != "X") continue;
    const auto name = event.find("name");
    const auto ts = event.find("ts");
    const auto dur = event.find("dur");
    if (name == event.end() || !name->is_string() || ts == event.end() || !ts->is_number() ||
        dur == event.end() || !dur->is_number()) {
      continue;
    }
    if (!(std::fabs(ts->get<double>()) < kMaxMicroseconds) ||
        !(std::fabs(dur->get<double>()) < kMaxMicroseconds)) {
      throw TraceError(path, 0, "event times (ts, dur) in microseconds below 4e15",
                       "\"" + name->get<std::string>() + "\" at ts " + ts->dump() + ", dur " +
                           dur->dump());
    }
    KEvent e;
    e.name = name->get<std::string>();
    const auto cat = event.find("cat");
    e.cat = cat != event.end() && cat->is_string() ? cat->get<std::string>() : "";
    e.thread = thread_of(event);
    e.begin_ns = microseconds_to_ns(ts->get<double>());
    e.end_ns = e.begin_ns + std::max<std::int64_t>(microseconds_to_ns(dur->get<double>()), 0);
    const auto args = event.find("args");
    if (args != event.end() && args->is_object()) e.args = &*args;
    file.events.push_back(std::move(e));
  }
  std::stable_sort(file.events.begin(), file.events.end(),
                   [](const KEvent& a, const KEvent& b) { return a.begin_ns < b.begin_ns; });
  const auto& events = file.events;

  // Steps: prof.step()'s, else one per DDP forward (a profile taken without a schedule).
  std::deque<KEvent> synthesized_steps;
  const std::vector<ProfileStep> steps = profile_steps(events, path, synthesized_steps);
  // A step as settings name it: its number, not its raw name (a profile's bytes are anything).
  const auto step_label = [&synthesized_steps](const ProfileStep& step) {
    return std::string(synthesized_steps.empty() ? kProfilerStepPrefix : kForwardStepPrefix) + std::to_string(step.number);
  };

  // Kernels by correlation id; GPU presence.
  std::map<std::int64_t, const KEvent*> kernels;
  bool any_kernel = saw_compute_kernel;
  bool any_allreduce_kernel = false;
  for (const KEvent& e : events) {
    if (e.cat != "kernel") continue;
    any_kernel = true;
    if (e.name.find("AllReduce") != std::string::npos && is_nccl_kernel(e.name)) {
      any_allreduce_kernel = true;
    }
    if (e.args == nullptr) continue;
    const auto correlation = e.args->find("correlation");
    if (correlation != e.args->end() && correlation->is_number_integer()) {
      kernels[correlation->get<std::int64_t>()] = &e;
    }
  }

  // Collectives: c10d ops (or, in traces without them, the nccl:* CPU annotations).
  std::vector<Collective> collectives;
  for (const char* prefix : {"c10d::", "nccl:"}) {
    for (const KEvent& e : events) {
      if (!starts_with(e.name, prefix) || (e.cat != "cpu_op" && e.cat != "user_annotation")) {
        continue;
      }
      Collective c;
      c.op = &e;
      c.kind = prefix[0] == 'c' ? collective_kind(e.name)
                                : collective_kind("c10d::" + e.name.substr(5));
      collectives.push_back(c);
    }
    if (!collectives.empty()) break;
  }
  for (Collective& c : collectives) {
    std::vector<const KEvent*> inside;
    for (const KEvent& e : events) {
      if (e.begin_ns < c.op->begin_ns) continue;
      if (e.begin_ns > c.op->end_ns) break;
      if (&e == c.op || e.thread != c.op->thread || e.end_ns > c.op->end_ns) continue;
      inside.push_back(&e);
      if (e.cat == "cuda_runtime" && e.args != nullptr && c.kernel == nullptr) {
        const auto correlation = e.args->find("correlation");
        if (correlation != e.args->end() && correlation->is_number_integer()) {
          const auto kernel = kernels.find(correlation->get<std::int64_t>());
          if (kernel != kernels.end() && is_nccl_kernel(kernel->second->name)) {
            c.kernel = kernel->second;
          }
        }
      }
    }
    size_collective(c, inside);
  }
  // Gloo runs a collective on one of its worker threads, recorded as a "gloo:all_reduce" span
  // from when a worker took the work to when it completed (CPU and CUDA tensors alike; the
  // gpu_user_annotation copy of it is not a second one). Launches are FIFO, so a launch's span
  // is the first unclaimed one that starts after it and carries as many elements.
  std::vector<const KEvent*> gloo_spans;
  for (const KEvent& e : events) {
    if (e.name == "gloo:all_reduce" && e.cat == "user_annotation") gloo_spans.push_back(&e);
  }
  // A launch's work begins before its step ends (DDP waits for it in backward), so a launch
  // with no span in its own step never takes the next step's.
  auto end_of_step_at = [&steps](std::int64_t t_ns) {
    for (const ProfileStep& step : steps) {
      if (t_ns >= step.span->begin_ns && t_ns <= step.span->end_ns) return step.span->end_ns;
    }
    return std::numeric_limits<std::int64_t>::max();
  };
  std::vector<bool> claimed(gloo_spans.size(), false);
  for (Collective& c : collectives) {
    if (c.kind != "all_reduce" || c.kernel != nullptr) continue;
    const std::int64_t latest_begin = end_of_step_at(c.op->begin_ns);
    for (std::size_t g = 0; g < gloo_spans.size(); ++g) {
      const KEvent& span = *gloo_spans[g];
      if (span.begin_ns > latest_begin) break;
      if (claimed[g] || span.begin_ns < c.op->begin_ns) continue;
      Collective sized;
      sized.op = &span;
      size_collective(sized, {});
      if (c.numel >= 0 && sized.numel != c.numel) continue;
      claimed[g] = true;
      c.worker = &span;
      // c10d::allreduce_ lists a TensorList, which says no size: the worker's span does.
      if (c.numel < 0) {
        c.numel = sized.numel;
        c.dtype = sized.dtype;
        c.bytes = sized.bytes;
        c.sized_by_span = true;
      }
      break;
    }
  }

  // Distributed info.
  const json info = document.value("distributedInfo", json::object());
  int rank = position;
  int world_size = file_count;
  if (info.is_object() && info.contains("rank") && info["rank"].is_number_integer()) {
    rank = info["rank"].get<int>();
  }
  if (info.is_object() && info.contains("world_size") && info["world_size"].is_number_integer()) {
    world_size = info["world_size"].get<int>();
  }
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw TraceError(path, 0, "distributedInfo with 0 <= rank < world_size",
                     info.dump());
  }
  const auto backend_field = info.is_object() ? info.find("backend") : info.end();
  const std::string backend = backend_field != info.end() && backend_field->is_string()
                                  ? backend_field->get<std::string>()
                                  : "nccl";

  // Every all-reduce needs its transfer's timing: an NCCL kernel or a Gloo worker span. A single
  // NCCL rank has nothing to transfer and NCCL launches no kernel: its all-reduces take no time.
  const bool lone_nccl_rank = world_size == 1 && backend == "nccl";
  std::size_t allreduce_ops = 0;
  std::size_t allreduce_untimed = 0;
  std::size_t untimed_before_last_step = 0;
  for (const Collective& c : collectives) {
    if (c.kind != "all_reduce") continue;
    ++allreduce_ops;
    const bool kernel = c.kernel != nullptr && c.kernel->name.find("AllReduce") != std::string::npos;
    if (kernel || c.worker != nullptr || lone_nccl_rank) continue;
    ++allreduce_untimed;
    // The last step may be cut by the profiler's stop: it is dropped below, not refused.
    if (steps.size() == 1 || c.op->begin_ns < steps.back().span->begin_ns) {
      ++untimed_before_last_step;
    }
  }
  if (allreduce_ops == 0) {
    throw TraceError(path, 0, "all-reduces (c10d::allreduce_ / nccl:all_reduce) in the profile",
                     "none");
  }
  if (untimed_before_last_step > 0) {
    const std::string counted = std::to_string(allreduce_untimed) + " of " +
                                std::to_string(allreduce_ops) + " all-reduces without one";
    if (backend == "gloo") {
      throw TraceError(path, 0,
                       "a gloo:all_reduce span (Gloo's worker thread) for every all-reduce launch",
                       counted);
    }
    throw TraceError(
        path, 0, "an NCCL AllReduce kernel linked (by correlation) to every all-reduce launch",
        counted + (!any_kernel ? " and no GPU kernels (a CPU-only trace of an NCCL job?)"
                   : any_allreduce_kernel ? ""
                                          : " and no AllReduce kernel at all (an event-sampled "
                                            "or filtered trace?)"));
  }

  // Files may come in any order (tensorboard_trace_handler names them by host and pid):
  // import_kineto orders them by rank and refuses a rank given twice.
  if (file_count > 1 && world_size != file_count) {
    throw TraceError(path, 0,
                     "a rank of a " + std::to_string(file_count) + "-rank job (one file per rank, or a single rank's file)",
                     "rank " + std::to_string(rank) + " of " + std::to_string(world_size) + " (distributedInfo)");
  }

  // Per step: its all-reduces (buckets, in launch order) and other collectives.
  RankTrace result;
  RunMeta& meta = result.meta;
  meta.source = "imported";
  meta.tool = {"ddp-trace", DDPSIM_VERSION, DDPSIM_GIT_SHA};
  meta.rank = rank;
  meta.local_rank = rank;
  meta.world_size = world_size;
  meta.backend = backend;
  meta.workload_name = "kineto-import";
  meta.settings["profiler"] = "kineto";
  meta.settings["imported_from"] = path;
  meta.settings["comm_hook"] = "allreduce";
  if (!synthesized_steps.empty()) {
    meta.settings["steps_from"] = "DistributedDataParallel.forward (the profile has no ProfilerStep: no prof.step())";
  }
  meta.settings["allreduce_timing"] = !gloo_spans.empty() ? "gloo worker spans"
                                      : lone_nccl_rank && !any_allreduce_kernel
                                          ? "none (one NCCL rank transfers nothing)"
                                          : "nccl kernels";
  if (info.is_object()) {
    for (const char* key : {"nccl_version", "pg_count"}) {
      if (info.contains(key)) {
        meta.settings[key] = info[key].is_string() ? info[key].get<std::string>() : info[key].dump();
      }
    }
  }
  for (const char* key : {"traceName", "schemaVersion"}) {
    if (document.contains(key)) {
      meta.settings[std::string("profile_") + key] =
          document[key].is_string() ? document[key].get<std::string>() : document[key].dump();
    }
  }

  // A bucket's all-reduce carries gradients, in a float dtype (a size or dtype not known is
  // refused below). One of a known non-float dtype (sized, but no float: normalize_dtype) is not
  // a bucket: with find_unused_parameters=True DDP all-reduces its map of the parameters used,
  // once per step; it is kept as one of the step's other collectives.
  const auto is_bucket = [](const Collective& c) {
    const bool known_not_float = c.numel >= 0 && c.bytes > 0 && dtype_size(c.dtype) == 0;
    return c.kind == "all_reduce" && !known_not_float;
  };
  std::vector<std::vector<Collective*>> step_allreduces(steps.size());
  std::vector<std::vector<const Collective*>> step_others(steps.size());
  for (Collective& c : collectives) {
    for (std::size_t s = 0; s < steps.size(); ++s) {
      if (c.op->begin_ns >= steps[s].span->begin_ns && c.op->begin_ns <= steps[s].span->end_ns) {
        if (is_bucket(c)) {
          step_allreduces[s].push_back(&c);
        } else {
          step_others[s].push_back(&c);
        }
        break;
      }
    }
  }
  // The sizes most steps show are the buckets' when Gloo's spans paired a step's launches out of
  // order (pair_again); a step they cannot explain stays as it was.
  std::map<SizeSequence, int> seen;
  SizeSequence most;
  int most_count = 0;
  for (const auto& launches : step_allreduces) {
    if (launches.empty()) continue;
    SizeSequence sizes = sizes_of(launches);
    const int count = ++seen[sizes];
    if (count > most_count) {
      most_count = count;
      most = std::move(sizes);
    }
  }
  std::vector<std::string> paired_again;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    if (pair_again(step_allreduces[s], most)) paired_again.push_back(step_label(steps[s]));
  }
  // The first step with all-reduces sets the layout; every step must match it (a cut last
  // step is dropped, like a rank's cut last line).
  std::size_t reference = 0;
  while (reference < steps.size() && step_allreduces[reference].empty()) ++reference;
  if (reference == steps.size()) {
    throw TraceError(path, 0, "all-reduces inside a ProfilerStep", "none inside any step");
  }
  const std::vector<const Collective*> layout(step_allreduces[reference].begin(), step_allreduces[reference].end());
  if (!paired_again.empty()) meta.settings["gloo_spans_paired_by_size"] = step_list(paired_again);
  for (std::size_t b = 0; b < layout.size(); ++b) {
    const Collective& c = *layout[b];
    if (c.numel < 0 || dtype_size(c.dtype) == 0) {
      throw TraceError(path, 0,
                       "the size of every all-reduce (record_param_comms \"In msg nelems\" and "
                       "\"dtype\", or \"Input Dims\" with record_shapes=True) in a float dtype",
                       "all-reduce " + std::to_string(b) + " of " + steps[reference].span->name +
                           (c.numel < 0 ? " without a size" : " of dtype " + c.dtype));
    }
  }
  // The parameters: one per gradient where the profile shows them with their shapes (DDP's
  // rule can then re-bucket exactly), else one pseudo-parameter per bucket (the reason said).
  const std::vector<Gradient> reference_gradients =
      gradients_of_step(events, steps[reference].span->begin_ns, steps[reference].span->end_ns);
  std::string per_bucket_reason;
  std::optional<GradientLayout> by_gradient = layout_from_gradients(reference_gradients, layout, per_bucket_reason);
  if (by_gradient) {
    meta.parameters = by_gradient->parameters;
    meta.bucket_assignments.push_back(by_gradient->assignment);
    meta.settings["parameters"] = "per-gradient";
    const InferredCaps caps = infer_bucket_caps(meta.parameters, by_gradient->assignment);
    if (caps.consistent) {
      meta.bucket_cap_bytes = caps.cap_bytes;
      meta.first_bucket_cap_bytes = caps.first_bytes;
    }
    meta.settings["bucket_caps"] = caps.describe();
  } else {
    BucketAssignment assignment;
    for (std::size_t b = 0; b < layout.size(); ++b) {
      Parameter parameter;
      parameter.index = static_cast<int>(b);
      parameter.name = "bucket" + std::to_string(b) + ".allreduce";
      parameter.numel = layout[b]->numel;
      parameter.dtype = layout[b]->dtype;
      meta.parameters.push_back(parameter);
      assignment.buckets.push_back({static_cast<int>(b)});
    }
    meta.bucket_assignments.push_back(assignment);
    meta.settings["parameters"] = "per-bucket";
    meta.settings["parameters_reason"] = per_bucket_reason;
  }
  meta.bucket_assignments.back().first_iteration = steps[reference].number;

  // A step whose all-reduces differ from the layout (another count or size, or one without
  // its kernel or worker span) cannot be timed bucket by bucket. A cut last step is dropped;
  // an odd step in the middle (seen once in a profile taken while the cores were loaded) is
  // skipped and said in settings.skipped_steps, as long as most steps keep the layout: when
  // they do not, the layout itself is in doubt and the trace is refused.
  std::vector<std::string> skipped;
  const auto refusal = [&](std::size_t s) {
    return TraceError(path, 0,
                      "the same all-reduces (buckets) in most steps as in " + steps[reference].span->name +
                          " (" + std::to_string(layout.size()) + ")",
                      std::to_string(step_allreduces[s].size()) + " of other sizes in " + steps[s].span->name +
                          " and " + std::to_string(skipped.size()) + " of " +
                          std::to_string(steps.size() - reference) + " steps unlike it");
  };
  for (std::size_t s = reference; s < steps.size(); ++s) {
    const auto& allreduces = step_allreduces[s];
    bool same = allreduces.size() == layout.size();
    for (std::size_t b = 0; same && b < layout.size(); ++b) {
      same = allreduces[b]->numel == layout[b]->numel && allreduces[b]->dtype == layout[b]->dtype;
    }
    for (std::size_t b = 0; same && b < allreduces.size(); ++b) {
      same = lone_nccl_rank || allreduces[b]->kernel != nullptr || allreduces[b]->worker != nullptr;
    }
    // With per-gradient parameters, the step's gradients must be the reference's, in its order.
    std::vector<Gradient> gradients;
    if (same && by_gradient) {
      gradients = gradients_of_step(events, steps[s].span->begin_ns, steps[s].span->end_ns);
      same = same_gradients(gradients, reference_gradients);
    }
    if (!same) {
      if (s + 1 == steps.size() && s > reference) break;
      skipped.push_back(step_label(steps[s]));
      if (2 * skipped.size() >= steps.size() - reference) throw refusal(s);
      continue;
    }
    const KEvent& whole = *steps[s].span;
    const std::int64_t n = steps[s].number;
    std::vector<Event> step;
    add(step, rank, n, EventType::IterationBegin, whole.begin_ns);
    const StepPhases phases = phases_of_step(events, whole.begin_ns, whole.end_ns);
    if (phases.complete()) {
      const std::int64_t backward_end = phases.optimizer != nullptr ? phases.optimizer->begin_ns : whole.end_ns;
      add(step, rank, n, EventType::ForwardBegin, phases.forward->begin_ns);
      add(step, rank, n, EventType::ForwardEnd, phases.forward->end_ns);
      add(step, rank, n, EventType::BackwardBegin, phases.backward_begin_ns);
      add(step, rank, n, EventType::BackwardEnd, std::max(backward_end, phases.backward_begin_ns));
      if (phases.optimizer != nullptr) {
        add(step, rank, n, EventType::OptimizerBegin, phases.optimizer->begin_ns);
        add(step, rank, n, EventType::OptimizerEnd, phases.optimizer->end_ns);
      }
    }
    // Parameter index of the k-th gradient to become ready: see layout_from_gradients.
    for (std::size_t k = 0; k < gradients.size(); ++k) {
      add(step, rank, n, EventType::GradReady, gradients[k].event->end_ns, -1, -1,
          static_cast<int>(gradients.size() - 1 - k));
    }
    // A Gloo worker records its span's end after it marked the work complete, late when it
    // was descheduled in between (2 busy cores); the Reducer copies bucket b out as soon as
    // it saw the work complete, so bucket b's first copy bounds its end too (per-gradient
    // layouts only, where the copies can be counted off by bucket).
    std::vector<const KEvent*> copies;
    if (by_gradient) copies = bucket_copies_of_step(events, whole.begin_ns, whole.end_ns);
    if (copies.size() != meta.parameters.size()) copies.clear();
    std::size_t first_copy = 0;
    for (std::size_t b = 0; b < allreduces.size(); ++b) {
      const Collective& c = *allreduces[b];
      const int bucket = static_cast<int>(b);
      const std::int64_t ready = c.op->begin_ns;
      const KEvent* timed = c.kernel != nullptr ? c.kernel : c.worker;
      const std::int64_t begin = timed != nullptr ? std::max(timed->begin_ns, ready) : ready;
      std::int64_t end = timed != nullptr ? std::max(timed->end_ns, begin) : begin;
      if (!copies.empty() && c.worker != nullptr) {
        end = std::max(begin, std::min(end, copies[first_copy]->begin_ns));
        first_copy += meta.bucket_assignments.back().buckets[b].size();
      }
      add(step, rank, n, EventType::BucketReady, ready, bucket, c.bytes);
      add(step, rank, n, EventType::AllreduceBegin, begin, bucket, c.bytes);
      add(step, rank, n, EventType::AllreduceEnd, end, bucket, c.bytes);
    }
    for (const Collective* c : step_others[s]) {
      const KEvent& timed = c->kernel != nullptr ? *c->kernel : c->worker != nullptr ? *c->worker : *c->op;
      Event event;
      event.rank = rank;
      event.iteration = n;
      event.type = EventType::Collective;
      event.t_ns = timed.begin_ns;
      event.bytes = c->bytes;
      event.dur_ns = timed.end_ns - timed.begin_ns;
      event.kind = c->kind;
      event.message = c->kernel != nullptr ? "gpu kernel" : c->worker != nullptr ? "gloo worker span" : "cpu op (no kernel)";
      step.push_back(std::move(event));
    }
    add(step, rank, n, EventType::IterationEnd, whole.end_ns);
    // GPU work may outlast the CPU's step: clamp to the step so time never runs backwards.
    for (Event& event : step) event.t_ns = std::clamp(event.t_ns, whole.begin_ns, whole.end_ns);
    std::stable_sort(step.begin(), step.end(),
                     [](const Event& a, const Event& b) { return a.t_ns < b.t_ns; });
    result.events.insert(result.events.end(), step.begin(), step.end());
  }
  if (!skipped.empty()) result.meta.settings["skipped_steps"] = step_list(skipped);
  return result;
}

}  // namespace ddpsim::trace::detail
