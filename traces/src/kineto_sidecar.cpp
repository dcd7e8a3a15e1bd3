// Import of PyTorch profiler Chrome traces of our own Python DDP job (experiments/peer/), with
// the sidecar python_ddp_profiled.py writes beside each (kineto_sidecar_path).
//
// What torch 1.13 (Debian python3-torch, built without Kineto) writes, and what we use:
//  - the export is the legacy autograd profiler's: a bare JSON array of complete ("ph": "X")
//    events, ts/dur in microseconds from the profile's start, and no args (record_shapes adds
//    nothing), so sizes cannot come from the trace. A Kineto build writes an object with
//    "traceEvents" and floating-point microseconds; both are accepted.
//  - our record_function labels bound each iteration and its phases;
//  - DDP's Reducer launches bucket b's all-reduce ("c10d::allreduce_", on the backward thread)
//    strictly in bucket order, and Gloo's FIFO work queue hands them to its worker threads
//    in that order ("gloo:all_reduce", from a worker taking the work to its completion). So
//    the k-th of each inside an iteration's backward belongs to bucket k. Gloo has two
//    worker threads by default, so two buckets' transfers can overlap in time;
//  - a "gloo:all_reduce" ends *after* Gloo marked the work's future complete, so a worker
//    thread descheduled in between (2 busy cores) records ends late, even after backward
//    returned (seen: 1.8 ms). The Reducer waits for bucket b's future and then copies its
//    parameters out ("...reducer::copy_bucket_to_grad", one per parameter, bucket order), so
//    bucket b's first copy also bounds its completion: the end is the earlier of the two;
//  - "torch::autograd::AccumulateGrad" ends when a gradient is ready; with a static graph
//    the k-th is the k-th parameter of the logger's grad-ready order;
//  - the sidecar (kineto_sidecar_path) gives parameters, bucket layout and the clock anchor.

#include "kineto_detail.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"

namespace ddpsim::trace::detail {
namespace {

using nlohmann::json;

constexpr const char* kIterationPrefix = "ddpsim.iteration#";
constexpr const char* kForward = "ddpsim.forward";
constexpr const char* kForwardFallback = "DistributedDataParallel.forward";
constexpr const char* kBackward = "ddpsim.backward";
constexpr const char* kOptimizer = "ddpsim.optimizer";
constexpr const char* kOptimizerFallbackPrefix = "Optimizer.step#";
constexpr const char* kAllreduceLaunch = "c10d::allreduce_";
constexpr const char* kAllreduceTransfer = "gloo:all_reduce";
constexpr const char* kGradAccumulated = "torch::autograd::AccumulateGrad";
constexpr const char* kCopyBucketToGrad = "torch.distributed.ddp.reducer::copy_bucket_to_grad";

// One complete event, on CLOCK_MONOTONIC nanoseconds once the anchor is added.
struct Span {
  std::string name;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
};

struct ProfilerFile {
  std::vector<Span> spans;  // sorted by begin
  bool legacy = false;      // bare array: ts relative to the profile's start
};

struct Sidecar {
  RunMeta meta;  // everything but the events
  std::vector<int> grad_ready_order;
  std::int64_t clock_anchor_ns = 0;
};

json parse_json_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path, 0, what, "a file that cannot be opened");
  try {
    return json::parse(in);
  } catch (const json::exception& error) {
    throw TraceError(path, 0, what, std::string("invalid JSON (") + error.what() + ")");
  }
}

json parse_profiler_json(const std::string& path, const std::string& what) {
  const std::string text = read_maybe_gzip(path, what);
  try {
    return json::parse(text);
  } catch (const json::exception& error) {
    throw TraceError(path, 0, what, std::string("invalid JSON (") + error.what() + ")");
  }
}

ProfilerFile read_profiler_file(const std::string& path, const json& document) {
  const std::string what = "a PyTorch profiler Chrome trace (prof.export_chrome_trace)";
  const json* events = nullptr;
  ProfilerFile file;
  if (document.is_array()) {
    events = &document;
    file.legacy = true;
  } else if (document.is_object() && document.contains("traceEvents") &&
             document["traceEvents"].is_array()) {
    events = &document["traceEvents"];
  } else {
    throw TraceError(path, 0, what, "JSON that is neither an event array nor has traceEvents");
  }
  for (const json& event : *events) {
    if (!event.is_object() || event.value("ph", "") != "X") continue;
    const auto name = event.find("name");
    const auto ts = event.find("ts");
    const auto dur = event.find("dur");
    if (name == event.end() || !name->is_string() || ts == event.end() ||
        !ts->is_number() || dur == event.end() || !dur->is_number()) {
      continue;
    }
    const std::int64_t begin = microseconds_to_ns(ts->get<double>());
    file.spans.push_back({name->get<std::string>(), begin,
                          begin + microseconds_to_ns(dur->get<double>())});
  }
  std::stable_sort(file.spans.begin(), file.spans.end(),
                   [](const Span& a, const Span& b) { return a.begin_ns < b.begin_ns; });
  return file;
}

// --- sidecar ------------------------------------------------------------------------------

template <typename T>
T required(const json& object, const char* key, const std::string& path) {
  const auto field = object.find(key);
  if (field == object.end()) {
    throw TraceError(path, 0, std::string("sidecar field \"") + key + "\"", "none");
  }
  try {
    return field->get<T>();
  } catch (const json::exception&) {
    throw TraceError(path, 0, std::string("sidecar field \"") + key + "\" of the right type",
                     field->dump());
  }
}

std::map<std::string, std::string> string_map(const json& object) {
  std::map<std::string, std::string> result;
  if (!object.is_object()) return result;
  for (const auto& [key, value] : object.items()) {
    result[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  return result;
}

std::vector<Parameter> read_parameters(const json& sidecar, const std::string& path) {
  std::vector<Parameter> parameters;
  for (const json& entry : required<json>(sidecar, "parameters", path)) {
    Parameter parameter;
    parameter.index = required<int>(entry, "index", path);
    parameter.name = required<std::string>(entry, "name", path);
    parameter.numel = required<std::int64_t>(entry, "numel", path);
    parameter.dtype = required<std::string>(entry, "dtype", path);
    if (parameter.index != static_cast<int>(parameters.size())) {
      throw TraceError(path, 0, "parameter index " + std::to_string(parameters.size()),
                       std::to_string(parameter.index));
    }
    if (dtype_size(parameter.dtype) == 0) {
      throw TraceError(path, 0, "a parameter dtype float32, float16, bfloat16 or float64",
                       "\"" + parameter.dtype + "\" for " + parameter.name);
    }
    parameters.push_back(std::move(parameter));
  }
  if (parameters.empty()) throw TraceError(path, 0, "at least one parameter", "none");
  return parameters;
}

Sidecar read_sidecar(const std::string& trace_path, int rank, int world_size) {
  const std::string path = kineto_sidecar_path(trace_path);
  const json sidecar = parse_json_file(
      path, "the sidecar of " + trace_path + " (written by python_ddp_profiled.py)");
  if (!sidecar.is_object() || sidecar.value("schema", "") != "ddpsim-kineto-sidecar") {
    throw TraceError(path, 0, "schema \"ddpsim-kineto-sidecar\"",
                     sidecar.is_object() ? sidecar.value("schema", "none") : "not an object");
  }
  Sidecar result;
  RunMeta& meta = result.meta;
  meta.source = "imported";
  meta.tool = {"ddp-trace", DDPSIM_VERSION, DDPSIM_GIT_SHA};
  meta.rank = required<int>(sidecar, "rank", path);
  meta.local_rank = meta.rank;  // the peer job runs every rank on one host
  meta.world_size = required<int>(sidecar, "world_size", path);
  if (meta.rank != rank) {
    throw TraceError(path, 0, "rank " + std::to_string(rank) + " (its position in the list)",
                     "rank " + std::to_string(meta.rank));
  }
  if (meta.world_size != world_size) {
    throw TraceError(path, 0, "world_size " + std::to_string(world_size) + " (one file per rank)",
                     std::to_string(meta.world_size));
  }
  meta.backend = sidecar.value("backend", "gloo");
  meta.host = sidecar.value("host", "");
  meta.start_time_utc = sidecar.value("start_time_utc", "");
  const json workload = sidecar.value("workload", json::object());
  meta.workload = string_map(workload);
  meta.workload_name = meta.workload.count("name") ? meta.workload["name"] : "python-ddp";
  meta.workload.erase("name");
  meta.parameters = read_parameters(sidecar, path);
  meta.bucket_cap_bytes = required<std::int64_t>(sidecar, "bucket_cap_bytes", path);
  meta.first_bucket_cap_bytes = required<std::int64_t>(sidecar, "first_bucket_cap_bytes", path);

  const auto buckets = required<std::vector<std::vector<int>>>(sidecar, "buckets", path);
  std::set<int> seen;
  for (const auto& bucket : buckets) {
    for (const int param : bucket) {
      if (param < 0 || param >= static_cast<int>(meta.parameters.size()) ||
          !seen.insert(param).second) {
        throw TraceError(path, 0, "buckets of distinct parameter indices 0.." +
                                      std::to_string(meta.parameters.size() - 1),
                         "index " + std::to_string(param));
      }
    }
  }
  if (buckets.empty()) throw TraceError(path, 0, "at least one bucket", "none");
  const auto profiled = required<std::vector<std::int64_t>>(sidecar, "profiled_iterations", path);
  meta.bucket_assignments.push_back({profiled.empty() ? 0 : profiled.front(), buckets});

  result.grad_ready_order = sidecar.value("grad_ready_order", std::vector<int>{});
  const auto anchor = sidecar.value("profile_start_monotonic_ns", std::vector<std::int64_t>{});
  if (anchor.size() == 2) result.clock_anchor_ns = anchor[0] + (anchor[1] - anchor[0]) / 2;

  meta.settings["comm_hook"] = "allreduce";
  meta.settings["imported_from"] = trace_path;
  if (sidecar.contains("torch_version")) {
    meta.settings["torch_version"] = sidecar["torch_version"].is_string()
                                         ? sidecar["torch_version"].get<std::string>()
                                         : sidecar["torch_version"].dump();
  }
  return result;
}

// --- conversion ---------------------------------------------------------------------------

// Spans that begin inside [window.begin_ns, window.end_ns] and satisfy `matches`, in order.
template <typename Predicate>
std::vector<const Span*> spans_within(const std::vector<Span>& spans, const Span& window,
                                      Predicate matches) {
  std::vector<const Span*> result;
  for (const Span& span : spans) {
    if (span.begin_ns < window.begin_ns) continue;
    if (span.begin_ns > window.end_ns) break;
    if (matches(span)) result.push_back(&span);
  }
  return result;
}

const Span* first_named(const std::vector<Span>& spans, const Span& window,
                        const std::string& name) {
  const auto found = spans_within(spans, window, [&](const Span& s) { return s.name == name; });
  return found.empty() ? nullptr : found.front();
}

struct IterationSpan {
  std::int64_t number = 0;
  const Span* span = nullptr;
};

std::vector<IterationSpan> find_iterations(const std::vector<Span>& spans,
                                           const std::string& path) {
  for (const char* prefix : {kIterationPrefix, kProfilerStepPrefix}) {
    std::vector<IterationSpan> iterations;
    for (const Span& span : spans) {
      if (!starts_with(span.name, prefix)) continue;
      const std::string number = span.name.substr(std::char_traits<char>::length(prefix));
      try {
        std::size_t used = 0;
        const long long value = std::stoll(number, &used);
        if (used != number.size() || value < 0) throw std::invalid_argument(number);
        iterations.push_back({value, &span});
      } catch (const std::exception&) {
        throw TraceError(path, 0, std::string("a label ") + prefix + "N with an integer N",
                         "\"" + span.name + "\"");
      }
    }
    if (iterations.empty()) continue;
    for (std::size_t i = 1; i < iterations.size(); ++i) {
      if (iterations[i].number <= iterations[i - 1].number) {
        throw TraceError(path, 0, "iteration labels increasing with time",
                         iterations[i].span->name + " after " + iterations[i - 1].span->name);
      }
    }
    return iterations;
  }
  throw TraceError(path, 0,
                   std::string("iteration labels (record_function \"") + kIterationPrefix +
                       "N\" or " + kProfilerStepPrefix + "N)",
                   "none");
}

const Span& required_phase(const std::vector<Span>& spans, const IterationSpan& iteration,
                           const char* name, const char* fallback, const std::string& path) {
  const Span* phase = first_named(spans, *iteration.span, name);
  if (phase == nullptr && fallback != nullptr) phase = first_named(spans, *iteration.span, fallback);
  if (phase == nullptr) {
    throw TraceError(path, 0,
                     std::string("a \"") + name + "\" label in " + iteration.span->name, "none");
  }
  return *phase;
}

std::vector<Event> convert_events(const ProfilerFile& file, const Sidecar& sidecar,
                                  const std::string& path) {
  const RunMeta& meta = sidecar.meta;
  const BucketAssignment& layout = meta.bucket_assignments.front();
  const int bucket_count = static_cast<int>(layout.buckets.size());
  const auto& spans = file.spans;
  const bool any_transfer = std::any_of(spans.begin(), spans.end(), [](const Span& s) {
    return s.name == kAllreduceTransfer;
  });
  if (!any_transfer) {
    throw TraceError(path, 0, std::string("all-reduce events (") + kAllreduceTransfer + ")",
                     "none");
  }
  const bool use_grad_order =
      sidecar.grad_ready_order.size() == meta.parameters.size();

  std::vector<Event> events;
  const int rank = meta.rank;
  const std::vector<IterationSpan> iterations = find_iterations(spans, path);
  for (const IterationSpan& iteration : iterations) {
    if (iteration.number < layout.first_iteration) continue;  // before the recorded layout
    const std::int64_t n = iteration.number;
    const Span& forward = required_phase(spans, iteration, kForward, kForwardFallback, path);
    const Span& backward = required_phase(spans, iteration, kBackward, nullptr, path);
    const Span* optimizer = first_named(spans, *iteration.span, kOptimizer);
    if (optimizer == nullptr) {
      const auto steps = spans_within(spans, *iteration.span, [](const Span& s) {
        return starts_with(s.name, kOptimizerFallbackPrefix);
      });
      if (steps.empty()) {
        throw TraceError(path, 0,
                         std::string("a \"") + kOptimizer + "\" label in " + iteration.span->name,
                         "none");
      }
      optimizer = steps.front();
    }

    const auto transfers = spans_within(
        spans, backward, [](const Span& s) { return s.name == kAllreduceTransfer; });
    const auto launches = spans_within(
        spans, backward, [](const Span& s) { return s.name == kAllreduceLaunch; });
    // A Gloo worker that records a transfer's end after the profiler stopped loses the whole
    // event: the last iteration may be cut, like a rank's last line. Drop it, if not alone.
    const bool last = &iteration == &iterations.back();
    if (last && !events.empty() && static_cast<int>(transfers.size()) < bucket_count) break;
    if (static_cast<int>(transfers.size()) != bucket_count) {
      throw TraceError(path, 0,
                       std::to_string(bucket_count) + " " + kAllreduceTransfer +
                           " events (one per bucket of the sidecar) in the backward of " +
                           iteration.span->name,
                       std::to_string(transfers.size()));
    }
    // Without the launch events (another build), the transfer's start is the best we have.
    const bool have_launches = launches.size() == transfers.size();

    // Bucket b's completion as the Reducer saw it (see the top of this file).
    const auto copies = spans_within(
        spans, backward, [](const Span& s) { return s.name == kCopyBucketToGrad; });
    std::size_t layout_params = 0;
    for (const auto& bucket : layout.buckets) layout_params += bucket.size();
    const bool have_copies = copies.size() == layout_params;

    const Span& whole = *iteration.span;
    std::vector<Event> step;
    add(step, rank, n, EventType::IterationBegin, whole.begin_ns);
    add(step, rank, n, EventType::ForwardBegin, forward.begin_ns);
    add(step, rank, n, EventType::ForwardEnd, forward.end_ns);
    add(step, rank, n, EventType::BackwardBegin, backward.begin_ns);
    if (use_grad_order) {
      const auto grads = spans_within(
          spans, backward, [](const Span& s) { return s.name == kGradAccumulated; });
      if (grads.size() == meta.parameters.size()) {
        for (std::size_t k = 0; k < grads.size(); ++k) {
          add(step, rank, n, EventType::GradReady, grads[k]->end_ns, -1, -1,
              sidecar.grad_ready_order[k]);
        }
      }
    }
    std::size_t first_copy = 0;
    for (int bucket = 0; bucket < bucket_count; ++bucket) {
      const auto b = static_cast<std::size_t>(bucket);
      const std::int64_t bytes = meta.bucket_bytes(layout, bucket);
      const std::int64_t launch_ns =
          have_launches ? launches[b]->begin_ns : transfers[b]->begin_ns;
      std::int64_t end_ns = std::min(transfers[b]->end_ns, backward.end_ns);
      if (have_copies) end_ns = std::min(end_ns, copies[first_copy]->begin_ns);
      first_copy += layout.buckets[b].size();
      // DDP launches a bucket the moment its last gradient arrives: launch = bucket_ready.
      add(step, rank, n, EventType::BucketReady, launch_ns, bucket, bytes);
      add(step, rank, n, EventType::AllreduceBegin, launch_ns, bucket, bytes);
      add(step, rank, n, EventType::AllreduceEnd, std::max(end_ns, launch_ns), bucket, bytes);
    }
    add(step, rank, n, EventType::BackwardEnd, backward.end_ns);
    add(step, rank, n, EventType::OptimizerBegin, optimizer->begin_ns);
    add(step, rank, n, EventType::OptimizerEnd, optimizer->end_ns);
    add(step, rank, n, EventType::IterationEnd, whole.end_ns);
    // The pieces were added in causal order; a stable sort by time keeps it for ties and
    // interleaves gradients, launches and completions as they happened. Clamping to the
    // iteration keeps t_ns non-decreasing across iterations whatever the profiler recorded.
    for (Event& event : step) {
      event.t_ns = sidecar.clock_anchor_ns +
                   std::clamp(event.t_ns, whole.begin_ns, whole.end_ns);
    }
    std::stable_sort(step.begin(), step.end(),
                     [](const Event& a, const Event& b) { return a.t_ns < b.t_ns; });
    events.insert(events.end(), step.begin(), step.end());
  }
  if (events.empty()) {
    throw TraceError(path, 0,
                     "profiled iterations from " + std::to_string(layout.first_iteration) +
                         " on (the sidecar's profiled_iterations)",
                     "none");
  }
  return events;
}

}  // namespace

RankTrace import_with_sidecar(const std::string& path, int rank, int world_size) {
  const ProfilerFile file = read_profiler_file(
      path, parse_profiler_json(path, "a PyTorch profiler Chrome trace (prof.export_chrome_trace)"));
  Sidecar sidecar = read_sidecar(path, rank, world_size);
  if (!file.legacy) sidecar.clock_anchor_ns = 0;  // Kineto's ts are already absolute
  sidecar.meta.settings["profiler"] = file.legacy ? "autograd-legacy" : "kineto";
  RankTrace rank_trace;
  rank_trace.events = convert_events(file, sidecar, path);
  rank_trace.meta = std::move(sidecar.meta);
  return rank_trace;
}

}  // namespace ddpsim::trace::detail
