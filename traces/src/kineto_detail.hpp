// The Kineto importer's internals: reading a profiler file and its times, the events it appends
// (kineto.cpp), one rank's import (kineto_standard.cpp), and what a step's phase and gradient
// events say (kineto_steps.cpp).
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/model.hpp"

namespace ddpsim::trace::detail {

// One complete ("X") event of a standard profile, times in nanoseconds.
struct KEvent {
  std::string name;
  std::string cat;
  std::string thread;  // pid/tid
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  const nlohmann::json* args = nullptr;
};

// The phases of one ProfilerStep as DDP and the autograd engine label them: forward is
// "DistributedDataParallel.forward", backward begins with the first
// "autograd::engine::evaluate_function: ..." after it, the optimizer step is the first
// "Optimizer.step#..." after that; backward ends where the optimizer step begins (else at the
// step's end). Null / -1 where the profile does not show them.
struct StepPhases {
  const KEvent* forward = nullptr;
  std::int64_t backward_begin_ns = -1;
  const KEvent* optimizer = nullptr;
  bool complete() const { return forward != nullptr && backward_begin_ns >= 0; }
};

// One gradient accumulated in a step ("torch::autograd::AccumulateGrad"): its end is when DDP's
// hook sees it ready; its "Input Dims"/"Input type" (record_shapes=True) are its size and dtype.
struct Gradient {
  const KEvent* event = nullptr;
  std::int64_t numel = -1;  // -1: recorded without shapes
  std::string dtype;        // ddpsim's spelling ("float32", ...)
  std::string shape;        // e.g. "1024x1024"
};

// One iteration of a profile: "ProfilerStep#N" where prof.step() marked them. Where nothing did
// (a profile taken with `with profile(...)`, no schedule), one step runs from each
// "DistributedDataParallel.forward" to the next, the last to the end of the optimizer step after
// it, numbered from 0; `synthesized` holds those spans (named kForwardStepPrefix + N).
// TraceError, naming `path`, for step labels out of order or overlapping, or no steps at all.
struct ProfileStep {
  std::int64_t number;
  const KEvent* span;
};
std::vector<ProfileStep> profile_steps(const std::vector<KEvent>& events, const std::string& path,
                                       std::deque<KEvent>& synthesized);

// Whether the standard importer keeps an event of this name and category (the filter of its
// parse: a real profile is mostly operators and kernels it does not read).
bool is_step_structure(const std::string& name, const std::string& cat);

// The phases and the gradients (in the order they became ready) of the step [begin_ns, end_ns]
// among `events` (sorted by begin).
StepPhases phases_of_step(const std::vector<KEvent>& events, std::int64_t begin_ns, std::int64_t end_ns);
std::vector<Gradient> gradients_of_step(const std::vector<KEvent>& events, std::int64_t begin_ns,
                                        std::int64_t end_ns);

// The Reducer's copies of averaged gradients out of their buckets in the step
// ("torch.distributed.ddp.reducer::copy_bucket_to_grad", one per parameter, in bucket order:
// it copies bucket b out once its all-reduce has completed).
std::vector<const KEvent*> bucket_copies_of_step(const std::vector<KEvent>& events, std::int64_t begin_ns,
                                                 std::int64_t end_ns);

// The profiler's dtype names ("Float", "float", "c10::Half", "long int", ...) -> ddpsim's
// spelling for the four parameter dtypes, or "" with the element size in `size` (-1: unknown).
std::string normalize_dtype(const std::string& name, std::int64_t& size);

// The first tensor's element count in an "Input Dims" list, or -1; `which` is its position.
std::int64_t first_dims_numel(const nlohmann::json& args, std::size_t* which = nullptr);

// prof.step() with a schedule labels each iteration "ProfilerStep#N".
inline constexpr const char* kProfilerStepPrefix = "ProfilerStep#";
// A step cut at DDP's forwards where the profile has no ProfilerStep (profile_steps).
inline constexpr const char* kForwardStepPrefix = "DistributedDataParallel step #";

inline std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

inline bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Profiler times are (possibly fractional) microseconds.
inline std::int64_t microseconds_to_ns(double microseconds) {
  return static_cast<std::int64_t>(std::llround(microseconds * 1000.0));
}

// The whole file, gunzipped when it is gzip (plain files are read unchanged). TraceError naming
// the file and `what` when it cannot be opened or decompressed.
std::string read_maybe_gzip(const std::string& path, const std::string& what);

// Appends one event of `rank` (bucket, bytes, param: -1 where they do not apply).
void add(std::vector<Event>& events, int rank, std::int64_t iteration, EventType type,
         std::int64_t t_ns, int bucket = -1, std::int64_t bytes = -1, int param = -1);

// One rank's trace from a standard torch.profiler trace: file `position` of
// `file_count`.
RankTrace import_standard(const std::string& path, int position, int file_count);

}  // namespace ddpsim::trace::detail
