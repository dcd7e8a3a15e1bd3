// Imports the real profiler traces of a 2-rank plain Python DDP job (traces/examples/kineto/
// mlp-2rank: torch.profiler with record_shapes=True, as a user records it) and checks what
// comes out against what the job itself reported: the buckets PyTorch's DDP logged
// (ddp-layouts.json, from DDP._get_ddp_logging_data()) and the model's parameter shapes.
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"
#include "ddpsim/trace/model.hpp"
#include "kineto_test_support.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using ddpsim::trace::Event;
using ddpsim::trace::EventType;
using ddpsim::trace::RankTrace;
using ddpsim::trace::Trace;
using ddpsim::trace::TraceError;
using ddpsim::trace::testing::TempDir;
using nlohmann::json;

namespace {

const std::string kRun = std::string(DDPSIM_KINETO_EXAMPLES) + "/mlp-2rank";

std::vector<std::string> rank_files() {
  return {kRun + "/rank-0.kineto.json.gz", kRun + "/rank-1.kineto.json.gz"};
}

json load_json(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");  // plain files read unchanged too
  EXPECT_NE(file, nullptr) << path;
  std::string text;
  char buffer[1 << 16];
  int got = 0;
  while (file != nullptr && (got = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(got));
  if (file != nullptr) gzclose(file);
  return json::parse(text);
}

// DDP's own report of the buckets it built at the run's cap.
const json& ddp_layout() {
  static const json layouts = load_json(kRun + "/ddp-layouts.json");
  return layouts["layouts"][0];
}

std::vector<const Event*> of_type(const RankTrace& rank, std::int64_t iteration, EventType type) {
  std::vector<const Event*> found;
  for (const Event& e : rank.events) {
    if (e.iteration == iteration && e.type == type) found.push_back(&e);
  }
  return found;
}

// Copies the run's rank files into `dir` as plain JSON, each event passed through `edit`
// (which returns false to drop it).
template <typename Edit>
std::vector<std::string> edited_copies(const fs::path& dir, Edit edit) {
  std::vector<std::string> copies;
  for (const std::string& file : rank_files()) {
    json doc = load_json(file);
    json kept = json::array();
    for (json& event : doc["traceEvents"]) {
      if (edit(event)) kept.push_back(event);
    }
    doc["traceEvents"] = kept;
    const fs::path copy = dir / fs::path(file).stem();  // rank-R.kineto.json
    std::ofstream(copy) << doc.dump();
    copies.push_back(copy.string());
  }
  return copies;
}

}  // namespace

TEST(KinetoImport, BucketsAndParametersAreWhatDdpReported) {
  const Trace trace = ddpsim::trace::import_kineto(rank_files());
  ASSERT_EQ(trace.world_size(), 2);
  for (const RankTrace& rank : trace.ranks) {
    const auto& meta = rank.meta;
    EXPECT_EQ(meta.settings.at("parameters"), "per-gradient");
    // Every parameter, once: the model's shapes as DDP listed them, in any order.
    std::vector<std::int64_t> expected_numel;
    for (const json& shape : ddp_layout()["param_shapes"]) {
      std::int64_t numel = 1;
      for (const json& extent : shape) numel *= extent.get<std::int64_t>();
      expected_numel.push_back(numel);
    }
    std::vector<std::int64_t> numel;
    for (const auto& parameter : meta.parameters) numel.push_back(parameter.numel);
    std::sort(expected_numel.begin(), expected_numel.end());
    std::sort(numel.begin(), numel.end());
    EXPECT_EQ(numel, expected_numel);
    // The buckets: DDP's bytes and parameter counts, in all-reduce order.
    const auto& layout = meta.bucket_assignments.at(0);
    ASSERT_EQ(layout.buckets.size(), ddp_layout()["bucket_sizes"].size());
    for (std::size_t b = 0; b < layout.buckets.size(); ++b) {
      EXPECT_EQ(meta.bucket_bytes(layout, static_cast<int>(b)), ddp_layout()["bucket_sizes"][b].get<std::int64_t>()) << b;
      EXPECT_EQ(layout.buckets[b].size(), ddp_layout()["bucket_params"][b].size()) << b;
    }
    // The job ran at 0.25 MiB for both caps; the caps inferred give its buckets back.
    EXPECT_EQ(meta.bucket_cap_bytes, 256 * 1024);
    EXPECT_EQ(meta.first_bucket_cap_bytes, 256 * 1024);
  }
}

TEST(KinetoImport, EveryIterationHasItsPhasesInOrder) {
  const Trace trace = ddpsim::trace::import_kineto(rank_files());
  for (const RankTrace& rank : trace.ranks) {
    const auto iterations = rank.complete_iterations();
    ASSERT_GE(iterations.size(), 3u);  // 4 profiled steps, the last possibly cut
    for (const std::int64_t it : iterations) {
      std::vector<std::int64_t> bounds;
      for (const EventType type :
           {EventType::IterationBegin, EventType::ForwardBegin, EventType::ForwardEnd, EventType::BackwardBegin,
            EventType::BackwardEnd, EventType::OptimizerBegin, EventType::OptimizerEnd, EventType::IterationEnd}) {
        const auto found = of_type(rank, it, type);
        ASSERT_EQ(found.size(), 1u) << " iteration " << it << " " << ddpsim::trace::to_string(type);
        bounds.push_back(found[0]->t_ns);
      }
      EXPECT_TRUE(std::is_sorted(bounds.begin(), bounds.end())) << " it " << it;
      const std::int64_t backward_begin = bounds[3];
      const std::int64_t backward_end = bounds[4];
      for (const Event* end : of_type(rank, it, EventType::AllreduceEnd)) {
        EXPECT_GE(end->t_ns, backward_begin);
        EXPECT_LE(end->t_ns, backward_end) << "DDP's backward waits for every all-reduce";
      }
      // One gradient per parameter, inside backward, and each bucket launches after its own.
      const auto grads = of_type(rank, it, EventType::GradReady);
      ASSERT_EQ(grads.size(), rank.meta.parameters.size());
      std::map<int, std::int64_t> ready;
      for (const Event* grad : grads) {
        ready[grad->param] = grad->t_ns;
        EXPECT_GE(grad->t_ns, backward_begin);
      }
      ASSERT_EQ(ready.size(), rank.meta.parameters.size());
      const auto& layout = *rank.meta.assignment_for(it);
      for (const Event* bucket_ready : of_type(rank, it, EventType::BucketReady)) {
        for (const int param : layout.buckets.at(static_cast<std::size_t>(bucket_ready->bucket))) {
          EXPECT_LE(ready.at(param), bucket_ready->t_ns) << " it " << it << " bucket " << bucket_ready->bucket;
        }
      }
    }
  }
}

TEST(KinetoImport, WrittenTracePassesTheReadersValidation) {
  const Trace imported = ddpsim::trace::import_kineto(rank_files());
  const TempDir scratch;
  const fs::path dir = scratch.path();
  ddpsim::trace::write_trace(dir.string(), imported);
  const Trace read = ddpsim::trace::read_trace(dir.string());
  ASSERT_EQ(read.world_size(), 2);
  for (int rank = 0; rank < 2; ++rank) {
    const auto& before = imported.ranks[static_cast<std::size_t>(rank)];
    const auto& after = read.ranks[static_cast<std::size_t>(rank)];
    EXPECT_EQ(after.events.size(), before.events.size());
    EXPECT_EQ(after.meta.source, "imported");
    EXPECT_EQ(after.meta.bucket_assignments.at(0).buckets, before.meta.bucket_assignments.at(0).buckets);
    EXPECT_EQ(after.complete_iterations(), before.complete_iterations());
  }
}

// Without record_shapes the same profile keeps one pseudo-parameter per bucket, and says why.
TEST(KinetoImport, AProfileWithoutShapesIsApproximateAndSaysSo) {
  const TempDir scratch;
  const auto copies = edited_copies(scratch.path(), [](json& event) {
    if (event.value("name", "") == "torch::autograd::AccumulateGrad" && event.contains("args")) {
      event["args"].erase("Input Dims");
    }
    return true;
  });
  const Trace trace = ddpsim::trace::import_kineto(copies);
  const auto& meta = trace.ranks.at(0).meta;
  EXPECT_EQ(meta.settings.at("parameters"), "per-bucket");
  EXPECT_EQ(meta.parameters.size(), ddp_layout()["bucket_sizes"].size());
  EXPECT_NE(meta.settings.at("parameters_reason").find("record_shapes=True"), std::string::npos);
}

// A profile taken without a schedule (`with profile(...)`, no prof.step()) has no ProfilerStep:
// its steps are cut at DDP's forwards. The committed profile without its ProfilerStep events
// gives the same layout and, step for step, the same forward, backward and all-reduces.
TEST(KinetoImport, AProfileWithoutStepsIsCutAtDdpsForwards) {
  const TempDir scratch;
  const auto copies = edited_copies(scratch.path(), [](json& event) {
    return event.value("name", "").rfind("ProfilerStep#", 0) != 0;
  });
  const Trace with_steps = ddpsim::trace::import_kineto(rank_files());
  const Trace cut = ddpsim::trace::import_kineto(copies);
  ASSERT_EQ(cut.world_size(), 2);
  for (int r = 0; r < 2; ++r) {
    const RankTrace& marked = with_steps.ranks[static_cast<std::size_t>(r)];
    const RankTrace& rank = cut.ranks[static_cast<std::size_t>(r)];
    EXPECT_NE(rank.meta.settings.at("steps_from").find("DistributedDataParallel.forward"), std::string::npos);
    EXPECT_EQ(marked.meta.settings.count("steps_from"), 0u);
    EXPECT_EQ(rank.meta.bucket_assignments.back().buckets, marked.meta.bucket_assignments.back().buckets);
    // The k-th complete step of each holds the same phase bounds and all-reduce ends.
    const auto marked_its = marked.complete_iterations();
    const auto cut_its = rank.complete_iterations();
    ASSERT_GE(cut_its.size(), 3u);
    const std::size_t shift = cut_its.size() >= marked_its.size() ? 0 : marked_its.size() - cut_its.size();
    for (std::size_t k = 0; k + shift < marked_its.size() && k < cut_its.size(); ++k) {
      for (const EventType type : {EventType::ForwardBegin, EventType::BackwardBegin, EventType::OptimizerBegin,
                                   EventType::AllreduceEnd}) {
        const auto a = of_type(marked, marked_its[k + shift], type);
        const auto b = of_type(rank, cut_its[k], type);
        ASSERT_EQ(a.size(), b.size()) << "rank " << r << " step " << k << " " << ddpsim::trace::to_string(type);
        for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i]->t_ns, b[i]->t_ns) << "rank " << r << " step " << k;
      }
    }
  }
  // Neither steps nor DDP's forwards: one line naming both.
  const auto bare = edited_copies(scratch.path(), [](json& event) {
    const std::string name = event.value("name", "");
    return name.rfind("ProfilerStep#", 0) != 0 && name != "DistributedDataParallel.forward";
  });
  const std::string none = kineto_test::import_error(bare);
  EXPECT_NE(none.find("expected ProfilerStep#N events (torch.profiler with a schedule and prof.step()), or "
                      "DistributedDataParallel.forward events"),
            std::string::npos)
      << none;
}

// Files come in any order (tensorboard_trace_handler names them by host and pid): each file's
// distributedInfo gives its rank. A rank given twice, and no file, are refused in one line.
TEST(KinetoImport, FilesInAnyOrderImportAsTheirRanks) {
  auto swapped = rank_files();
  std::swap(swapped[0], swapped[1]);
  const Trace in_order = ddpsim::trace::import_kineto(rank_files());
  const Trace reversed = ddpsim::trace::import_kineto(swapped);
  ASSERT_EQ(reversed.world_size(), 2);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(reversed.ranks[rank].meta.rank, rank);
    const auto& got = reversed.ranks[rank].events;
    const auto& want = in_order.ranks[rank].events;
    ASSERT_EQ(got.size(), want.size()) << "rank " << rank;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(got[i].type == want[i].type && got[i].t_ns == want[i].t_ns && got[i].rank == rank &&
                  got[i].bytes == want[i].bytes)
          << "rank " << rank << " event " << i;
    }
  }
  const std::string twice = kineto_test::import_error({rank_files()[1], rank_files()[1]});
  EXPECT_EQ(twice.rfind(rank_files()[1] + ":0: expected each rank's profile once, got rank 1 again", 0), 0u) << twice;
  EXPECT_EQ(twice.find('\n'), std::string::npos) << twice;
  EXPECT_THROW(ddpsim::trace::import_kineto({}), TraceError);
}

// Gloo records a transfer's end after completing its future, so a descheduled worker thread
// records it late (even after backward returned). The Reducer's first copy out of a bucket
// bounds its completion: shifting every recorded end by 5 ms leaves every end inside backward.
TEST(KinetoImport, LateRecordedTransferEndsAreBoundedByTheReducersCopy) {
  const Trace original = ddpsim::trace::import_kineto(rank_files());
  const TempDir scratch;
  const auto late_files = edited_copies(scratch.path(), [](json& event) {
    if (event.value("name", "") == "gloo:all_reduce") event["dur"] = event["dur"].get<double>() + 5000.0;
    return true;
  });
  const Trace late = ddpsim::trace::import_kineto(late_files);
  for (int rank = 0; rank < 2; ++rank) {
    const RankTrace& before = original.ranks[static_cast<std::size_t>(rank)];
    const RankTrace& after = late.ranks[static_cast<std::size_t>(rank)];
    ASSERT_EQ(after.complete_iterations(), before.complete_iterations());
    for (const std::int64_t it : after.complete_iterations()) {
      const std::int64_t backward_end = of_type(after, it, EventType::BackwardEnd).at(0)->t_ns;
      const auto ends_before = of_type(before, it, EventType::AllreduceEnd);
      const auto ends_after = of_type(after, it, EventType::AllreduceEnd);
      ASSERT_EQ(ends_before.size(), ends_after.size());
      for (std::size_t k = 0; k < ends_after.size(); ++k) {
        EXPECT_LE(ends_after[k]->t_ns, backward_end);
        EXPECT_GE(ends_after[k]->t_ns, ends_before[k]->t_ns);
      }
    }
  }
}

// The legacy autograd profiler's export (a bare array of events) holds no message sizes.
TEST(KinetoImport, ALegacyAutogradProfilerExportIsRefusedInOneLine) {
  const TempDir scratch;
  const fs::path legacy = scratch.path() / "rank-0.json";
  std::ofstream(legacy) << R"([{"ph": "X", "name": "ProfilerStep#1", "ts": 1, "dur": 2}])";
  const std::string message = kineto_test::import_error({legacy.string()});
  EXPECT_NE(message.find(legacy.string()), std::string::npos) << message;
  EXPECT_NE(message.find("got a bare JSON array"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}
