// Import of PyTorch profiler Chrome traces of a real Python DDP job (experiments/peer/).
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
#include "ddpsim/trace/kineto.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "ddpsim/trace/io.hpp"

namespace ddpsim::trace {
namespace {

using nlohmann::json;

constexpr const char* kIterationPrefix = "ddpsim.iteration#";
constexpr const char* kProfilerStepPrefix = "ProfilerStep#";  // prof.step() with a schedule
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

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

json parse_json_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path, 0, what, "a file that cannot be opened");
  try {
    return json::parse(in);
  } catch (const json::exception& error) {
    throw TraceError(path, 0, what, std::string("invalid JSON (") + error.what() + ")");
  }
}

std::int64_t microseconds_to_ns(double microseconds) {
  return static_cast<std::int64_t>(std::llround(microseconds * 1000.0));
}

json parse_profiler_json(const std::string& path, const std::string& what);

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

void add(std::vector<Event>& events, int rank, std::int64_t iteration, EventType type,
         std::int64_t t_ns, int bucket = -1, std::int64_t bytes = -1, int param = -1) {
  Event event;
  event.rank = rank;
  event.iteration = iteration;
  event.type = type;
  event.t_ns = t_ns;
  event.bucket = bucket;
  event.bytes = bytes;
  event.param = param;
  events.push_back(std::move(event));
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

// --- standard profiler traces (no sidecar) ------------------------------------------------
//
// What a torch.profiler trace of a DDP job holds, and what we use (PyTorch 1.13-2.x,
// schemaVersion 1; see /work/shared/kineto-real/README.md for the real ones tested):
//  - "ProfilerStep#N" (cpu_op / user_annotation) bounds iteration N;
//  - every collective is a "c10d::<name>_" cpu_op (allreduce_, alltoall_base_,
//    _allgather_base_, broadcast_, ...). Inside it, on the same thread: "record_param_comms"
//    ("Collective name", "In msg nelems", "dtype" in newer PyTorch), the "nccl:<name>"
//    annotation ("Input Dims" and "Input type" when record_shapes was on), and the CUDA
//    runtime launch whose "correlation" names the NCCL kernel on the GPU;
//  - DDP's Reducer launches bucket b's all-reduce when the bucket is ready, in bucket order:
//    the k-th all-reduce of a step is bucket k, its launch (cpu_op start) is bucket_ready,
//    and its kernel's start/end are allreduce_begin/end;
//  - there are no per-parameter sizes or gradient times: each bucket becomes one
//    pseudo-parameter ("parameters": "per-bucket" in settings), so the layout cannot be
//    re-bucketed; the rest of the step (forward, backward compute, optimizer, and the other
//    collectives, recorded as "collective" events) is replayed as measured compute.

struct KEvent {
  std::string name;
  std::string cat;
  std::string thread;  // pid/tid
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  const json* args = nullptr;
};

struct Collective {
  std::string kind;  // "all_reduce", "all_to_all", ...
  const KEvent* op = nullptr;
  const KEvent* kernel = nullptr;  // NCCL: the kernel the launch enqueued (by correlation)
  const KEvent* worker = nullptr;  // Gloo: the "gloo:all_reduce" span on Gloo's worker thread
  std::int64_t numel = -1;
  std::string dtype;  // ddpsim spelling when known, else the profiler's
  std::int64_t bytes = -1;
};

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The profiler's dtype names ("Float", "float", "c10::Half", "long int", ...) -> ddpsim's
// spelling for the four parameter dtypes, or "" with the element size in `size`.
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

std::string read_maybe_gzip(const std::string& path, const std::string& what) {
  gzFile file = gzopen(path.c_str(), "rb");  // reads plain files unchanged too
  if (file == nullptr) throw TraceError(path, 0, what, "a file that cannot be opened");
  std::string text;
  char buffer[1 << 16];
  int got = 0;
  while ((got = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(got));
  int error = Z_OK;
  const char* message = gzerror(file, &error);
  const std::string error_text = message == nullptr ? "" : message;
  gzclose(file);
  if (got < 0 || (error != Z_OK && error != Z_STREAM_END)) {
    throw TraceError(path, 0, what, "a file that cannot be decompressed (" + error_text + ")");
  }
  return text;
}

// Parses a standard profile keeping only the events the importer reads: a real profile is
// mostly operators and kernels of the model, and holding all of them costs ~9x the file in
// memory. Kept: complete ("X") events that are steps, collectives (c10d::, nccl:, gloo:,
// record_param_comms), CUDA runtime calls (their correlation ids lead to kernels) and NCCL
// kernels; `saw_kernel` says whether any GPU kernel was dropped (a GPU trace).
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
           starts_with(name, "gloo:") || name == "record_param_comms";
  };
  try {
    return json::parse(text, keep);
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

// The first tensor's element count in an "Input Dims" list, or -1.
std::int64_t first_dims_numel(const json& args, std::size_t* which = nullptr) {
  const auto dims = args.find("Input Dims");
  if (dims == args.end() || !dims->is_array()) return -1;
  for (std::size_t i = 0; i < dims->size(); ++i) {
    const json& shape = (*dims)[i];
    if (!shape.is_array() || shape.empty()) continue;
    std::int64_t numel = 1;
    for (const json& extent : shape) {
      if (!extent.is_number_integer()) return -1;
      numel *= extent.get<std::int64_t>();
    }
    if (which != nullptr) *which = i;
    return numel;
  }
  return -1;
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

std::string kineto_sidecar_path(const std::string& trace_path);

namespace {

RankTrace import_standard(const std::string& path, int position, int file_count) {
  const std::string what = "a PyTorch profiler trace (torch.profiler, .json or .json.gz)";
  StandardFile file;
  bool saw_compute_kernel = false;
  file.document = parse_standard_profile(path, what, saw_compute_kernel);
  const json& document = file.document;
  if (document.is_array()) {
    throw TraceError(kineto_sidecar_path(path), 0,
                     "the sidecar of " + path +
                         " (written by python_ddp_profiled.py): a legacy autograd-profiler "
                         "trace holds no message sizes",
                     "no such file");
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

  // Steps.
  struct Step {
    std::int64_t number;
    const KEvent* span;
  };
  std::vector<Step> steps;
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
      throw TraceError(path, 0, std::string("step labels ") + kProfilerStepPrefix + "N",
                       "\"" + e.name + "\"");
    }
    if (!steps.empty() && value <= steps.back().number) {
      throw TraceError(path, 0, "ProfilerStep numbers increasing with time",
                       e.name + " after " + steps.back().span->name);
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
  if (steps.empty()) {
    throw TraceError(path, 0,
                     "ProfilerStep#N events (torch.profiler with a schedule and prof.step())",
                     "none");
  }

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
    for (const Step& step : steps) {
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

  if (file_count > 1 && (world_size != file_count || rank != position)) {
    throw TraceError(path, 0,
                     "rank " + std::to_string(position) + " of " + std::to_string(file_count) +
                         " (one file per rank, in rank order, or a single rank's file)",
                     "rank " + std::to_string(rank) + " of " + std::to_string(world_size) +
                         " (distributedInfo)");
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
  meta.settings["parameters"] = "per-bucket";
  meta.settings["comm_hook"] = "allreduce";
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

  std::vector<std::vector<const Collective*>> step_allreduces(steps.size());
  std::vector<std::vector<const Collective*>> step_others(steps.size());
  for (const Collective& c : collectives) {
    for (std::size_t s = 0; s < steps.size(); ++s) {
      if (c.op->begin_ns >= steps[s].span->begin_ns && c.op->begin_ns <= steps[s].span->end_ns) {
        (c.kind == "all_reduce" ? step_allreduces : step_others)[s].push_back(&c);
        break;
      }
    }
  }
  // The first step with all-reduces sets the layout; every step must match it (a cut last
  // step is dropped, like a rank's cut last line).
  std::size_t reference = 0;
  while (reference < steps.size() && step_allreduces[reference].empty()) ++reference;
  if (reference == steps.size()) {
    throw TraceError(path, 0, "all-reduces inside a ProfilerStep", "none inside any step");
  }
  const auto& layout = step_allreduces[reference];
  for (std::size_t b = 0; b < layout.size(); ++b) {
    const Collective& c = *layout[b];
    if (c.numel < 0 || dtype_size(c.dtype) == 0) {
      throw TraceError(path, 0,
                       "the size of every all-reduce (record_param_comms \"In msg nelems\" and "
                       "\"dtype\", or \"Input Dims\" with record_shapes=True) in a float dtype",
                       "all-reduce " + std::to_string(b) + " of " + steps[reference].span->name +
                           (c.numel < 0 ? " without a size" : " of dtype " + c.dtype));
    }
    Parameter parameter;
    parameter.index = static_cast<int>(b);
    parameter.name = "bucket" + std::to_string(b) + ".allreduce";
    parameter.numel = c.numel;
    parameter.dtype = c.dtype;
    meta.parameters.push_back(parameter);
  }
  BucketAssignment assignment;
  assignment.first_iteration = steps[reference].number;
  for (std::size_t b = 0; b < layout.size(); ++b) assignment.buckets.push_back({static_cast<int>(b)});
  meta.bucket_assignments.push_back(assignment);

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
    if (!same) {
      if (s + 1 == steps.size() && s > reference) break;
      skipped.push_back("ProfilerStep#" + std::to_string(steps[s].number));  // not the raw name: any bytes
      if (2 * skipped.size() >= steps.size() - reference) throw refusal(s);
      continue;
    }
    const KEvent& whole = *steps[s].span;
    const std::int64_t n = steps[s].number;
    std::vector<Event> step;
    add(step, rank, n, EventType::IterationBegin, whole.begin_ns);
    for (std::size_t b = 0; b < allreduces.size(); ++b) {
      const Collective& c = *allreduces[b];
      const int bucket = static_cast<int>(b);
      const std::int64_t ready = c.op->begin_ns;
      const KEvent* timed = c.kernel != nullptr ? c.kernel : c.worker;
      const std::int64_t begin = timed != nullptr ? std::max(timed->begin_ns, ready) : ready;
      const std::int64_t end = timed != nullptr ? std::max(timed->end_ns, begin) : begin;
      add(step, rank, n, EventType::BucketReady, ready, bucket, c.bytes);
      add(step, rank, n, EventType::AllreduceBegin, begin, bucket, c.bytes);
      add(step, rank, n, EventType::AllreduceEnd, end, bucket, c.bytes);
    }
    for (const Collective* c : step_others[s]) {
      const KEvent& timed = c->kernel != nullptr ? *c->kernel : *c->op;
      Event event;
      event.rank = rank;
      event.iteration = n;
      event.type = EventType::Collective;
      event.t_ns = timed.begin_ns;
      event.bytes = c->bytes;
      event.dur_ns = timed.end_ns - timed.begin_ns;
      event.kind = c->kind;
      event.message = c->kernel != nullptr ? "gpu kernel" : "cpu op (no kernel)";
      step.push_back(std::move(event));
    }
    add(step, rank, n, EventType::IterationEnd, whole.end_ns);
    // GPU work may outlast the CPU's step: clamp to the step so time never runs backwards.
    for (Event& event : step) event.t_ns = std::clamp(event.t_ns, whole.begin_ns, whole.end_ns);
    std::stable_sort(step.begin(), step.end(),
                     [](const Event& a, const Event& b) { return a.t_ns < b.t_ns; });
    result.events.insert(result.events.end(), step.begin(), step.end());
  }
  if (!skipped.empty()) {
    std::string names;
    for (const std::string& name : skipped) names += (names.empty() ? "" : " ") + name;
    result.meta.settings["skipped_steps"] = names;
  }
  return result;
}

}  // namespace

std::string kineto_sidecar_path(const std::string& trace_path) {
  const std::string suffix = ".json";
  if (trace_path.size() > suffix.size() &&
      trace_path.compare(trace_path.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return trace_path.substr(0, trace_path.size() - suffix.size()) + ".ddpsim.json";
  }
  return trace_path + ".ddpsim.json";
}

Trace import_kineto(const std::vector<std::string>& rank_files) {
  if (rank_files.empty()) {
    throw TraceError("<none>", 0, "one profiler trace file per rank", "no files");
  }
  Trace trace;
  const int world_size = static_cast<int>(rank_files.size());
  for (int rank = 0; rank < world_size; ++rank) {
    const std::string& path = rank_files[static_cast<std::size_t>(rank)];
    std::error_code ec;
    if (!std::filesystem::exists(kineto_sidecar_path(path), ec)) {
      // A standard profiler trace (see import_standard).
      trace.ranks.push_back(import_standard(path, rank, world_size));
      continue;
    }
    const ProfilerFile file = read_profiler_file(
        path, parse_profiler_json(path, "a PyTorch profiler Chrome trace (prof.export_chrome_trace)"));
    Sidecar sidecar = read_sidecar(path, rank, world_size);
    if (!file.legacy) sidecar.clock_anchor_ns = 0;  // Kineto's ts are already absolute
    sidecar.meta.settings["profiler"] = file.legacy ? "autograd-legacy" : "kineto";
    RankTrace rank_trace;
    rank_trace.events = convert_events(file, sidecar, path);
    rank_trace.meta = std::move(sidecar.meta);
    trace.ranks.push_back(std::move(rank_trace));
  }
  // One rank's profile of a bigger job: the other ranks are copies of it (said in settings).
  if (world_size == 1 && trace.ranks.front().meta.world_size > 1) {
    const RankTrace source = trace.ranks.front();
    const int job_size = source.meta.world_size;
    constexpr int kMaxReplicated = 4096;
    if (job_size > kMaxReplicated) {
      throw TraceError(rank_files.front(), 0,
                       "a job of at most " + std::to_string(kMaxReplicated) +
                           " ranks to replicate one rank's profile into",
                       std::to_string(job_size) + " ranks");
    }
    trace.ranks.clear();
    for (int r = 0; r < job_size; ++r) {
      RankTrace copy = source;
      copy.meta.rank = r;
      copy.meta.local_rank = r;
      copy.meta.settings["replicated_from_rank"] = std::to_string(source.meta.rank);
      for (Event& event : copy.events) event.rank = r;
      trace.ranks.push_back(std::move(copy));
    }
  }
  return trace;
}

}  // namespace ddpsim::trace
