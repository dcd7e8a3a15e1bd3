// The replay's report (report.hpp).
#include "ddpsim/sim/report.hpp"
#include "ddpsim/sim/json_values.hpp"
#include "ddpsim/sim/machine_settings.hpp"
#include "ddpsim/trace/summary_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "ddpsim/trace/stats.hpp"

namespace ddpsim::sim {
namespace {

// The one definition of a prediction's error (ddpsim/trace/stats.hpp).
using trace::relative_error;

std::string format(const char* pattern, double value) {
  if (std::isnan(value)) return "n/a";
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string row(const std::string& name, double measured, double predicted, const char* pattern) {
  char line[160];
  std::snprintf(line, sizeof line, "  %-26s %14s %14s %9s\n", name.c_str(), format(pattern, measured).c_str(),
                format(pattern, predicted).c_str(),
                format("%+.2f%%", 100 * relative_error(predicted, measured)).c_str());
  return line;
}

nlohmann::json json_number(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

}  // namespace

std::vector<std::string> whatif_changes(const WorkloadModel& model, const ReplayOptions& options,
                                        double compute_stretch, const trace::Summary& measured) {
  std::vector<std::string> changes;
  if (!options.slowdown.empty() || !options.skew.slowdowns.empty()) changes.emplace_back("--slowdown");
  if (!options.skew.delays.empty()) changes.emplace_back("--delay");
  if (!options.skew.distributions.empty()) changes.emplace_back("--delay-dist");
  const int world_size = options.world_size > 0 ? options.world_size : model.world_size;
  if (world_size != model.world_size) {
    changes.push_back("world size " + std::to_string(model.world_size) + " -> " + std::to_string(world_size));
  }
  // Another layout: another bucket count, or a bucket of another size than the replay sends
  // (sizes a trace does not know, < 0, compare as equal).
  bool rebucketed = measured.buckets.size() != model.bucket_bytes.size();
  for (std::size_t i = 0; !rebucketed && i < measured.buckets.size(); ++i) {
    rebucketed = measured.buckets[i].bytes >= 0 && model.bucket_bytes[i] >= 0 &&
                 measured.buckets[i].bytes != model.bucket_bytes[i];
  }
  if (rebucketed) changes.emplace_back("buckets");
  if (options.timeout_s > 0 && options.timeout_s != model.source_meta.timeout_s) changes.emplace_back("--timeout");
  if (compute_stretch != 1) changes.emplace_back("ranks sharing cores");  // --cores / --effective-cores
  return changes;
}

std::vector<std::string> whatif_changes(const ReplayReport& report) {
  return whatif_changes(*report.model, *report.options, report.compute_stretch, report.measured);
}

// What the headline must say of itself: a network fitted to too few sizes; a what-if on a
// profiled baseline without the job's own speed, whose change against the profiled run carries
// the profiler's overhead (Note [profiler overhead] in docs/model.md); and more ranks sharing
// cores predicted from a trace of one, which holds nothing of how they slow each other (Note
// [the job's all-reduce and the ladder]).
std::string headline_note(const ReplayReport& report) {
  std::string note = few_sizes_headline_note(report.calibration, report.machine_given);
  const auto add = [&note](const std::string& clause) { note += (note.empty() ? "" : "; ") + clause; };
  if (report.model->source_meta.source == "imported" && !report.unprofiled_iteration_s &&
      !whatif_changes(report).empty()) {
    add("the source run was profiled, and profiled steps run slower than the job: give "
        "--unprofiled-iteration-ms (the job's median step without the profiler)");
  }
  const bool sharing_cores = report.compute_stretch != 1 || static_cast<bool>(report.options->core_slowdown);
  if (report.model->world_size == 1 && report.options->world_size > 1 && sharing_cores) {
    add("from a trace of 1 rank, how ranks sharing these cores slow each other's compute and all-reduces is "
        "modelled, not measured on this job: a trace of 2 ranks holds it (docs/validation.md, Known limits)");
  }
  return note;
}

std::string report_to_text(const ReplayReport& report) {
  const ReplayOptions& options = *report.options;
  const ReplayResult& result = *report.result;
  const WorkloadModel& model = *report.model;
  std::ostringstream text;
  text << "ddp-sim replay " << report.trace_dir << "\n";
  text << "  workload: " << model.world_size << " ranks measured, " << result.world_size()
       << " simulated, " << model.bucket_bytes.size() << (model.bucket_bytes.size() == 1 ? " bucket" : " buckets")
       << ", compute " << to_string(model.mode)
       << " over " << model.source_iterations.size() << " iterations";
  if (report.compute_stretch != 1) {
    text << ", stretched x" << format("%.3g", report.compute_stretch) << " (ranks sharing cores)";
  }
  if (options.core_slowdown) text << ", paced by the ranks computing at once on shared cores";
  const bool slowed = std::any_of(options.slowdown.begin(), options.slowdown.end(),
                                  [](const auto& rank_factor) { return rank_factor.second > 1; });
  if (options.sleep_resume_cost_s > 0 && slowed) {
    text << ", +" << format("%.3g", options.sleep_resume_cost_s * 1e3) << " ms resuming after each slowdown sleep";
  }
  if (options.independent_copies && result.world_size() > model.world_size) {
    text << ", ranks beyond the trace drawing their own iterations";
  }
  if (options.compute_fraction_during_allreduce != 1) {
    text << ", autograd at x" << format("%.3g", options.compute_fraction_during_allreduce)
         << " while its all-reduces transfer";
  }
  if (model.local_seconds_per_byte > 0) {
    text << ", each bucket's own pass before its transfer " << format("%.3g", model.local_seconds_per_byte * 1e9)
         << " ms per MB (the one rank's all-reduces)";
  }
  text << "\n";
  text << "  network: " << to_string(options.algorithm) << " on " << options.platform.describe() << "\n";
  text << "  alpha " << format("%.3f", options.alpha_s * 1e6) << " us, beta "
       << format("%.4f", options.beta_bytes_per_s / 1e9) << " GB/s ("
       << (report.calibration ? "calibrated from " + report.calibration->fitted_to : std::string("given")) << ")";
  if (report.calibration) {
    text << ", fit R^2 " << format("%.4f", report.calibration->fit.r_squared) << ", rel. RMS "
         << format("%.2f%%", 100 * report.calibration->fit.relative_rms);
  }
  const bool ladder = !options.network_ladder.empty();
  if (ladder) text << "; each all-reduce timed by the ladder's " << options.network_ladder.rungs() << " sizes";
  if (options.overlap_bandwidth_fraction != 1) {
    text << "; x" << format("%.3g", options.overlap_bandwidth_fraction) << " of it while autograd runs";
  }
  if (options.allreduces_in_flight == 2) {
    text << "; two all-reduces in flight at once, x" << format("%.3g", options.in_flight_gain) << " of one's rate together";
  }
  text << "\n";
  if (report.calibration) {
    for (const std::string& warning : calibration_warnings(*report.calibration, ladder)) {
      text << "  warning: " << warning << "\n";
    }
  }
  // How the buckets were re-derived, when that was approximate (rebucket_approximate.hpp).
  const auto rebucket_note = model.source_meta.settings.find("sim.rebucket");
  if (rebucket_note != model.source_meta.settings.end()) text << "  re-bucketing: " << rebucket_note->second << "\n";
  // A what-if is compared with the run it was predicted from, which measured another
  // configuration: the difference is the predicted change, not an error.
  const std::vector<std::string> changes = whatif_changes(report);
  if (!changes.empty()) {
    text << "  what-if (";
    for (std::size_t i = 0; i < changes.size(); ++i) text << (i ? ", " : "") << changes[i];
    text << "): compared with the source run's own configuration, not with a measurement of this one\n";
  }
  text << "\n";
  char header[160];
  if (changes.empty()) {
    std::snprintf(header, sizeof header, "  %-26s %14s %14s %9s\n", "", "measured", "predicted", "error");
  } else {
    std::snprintf(header, sizeof header, "  %-26s %14s %14s %9s\n", "", "source run", "what-if", "change");
  }
  text << header;
  // The headline: when it rests on a network fitted to too few sizes, it says so itself.
  std::string headline = row("iteration time (s)", report.measured.median_iteration_s, report.predicted.median_iteration_s, "%.6f");
  const std::string note = headline_note(report);
  if (!note.empty()) headline.insert(headline.size() - 1, "  <- " + note);
  text << headline;
  if (report.unprofiled_iteration_s) {
    text << row("  unprofiled (given)", *report.unprofiled_iteration_s, report.predicted.median_iteration_s, "%.6f");
  }
  // A profile import records no batch size: a throughput neither side knows is left out.
  if (report.measured.samples_per_s > 0 || report.predicted.samples_per_s > 0) {
    text << row("samples/s", report.measured.samples_per_s, report.predicted.samples_per_s, "%.2f");
  }
  text << row("all-reduce per iter (s)", report.measured.total_allreduce_s_per_iter,
              report.predicted.total_allreduce_s_per_iter, "%.6f");
  text << row("overlap", report.measured.overlap_fraction, report.predicted.overlap_fraction, "%.3f");
  // Per bucket, the network's time (what the α-β model predicts) apart from each rank's time
  // in the collective: a pooled median of the latter falls between the early rank's long wait
  // and the late rank's short one, and tells little (trace/collective.hpp).
  const auto per_bucket = [&](const char* title, double trace::BucketStats::*field) {
    text << "\n  " << title << "\n";
    for (const auto& predicted : report.predicted.buckets) {
      double measured = std::numeric_limits<double>::quiet_NaN();
      for (const auto& candidate : report.measured.buckets) {
        if (candidate.bucket == predicted.bucket && candidate.bytes == predicted.bytes) measured = candidate.*field;
      }
      text << row("bucket " + std::to_string(predicted.bucket) + " (" + std::to_string(predicted.bytes) + " B)",
                  measured, predicted.*field, "%.6f");
    }
  };
  per_bucket("per bucket all-reduce transfer, from the last rank to start (median s)",
             &trace::BucketStats::median_transfer_s);
  per_bucket("per bucket all-reduce, each rank's time in it, waits for peers included (mean s)",
             &trace::BucketStats::mean_allreduce_s);
  if (!result.allreduce_choices.empty()) {
    text << "\n  auto: ring-agg or tree per message size (predicted s)\n";
    for (const AllreduceChoice& choice : result.allreduce_choices) {
      char line[200];
      std::snprintf(line, sizeof line, "  %-26s %-9s ring-agg %.6f, tree %.6f\n",
                    (std::to_string(choice.bytes) + " B").c_str(), to_string(choice.algorithm), choice.ring_agg_s,
                    choice.tree_s);
      text << line;
    }
  }
  text << "\n  simulation: " << result.messages << " messages, " << format("%.6f", result.simulated_end_s)
       << " s simulated, " << format("%.3f", result.wall_s) << " s wall\n";
  if (!result.failure.empty()) text << "  predicted failure: " << result.failure << "\n";
  return text.str();
}

nlohmann::json report_json(const ReplayReport& report) {
  const ReplayOptions& options = *report.options;
  const ReplayResult& result = *report.result;
  nlohmann::json json;
  json["trace"] = report.trace_dir;
  json["allreduce"] = to_string(options.algorithm);
  json["platform"] = options.platform.describe();
  json["compute"] = to_string(report.model->mode);
  json["compute_stretch"] = report.compute_stretch;
  if (report.unprofiled_iteration_s) {
    json["unprofiled_iteration_s"] = *report.unprofiled_iteration_s;
    json["unprofiled_scale"] = report.unprofiled_scale;
  }
  json["compute_fraction_during_allreduce"] = options.compute_fraction_during_allreduce;
  json["local_seconds_per_byte"] = report.model->local_seconds_per_byte;
  json["core_sharing"] = options.core_slowdown ? "paced" : "uniform";
  json["sleep_resume_cost_s"] = options.sleep_resume_cost_s;
  json["independent_copies"] = options.independent_copies;
  json["world_size"] = result.world_size();
  json["network"] = {{"alpha_s", options.alpha_s},
                     {"beta_bytes_per_s", options.beta_bytes_per_s},
                     {"overlap_bandwidth_fraction", options.overlap_bandwidth_fraction},
                     {"allreduces_in_flight", options.allreduces_in_flight},
                     {"in_flight_gain", options.in_flight_gain},
                     {"source", report.calibration ? "calibrated" : "given"}};
  if (report.calibration) json["network"]["fitted_to"] = report.calibration->fitted_to;
  if (const std::string note = headline_note(report); !note.empty()) {
    json["headline_note"] = note;
  }
  json["network"]["ladder_sizes"] = options.network_ladder.rungs();
  if (report.calibration) json["network"]["calibration"] = calibration_json(*report.calibration, !options.network_ladder.empty());
  const auto rebucket_note = report.model->source_meta.settings.find("sim.rebucket");
  if (rebucket_note != report.model->source_meta.settings.end()) json["rebucket"] = rebucket_note->second;
  json["measured"] = trace::summary_json(report.measured);  // keys sorted, as in the rest of the report
  json["predicted"] = trace::summary_json(report.predicted);
  // "error" for a reconstruction; for a what-if the same ratio is the predicted change
  // relative to the source run ("whatif" lists what the replay changed).
  const std::vector<std::string> changes = whatif_changes(report);
  json["whatif"] = changes;
  json[changes.empty() ? "error" : "change"] = {
      {"iteration_time", json_number(relative_error(report.predicted.median_iteration_s, report.measured.median_iteration_s))},
      {"samples_per_s", json_number(relative_error(report.predicted.samples_per_s, report.measured.samples_per_s))},
  };
  if (!result.allreduce_choices.empty()) {
    // Per collective: every bucket of a size got the choice made for that size.
    nlohmann::json choices = nlohmann::json::array();
    for (const AllreduceChoice& choice : result.allreduce_choices) {
      nlohmann::json buckets = nlohmann::json::array();
      for (std::size_t bucket = 0; bucket < report.model->bucket_bytes.size(); ++bucket) {
        if (report.model->bucket_bytes[bucket] == choice.bytes) buckets.push_back(bucket);
      }
      choices.push_back({{"bytes", choice.bytes},
                         {"buckets", buckets},
                         {"algorithm", to_string(choice.algorithm)},
                         {"ring_agg_s", choice.ring_agg_s},
                         {"tree_s", choice.tree_s}});
    }
    json["allreduce_choices"] = choices;
  }
  json["simulation"] = {{"messages", result.messages},
                        {"simulated_end_s", result.simulated_end_s},
                        {"wall_s", result.wall_s},
                        {"failure", result.failure}};
  return json;
}

std::string report_to_json(const ReplayReport& report) {
  return report_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ddpsim::sim
