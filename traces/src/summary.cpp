// ddp-trace summary: the derived quantities of FORMAT.md, from a validated trace.
#include "ddpsim/trace/summary.hpp"
#include "ddpsim/trace/summary_json.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "ddpsim/trace/collective.hpp"
#include "ddpsim/trace/stats.hpp"
#include "ddpsim/trace/timeline.hpp"

namespace ddpsim::trace {

namespace {

constexpr double kNsPerS = 1e9;

double median(const std::vector<double>& values) { return median_of(values); }
double mean(const std::vector<double>& values) { return mean_of(values); }

// Values in the order pushed, kept as distinct values and their counts: median() and mean() are
// median_of and mean_of of the list, to the bit (the mean sums in push order), in memory that
// grows with the distinct values, not with the pushes (one per rank of a class trace).
class Samples {
 public:
  Samples() = default;
  Samples(const Samples&) = delete;  // last_count_ points into its own map
  Samples& operator=(const Samples&) = delete;
  Samples(Samples&&) = default;  // a map's nodes move with it

  void push(double value) {
    if (last_count_ == nullptr || last_value_ != value) {
      last_count_ = &counts_.try_emplace(value, 0).first->second;
      last_value_ = value;
    }
    ++*last_count_;
    sum_ += value;
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  double mean() const { return size_ == 0 ? 0 : sum_ / static_cast<double>(size_); }
  double median() const {
    if (size_ == 0) return 0;
    const std::int64_t middle = size_ / 2;  // median_of's: sorted[middle], or its mean with sorted[middle - 1]
    std::int64_t seen = 0;
    double lower = 0;
    for (const auto& [value, count] : counts_) {
      if (seen <= middle - 1 && middle - 1 < seen + count) lower = value;
      if (middle < seen + count) return size_ % 2 == 1 ? value : (lower + value) / 2;
      seen += count;
    }
    return 0;
  }

 private:
  std::map<double, std::int64_t> counts_;
  std::int64_t* last_count_ = nullptr;  // the count of last_value_, the value pushed last
  double last_value_ = 0;
  double sum_ = 0;
  std::int64_t size_ = 0;
};

double seconds(std::int64_t ns) { return static_cast<double>(ns) / kNsPerS; }

std::string failure_line(const Event& event) {
  std::string line = "rank " + std::to_string(event.rank) + " iteration " +
                     std::to_string(event.iteration);
  if (event.bucket >= 0) line += " bucket " + std::to_string(event.bucket);
  line += ": " + event.kind;
  if (!event.message.empty()) line += ": " + event.message;
  return line;
}

void summarize_buckets(const Trace& trace, const std::vector<Timelines>& timelines, const std::vector<int>& class_of,
                       const std::vector<std::int64_t>& iterations, Summary& summary) {
  const RunMeta& meta = trace.meta();
  if (meta.bucket_assignments.empty()) return;
  // The layout of the last complete iteration (the one DDP settled on), else the last known.
  const BucketAssignment* layout = iterations.empty() ? &meta.bucket_assignments.back()
                                                      : meta.assignment_for(iterations.back());
  if (layout == nullptr) layout = &meta.bucket_assignments.back();
  summary.num_buckets = static_cast<int>(layout->buckets.size());

  std::vector<Samples> times(layout->buckets.size());
  std::vector<std::int64_t> wire_bytes(layout->buckets.size(), -1);
  for (const std::int64_t iteration : iterations) {
    if (meta.assignment_for(iteration) != layout) continue;  // bucket ids mean other buckets
    for (const int entry : class_of) {
      const Timelines& rank = timelines[static_cast<std::size_t>(entry)];
      for (const BucketAllreduce& allreduce : rank.at(iteration).allreduces) {
        if (allreduce.bucket < 0 || allreduce.bucket >= summary.num_buckets) continue;
        const auto b = static_cast<std::size_t>(allreduce.bucket);
        times[b].push(seconds(allreduce.interval.duration_ns()));
        wire_bytes[b] = allreduce.bytes;
      }
    }
  }
  // The network's time per all-reduce (collective.hpp), in the same layout. Over the entries:
  // the rank that started last is the first of its class, and its class the first to start last.
  std::vector<std::vector<double>> transfers(layout->buckets.size());
  for (const CollectiveTransfer& transfer : collective_transfers(trace, timelines)) {
    if (meta.assignment_for(transfer.iteration) != layout) continue;
    if (transfer.bucket < 0 || transfer.bucket >= summary.num_buckets) continue;
    transfers[static_cast<std::size_t>(transfer.bucket)].push_back(transfer.transfer_s);
  }
  const double world = summary.world_size;
  for (int b = 0; b < summary.num_buckets; ++b) {
    const auto index = static_cast<std::size_t>(b);
    BucketStats stats;
    stats.bucket = b;
    // What went on the wire (an fp16 hook halves it) when recorded, else the bucket's size.
    stats.bytes = wire_bytes[index] >= 0 ? wire_bytes[index] : meta.bucket_bytes(*layout, b);
    stats.num_params = static_cast<int>(layout->buckets[index].size());
    stats.median_allreduce_s = times[index].median();
    stats.mean_allreduce_s = times[index].mean();
    stats.median_transfer_s = median(transfers[index]);
    if (stats.median_transfer_s > 0) {
      stats.algbw_gbps = static_cast<double>(stats.bytes) / stats.median_transfer_s / 1e9;
      stats.busbw_gbps = stats.algbw_gbps * 2.0 * (world - 1) / world;
    }
    summary.buckets.push_back(stats);
  }
}

// Lines about mixed precision (optimizer_end's stepped/skipped and loss scale) and evaluation
// phases (eval_begin/eval_end between iterations), from rank 0; nothing without them.
void add_amp_and_evaluation_notes(const Trace& trace, const Timelines& rank0, Summary& summary) {
  std::int64_t steps = 0, skipped = 0;
  std::string first_scale, last_scale;
  for (const Event& event : trace.ranks.front().events) {
    if (event.type == EventType::OptimizerEnd && !event.kind.empty()) {
      ++steps;
      skipped += event.kind == "skipped";
      if (first_scale.empty()) first_scale = event.message;
      last_scale = event.message;
    }
  }
  std::vector<double> eval_seconds;
  const EvalPhase* last_eval = nullptr;
  std::int64_t last_eval_iteration = 0;
  for (const auto& [iteration, timeline] : rank0) {
    for (const EvalPhase& eval : timeline.evals) {
      if (eval.interval.begin < 0 || eval.interval.end < 0) continue;  // not paired
      eval_seconds.push_back(static_cast<double>(eval.interval.end - eval.interval.begin) * 1e-9);
      last_eval = &eval;
      last_eval_iteration = iteration;
    }
  }
  if (steps > 0) {
    const auto amp = trace.meta().settings.find("amp");
    summary.notes.push_back("amp:         " +
                            (amp == trace.meta().settings.end() ? std::string("on") : amp->second) +
                            ", " + std::to_string(skipped) + " of " + std::to_string(steps) +
                            " steps skipped (non-finite gradients), loss scale " + first_scale +
                            " -> " + last_scale + " (before the last step)");
  }
  if (last_eval != nullptr) {
    const std::string& counts = last_eval->message;
    std::int64_t correct = 0, total = 0;
    const auto slash = counts.find('/');
    char line[300];
    if (slash != std::string::npos &&
        std::from_chars(counts.data(), counts.data() + slash, correct).ec == std::errc() &&
        std::from_chars(counts.data() + slash + 1, counts.data() + counts.size(), total).ec ==
            std::errc() &&
        total > 0) {
      std::snprintf(line, sizeof line, "last accuracy %.4f (%s) after iteration %lld",
                    static_cast<double>(correct) / static_cast<double>(total), counts.c_str(),
                    static_cast<long long>(last_eval_iteration + 1));
    } else {
      std::snprintf(line, sizeof line, "last counts \"%s\"", counts.c_str());
    }
    char timing[200];
    std::snprintf(timing, sizeof timing, "%zu phases of median %.3f s between iterations (not compute): ",
                  eval_seconds.size(), median_of(eval_seconds));
    summary.notes.push_back(std::string("evaluation:  ") + timing + line);
  }
}

// Lines about what a profiler import holds (see traces/src/kineto*.cpp).
void add_notes(const Trace& trace, const Timelines& rank0, Summary& summary) {
  const RunMeta& meta = trace.meta();
  const auto setting = [&](const char* key) {
    const auto found = meta.settings.find(key);
    return found == meta.settings.end() ? std::string() : found->second;
  };
  if (setting("parameters") == "per-bucket") {
    std::map<std::string, std::int64_t> elements;
    for (const Parameter& p : meta.parameters) elements[p.dtype] += p.numel;
    std::string line = "elements:    ";
    bool first = true;
    for (const auto& [dtype, numel] : elements) {
      line += (first ? "" : " + ") + std::to_string(numel) + " " + dtype;
      first = false;
    }
    summary.notes.push_back(line + " all-reduced per step in " +
                            std::to_string(meta.parameters.size()) +
                            " buckets (profiler import: one pseudo-parameter per bucket)");
  }
  if (!setting("skipped_steps").empty()) {
    summary.notes.push_back("skipped:     profiler steps " + setting("skipped_steps") +
                            " (their all-reduces differ from the other steps'; not imported)");
  }
  if (!setting("replicated_from_rank").empty()) {
    summary.notes.push_back("replicated:  one rank's profile (rank " +
                            setting("replicated_from_rank") + ") of a " +
                            std::to_string(meta.world_size) +
                            "-rank job; the other ranks are identical copies");
  }
  // Other collectives within the steps, per iteration of rank 0 (their time is part of the
  // measured compute); those between iterations (an evaluation's, a checkpoint's) are not.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> collectives;  // count, dur_ns
  std::set<std::int64_t> iterations;
  bool in_step = false;
  for (const Event& event : trace.ranks.front().events) {
    if (event.type == EventType::IterationBegin) iterations.insert(event.iteration);
    if (event.type == EventType::IterationBegin || event.type == EventType::IterationEnd) {
      in_step = event.type == EventType::IterationBegin;
    }
    if (event.type != EventType::Collective || !in_step) continue;
    auto& entry = collectives[event.kind];
    entry.first += 1;
    entry.second += std::max<std::int64_t>(event.dur_ns, 0);
  }
  if (!collectives.empty() && !iterations.empty()) {
    const double n = static_cast<double>(iterations.size());
    std::string line = "collectives: besides all-reduce, per step on rank 0:";
    for (const auto& [kind, entry] : collectives) {
      char part[200];
      std::snprintf(part, sizeof part, " %s x%.3g (%.3f ms)", kind.c_str(),
                    static_cast<double>(entry.first) / n,
                    static_cast<double>(entry.second) / n * 1e-6);
      line += part;
    }
    summary.notes.push_back(line + "; replayed as measured compute time");
  }
  add_amp_and_evaluation_notes(trace, rank0, summary);
}

}  // namespace

Summary summarize(const Trace& trace) {
  std::vector<int> class_of(trace.ranks.size());
  std::iota(class_of.begin(), class_of.end(), 0);
  return summarize(trace, class_of);
}

Summary summarize(const Trace& trace, const std::vector<int>& class_of) {
  Summary summary;
  if (trace.ranks.empty()) return summary;
  const RunMeta& meta = trace.meta();
  summary.world_size = static_cast<int>(class_of.size());
  summary.source = meta.source;
  summary.workload = meta.workload_name;
  summary.backend = meta.backend;
  summary.num_parameters = static_cast<int>(meta.parameters.size());
  for (const Parameter& p : meta.parameters) summary.parameter_bytes += p.bytes();

  std::vector<Timelines> timelines;
  for (const RankTrace& rank : trace.ranks) {
    timelines.push_back(build_timelines(rank));
    for (const Event& event : rank.events) {
      if (event.type == EventType::Failure) summary.failures.push_back(failure_line(event));
    }
  }
  add_notes(trace, timelines.front(), summary);

  const std::vector<std::int64_t> complete = trace.complete_iterations();
  for (const IterationTime& time : iteration_times_of(timelines, complete)) {
    IterationStats stats;
    stats.iteration = time.iteration;
    stats.rank_time_s.reserve(class_of.size());
    for (const int entry : class_of) stats.rank_time_s.push_back(seconds(time.rank_ns[static_cast<std::size_t>(entry)]));
    stats.time_s = seconds(time.slowest_ns());
    summary.iterations.push_back(std::move(stats));
  }

  const std::vector<std::int64_t> steady = without_warmup(complete);

  std::vector<double> iteration_s, allreduce_per_iter_s;
  Samples forward_s, backward_s, optimizer_s;
  // Sums over every rank and iteration: doubles, as 2^20 ranks' nanoseconds overflow int64.
  double allreduce_ns = 0;
  double hidden_ns = 0;
  for (std::size_t i = 0; i < summary.iterations.size(); ++i) {
    const std::int64_t iteration = summary.iterations[i].iteration;
    if (std::find(steady.begin(), steady.end(), iteration) == steady.end()) continue;
    iteration_s.push_back(summary.iterations[i].time_s);
    double summed_over_ranks = 0;
    for (const int entry : class_of) {
      const IterationTimeline& timeline = timelines[static_cast<std::size_t>(entry)].at(iteration);
      if (timeline.forward.complete()) forward_s.push(seconds(timeline.forward.duration_ns()));
      if (timeline.backward.complete()) backward_s.push(seconds(timeline.backward.duration_ns()));
      if (timeline.optimizer.complete()) {
        optimizer_s.push(seconds(timeline.optimizer.duration_ns()));
      }
      // Overlap window: from backward_begin to the last gradient produced by autograd.
      const Interval gradient_window{timeline.backward.begin, timeline.last_grad_ready};
      std::int64_t rank_allreduce_ns = 0;
      for (const BucketAllreduce& allreduce : timeline.allreduces) {
        rank_allreduce_ns += allreduce.interval.duration_ns();
        hidden_ns += static_cast<double>(overlap_ns(allreduce.interval, gradient_window));
      }
      allreduce_ns += static_cast<double>(rank_allreduce_ns);
      summed_over_ranks += seconds(rank_allreduce_ns);
    }
    // Ranks that arrive early wait inside the collective; the mean over ranks is the neutral
    // per-iteration figure.
    allreduce_per_iter_s.push_back(summed_over_ranks / summary.world_size);
  }
  summary.median_iteration_s = median(iteration_s);
  summary.mean_iteration_s = mean(iteration_s);
  summary.median_forward_s = forward_s.median();
  summary.median_backward_s = backward_s.median();
  summary.median_optimizer_s = optimizer_s.median();
  summary.has_phases = !forward_s.empty() || !backward_s.empty() || !optimizer_s.empty();
  summary.total_allreduce_s_per_iter = median(allreduce_per_iter_s);
  summary.overlap_fraction = allreduce_ns > 0 ? hidden_ns / allreduce_ns : 0;

  // batch_size is per rank (each DDP process loads its own batch).
  const auto batch = meta.workload.find("batch_size");
  if (batch != meta.workload.end() && summary.median_iteration_s > 0) {
    long long batch_size = 0;
    const char* end = batch->second.data() + batch->second.size();
    const auto [ptr, ec] = std::from_chars(batch->second.data(), end, batch_size);
    if (ec == std::errc() && ptr == end && batch_size > 0) {
      summary.samples_per_s = static_cast<double>(summary.world_size) *
                              static_cast<double>(batch_size) / summary.median_iteration_s;
    }
  }

  summarize_buckets(trace, timelines, class_of, complete, summary);
  return summary;
}

nlohmann::ordered_json summary_json(const Summary& summary) {
  nlohmann::ordered_json out;
  out["world_size"] = summary.world_size;
  out["source"] = summary.source;
  out["workload"] = summary.workload;
  out["backend"] = summary.backend;
  out["num_parameters"] = summary.num_parameters;
  out["parameter_bytes"] = summary.parameter_bytes;
  out["num_buckets"] = summary.num_buckets;
  out["num_complete_iterations"] = summary.iterations.size();
  out["median_iteration_s"] = summary.median_iteration_s;
  out["mean_iteration_s"] = summary.mean_iteration_s;
  out["samples_per_s"] = summary.samples_per_s;
  out["has_phases"] = summary.has_phases;
  out["median_forward_s"] = summary.median_forward_s;
  out["median_backward_s"] = summary.median_backward_s;
  out["median_optimizer_s"] = summary.median_optimizer_s;
  out["total_allreduce_s_per_iter"] = summary.total_allreduce_s_per_iter;
  out["overlap_fraction"] = summary.overlap_fraction;
  nlohmann::ordered_json iterations = nlohmann::ordered_json::array();
  for (const IterationStats& it : summary.iterations) {
    iterations.push_back(
        {{"iteration", it.iteration}, {"time_s", it.time_s}, {"rank_time_s", it.rank_time_s}});
  }
  out["iterations"] = iterations;
  nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
  for (const BucketStats& b : summary.buckets) {
    buckets.push_back({{"bucket", b.bucket},
                       {"bytes", b.bytes},
                       {"num_params", b.num_params},
                       {"median_allreduce_s", b.median_allreduce_s},
                       {"mean_allreduce_s", b.mean_allreduce_s},
                       {"median_transfer_s", b.median_transfer_s},
                       {"algbw_gbps", b.algbw_gbps},
                       {"busbw_gbps", b.busbw_gbps}});
  }
  out["buckets"] = buckets;
  out["failures"] = summary.failures;
  out["notes"] = summary.notes;
  // Failure messages come from trace files and may hold any bytes.
  return out;
}

std::string summary_to_json(const Summary& summary) {
  return summary_json(summary).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string human_bytes(std::int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= 1024LL * 1024 * 1024) return format("%.2f GiB", b / (1024.0 * 1024 * 1024));
  if (bytes >= 1024LL * 1024) return format("%.2f MiB", b / (1024.0 * 1024));
  if (bytes >= 1024) return format("%.1f KiB", b / 1024.0);
  return std::to_string(bytes) + " B";
}

std::string ms(double s) { return format("%.3f ms", s * 1e3); }

}  // namespace

std::string summary_to_table(const Summary& s) {
  std::string out;
  out += "trace:       " + s.source + ", workload " + s.workload + ", backend " + s.backend + ", " +
         std::to_string(s.world_size) + (s.world_size == 1 ? " rank\n" : " ranks\n");
  out += "model:       " + std::to_string(s.num_parameters) + (s.num_parameters == 1 ? " parameter, " : " parameters, ") +
         human_bytes(s.parameter_bytes) + ", " + std::to_string(s.num_buckets) +
         (s.num_buckets == 1 ? " bucket" : " buckets") + " (last layout)\n";
  out += "iterations:  " + std::to_string(s.iterations.size()) + " complete on every rank";
  if (!s.iterations.empty()) {
    out += "; median " + ms(s.median_iteration_s) + ", mean " + ms(s.mean_iteration_s) +
           (s.iterations.size() > 1 ? " (iterations >= 1)" : "");
    if (s.samples_per_s > 0) out += ", " + format("%.1f", s.samples_per_s) + " samples/s";
  }
  out += "\n";
  if (s.has_phases) {
    out += "phases:      forward " + ms(s.median_forward_s) + ", backward " +
           ms(s.median_backward_s) + ", optimizer " + ms(s.median_optimizer_s) + " (medians)\n";
    out += "all-reduce:  " + ms(s.total_allreduce_s_per_iter) + " per iteration, " +
           format("%.1f", s.overlap_fraction * 100) + "% hidden behind gradient computation\n";
  } else {
    // Without phases there is no gradient window to measure overlap against: say so rather
    // than print zeros that read as measurements.
    out += "phases:      not recorded (no forward/backward/optimizer events in this trace)\n";
    out += "all-reduce:  " + ms(s.total_allreduce_s_per_iter) + " per iteration\n";
  }
  if (!s.buckets.empty()) {
    // Two views of one all-reduce: the network's (from the last rank to start: what the
    // bandwidths use, as in nccl-tests) and each rank's, waiting for its peers included.
    out += "\n                             transfer      each rank's\n";
    out += "bucket      bytes  params   median ms   median ms     mean ms  algbw GB/s  busbw GB/s\n";
    for (const BucketStats& b : s.buckets) {
      char line[160];
      std::snprintf(line, sizeof line, "%6d %10s %7d %11.3f %11.3f %11.3f %11.3f %11.3f\n", b.bucket,
                    human_bytes(b.bytes).c_str(), b.num_params, b.median_transfer_s * 1e3,
                    b.median_allreduce_s * 1e3, b.mean_allreduce_s * 1e3, b.algbw_gbps, b.busbw_gbps);
      out += line;
    }
    out += "(transfer: begin to end on the rank that started last; each rank's: its own begin to "
           "end, waiting for slower peers included; algbw = bytes / transfer)\n";
  }
  for (const std::string& note : s.notes) out += note + "\n";
  if (!s.failures.empty()) {
    out += "\nfailures:\n";
    for (const std::string& failure : s.failures) out += "  " + failure + "\n";
  }
  return out;
}

}  // namespace ddpsim::trace
