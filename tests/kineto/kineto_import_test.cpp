// Imports the real profiler traces of a 2-rank Python DDP job (traces/examples/kineto/) and
// checks what comes out against what the job itself reported in its sidecar: DDP's own
// logger (rebuilt_bucket_sizes) and the model's parameter sizes, read here independently.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"
#include "kineto_test_support.hpp"
#include "test_support.hpp"
#include "ddpsim/trace/model.hpp"

namespace fs = std::filesystem;
using ddpsim::trace::testing::TempDir;
using ddpsim::trace::Event;
using ddpsim::trace::EventType;
using ddpsim::trace::RankTrace;
using ddpsim::trace::Trace;
using ddpsim::trace::TraceError;
using nlohmann::json;

namespace {

const std::string kExamples = DDPSIM_KINETO_EXAMPLES;

std::vector<std::string> rank_files(const std::string& run, int world_size = 2) {
  std::vector<std::string> files;
  for (int rank = 0; rank < world_size; ++rank) {
    files.push_back(kExamples + "/" + run + "/rank-" + std::to_string(rank) + ".kineto.json");
  }
  return files;
}

json load_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  return json::parse(in);
}

// "1071144, 1050624" (the DDP logger's format) -> {1071144, 1050624}.
std::vector<std::int64_t> parse_sizes(const std::string& text) {
  std::vector<std::int64_t> sizes;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) sizes.push_back(std::stoll(item));
  return sizes;
}

// Bytes of each bucket of the sidecar's layout, from its parameters' numel x 4 (float32).
std::vector<std::int64_t> sidecar_bucket_bytes(const json& sidecar) {
  std::vector<std::int64_t> bytes;
  for (const json& bucket : sidecar["buckets"]) {
    std::int64_t total = 0;
    for (const json& param : bucket) {
      const json& parameter = sidecar["parameters"][param.get<std::size_t>()];
      EXPECT_EQ(parameter["dtype"], "float32");
      total += parameter["numel"].get<std::int64_t>() * 4;
    }
    bytes.push_back(total);
  }
  return bytes;
}

std::vector<const Event*> of_type(const RankTrace& rank, std::int64_t iteration, EventType type) {
  std::vector<const Event*> found;
  for (const Event& event : rank.events) {
    if (event.iteration == iteration && event.type == type) found.push_back(&event);
  }
  return found;
}

// Per iteration, the launched buckets' ids and bytes in launch order.
void expect_buckets_match_sidecar(const Trace& trace, const std::string& run) {
  for (int rank = 0; rank < trace.world_size(); ++rank) {
    const json sidecar = load_json(
        ddpsim::trace::kineto_sidecar_path(rank_files(run)[static_cast<std::size_t>(rank)]));
    const std::vector<std::int64_t> expected = sidecar_bucket_bytes(sidecar);
    // Two independent sources agree before we compare against the import.
    ASSERT_EQ(expected, parse_sizes(sidecar["ddp_logging"]["rebuilt_bucket_sizes"]));
    const RankTrace& imported = trace.ranks[static_cast<std::size_t>(rank)];
    const auto iterations = imported.complete_iterations();
    ASSERT_FALSE(iterations.empty());
    for (const std::int64_t iteration : iterations) {
      const auto launches = of_type(imported, iteration, EventType::AllreduceBegin);
      const auto completions = of_type(imported, iteration, EventType::AllreduceEnd);
      ASSERT_EQ(launches.size(), expected.size()) << "rank " << rank << " it " << iteration;
      ASSERT_EQ(completions.size(), expected.size());
      std::vector<int> launch_order;
      for (const Event* launch : launches) {
        launch_order.push_back(launch->bucket);
        EXPECT_EQ(launch->bytes, expected.at(static_cast<std::size_t>(launch->bucket)));
      }
      std::vector<int> in_order(expected.size());
      std::iota(in_order.begin(), in_order.end(), 0);
      EXPECT_EQ(launch_order, in_order) << "buckets must launch in id order";
      for (const Event* completion : completions) {
        const Event* launch = launches.at(static_cast<std::size_t>(completion->bucket));
        EXPECT_GT(completion->t_ns, launch->t_ns);
        EXPECT_EQ(completion->bytes, launch->bytes);
      }
    }
  }
}

std::int64_t total_parameter_bytes(const json& sidecar) {
  std::int64_t total = 0;
  for (const json& parameter : sidecar["parameters"]) total += parameter["numel"].get<std::int64_t>() * 4;
  return total;
}


// Copies a run's traces and sidecars into `dir`, dropping trace events named `drop`.
std::vector<std::string> copy_without(const std::string& run, const fs::path& dir,
                                      const std::string& drop) {
  std::vector<std::string> copies;
  for (const std::string& file : rank_files(run)) {
    json events = load_json(file);
    json kept = json::array();
    for (const json& event : events) {
      if (event.value("name", "") != drop) kept.push_back(event);
    }
    EXPECT_LT(kept.size(), events.size()) << "the example must hold " << drop;
    const fs::path copy = dir / fs::path(file).filename();
    std::ofstream(copy) << kept.dump();
    fs::copy_file(ddpsim::trace::kineto_sidecar_path(file),
                  ddpsim::trace::kineto_sidecar_path(copy.string()));
    copies.push_back(copy.string());
  }
  return copies;
}


}  // namespace

TEST(KinetoImport, SidecarPathReplacesTheJsonSuffix) {
  EXPECT_EQ(ddpsim::trace::kineto_sidecar_path("run/rank-0.kineto.json"),
            "run/rank-0.kineto.ddpsim.json");
  EXPECT_EQ(ddpsim::trace::kineto_sidecar_path("trace"), "trace.ddpsim.json");
}

TEST(KinetoImport, MlpBucketsCarryTheSidecarsBytesInLaunchOrder) {
  const Trace trace = ddpsim::trace::import_kineto(rank_files("mlp-cap0.25"));
  ASSERT_EQ(trace.world_size(), 2);
  EXPECT_EQ(trace.meta().source, "imported");
  EXPECT_EQ(trace.meta().workload_name, "mlp");
  // 784-512, four 512-512 and a 512-10 layer, weights and biases: 1457674 floats.
  const json sidecar = load_json(ddpsim::trace::kineto_sidecar_path(rank_files("mlp-cap0.25")[0]));
  EXPECT_EQ(total_parameter_bytes(sidecar), 1457674 * 4);
  const auto& layout = trace.meta().bucket_assignments.at(0);
  EXPECT_EQ(layout.buckets.size(), 5u);  // 0.25 MB cap: one ~1 MB layer per bucket
  std::int64_t imported_total = 0;
  for (int b = 0; b < static_cast<int>(layout.buckets.size()); ++b) {
    imported_total += trace.meta().bucket_bytes(layout, b);
  }
  EXPECT_EQ(imported_total, total_parameter_bytes(sidecar));
  expect_buckets_match_sidecar(trace, "mlp-cap0.25");
}

TEST(KinetoImport, ConvnetHasTwoBucketsAtTheDefaultCap) {
  const Trace trace = ddpsim::trace::import_kineto(rank_files("convnet-cap25"));
  EXPECT_EQ(trace.meta().bucket_assignments.at(0).buckets.size(), 2u);
  EXPECT_EQ(trace.meta().bucket_cap_bytes, 25 * 1024 * 1024);
  expect_buckets_match_sidecar(trace, "convnet-cap25");
}

TEST(KinetoImport, EveryIterationHasItsPhasesInOrder) {
  for (const std::string run : {"mlp-cap0.25", "convnet-cap25"}) {
    const Trace trace = ddpsim::trace::import_kineto(rank_files(run));
    for (const RankTrace& rank : trace.ranks) {
      const json sidecar = load_json(ddpsim::trace::kineto_sidecar_path(
          rank_files(run)[static_cast<std::size_t>(rank.meta.rank)]));
      const auto profiled = sidecar["profiled_iterations"];
      std::vector<std::int64_t> expected_iterations;
      for (std::int64_t i = profiled[0]; i <= profiled[1].get<std::int64_t>(); ++i) {
        expected_iterations.push_back(i);
      }
      ASSERT_EQ(rank.complete_iterations(), expected_iterations) << run;
      for (const std::int64_t it : expected_iterations) {
        std::vector<std::int64_t> bounds;
        for (const EventType type :
             {EventType::IterationBegin, EventType::ForwardBegin, EventType::ForwardEnd,
              EventType::BackwardBegin, EventType::BackwardEnd, EventType::OptimizerBegin,
              EventType::OptimizerEnd, EventType::IterationEnd}) {
          const auto found = of_type(rank, it, type);
          ASSERT_EQ(found.size(), 1u) << run << " iteration " << it << " "
                                      << ddpsim::trace::to_string(type);
          bounds.push_back(found[0]->t_ns);
        }
        EXPECT_TRUE(std::is_sorted(bounds.begin(), bounds.end())) << run << " it " << it;
        const std::int64_t backward_begin = bounds[3];
        const std::int64_t backward_end = bounds[4];
        for (const Event* end : of_type(rank, it, EventType::AllreduceEnd)) {
          EXPECT_GE(end->t_ns, backward_begin);
          EXPECT_LE(end->t_ns, backward_end) << "DDP's backward waits for every all-reduce";
        }
        // One gradient per parameter, and each bucket launches only after its gradients.
        const auto grads = of_type(rank, it, EventType::GradReady);
        ASSERT_EQ(grads.size(), rank.meta.parameters.size());
        std::map<int, std::int64_t> ready;
        for (const Event* grad : grads) ready[grad->param] = grad->t_ns;
        ASSERT_EQ(ready.size(), rank.meta.parameters.size());
        const auto& layout = *rank.meta.assignment_for(it);
        for (const Event* bucket_ready : of_type(rank, it, EventType::BucketReady)) {
          for (const int param : layout.buckets.at(static_cast<std::size_t>(bucket_ready->bucket))) {
            EXPECT_LE(ready.at(param), bucket_ready->t_ns)
                << run << " it " << it << " bucket " << bucket_ready->bucket << " param " << param;
          }
        }
      }
    }
  }
}

TEST(KinetoImport, WrittenTracePassesTheReadersValidation) {
  const Trace imported = ddpsim::trace::import_kineto(rank_files("mlp-cap0.25"));
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
    EXPECT_EQ(after.meta.bucket_assignments.at(0).buckets,
              before.meta.bucket_assignments.at(0).buckets);
    EXPECT_EQ(after.complete_iterations(), before.complete_iterations());
  }
}

TEST(KinetoImport, TraceWithoutAllreducesGivesOneLineNamingFileAndEvent) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  const auto copies = copy_without("mlp-cap0.25", dir, "gloo:all_reduce");
  const std::string message = kineto_test::import_error(copies);
  EXPECT_NE(message.find(copies[0]), std::string::npos) << message;
  EXPECT_NE(message.find("expected all-reduce events (gloo:all_reduce), got none"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(KinetoImport, TraceWithoutPhaseLabelsSaysWhichLabel) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  const auto copies = copy_without("convnet-cap25", dir, "ddpsim.backward");
  const std::string message = kineto_test::import_error(copies);
  EXPECT_NE(message.find(copies[0]), std::string::npos) << message;
  EXPECT_NE(message.find("\"ddpsim.backward\""), std::string::npos) << message;
}

TEST(KinetoImport, MissingSidecarAndSwappedRanksAreNamed) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  const fs::path lone = dir / "rank-0.kineto.json";
  fs::copy_file(rank_files("convnet-cap25")[0], lone);
  const std::string missing = kineto_test::import_error({lone.string(), rank_files("convnet-cap25")[1]});
  EXPECT_NE(missing.find((dir / "rank-0.kineto.ddpsim.json").string()), std::string::npos)
      << missing;

  auto swapped = rank_files("convnet-cap25");
  std::swap(swapped[0], swapped[1]);
  const std::string wrong_rank = kineto_test::import_error(swapped);
  EXPECT_NE(wrong_rank.find("expected rank 0"), std::string::npos) << wrong_rank;
  EXPECT_THROW(ddpsim::trace::import_kineto({}), TraceError);
}

// Gloo records a transfer's end after completing its future, so a descheduled worker thread
// records it late (even after backward returned). The Reducer's first copy out of a bucket
// bounds its completion; for the last bucket, which backward waits for, that copy follows the
// completion closely (within 0.1 ms in these recordings, while backward returns ~0.5 ms
// later), so shifting every recorded end by 5 ms must move the last bucket's by < 0.2 ms.
TEST(KinetoImport, LateRecordedTransferEndsAreBoundedByTheReducersCopy) {
  const Trace original = ddpsim::trace::import_kineto(rank_files("mlp-cap0.25"));
  const TempDir scratch;
  const fs::path dir = scratch.path();
  std::vector<std::string> shifted;
  for (const std::string& file : rank_files("mlp-cap0.25")) {
    json events = load_json(file);
    for (json& event : events) {
      if (event.value("name", "") == "gloo:all_reduce") {
        event["dur"] = event["dur"].get<std::int64_t>() + 5000;  // microseconds
      }
    }
    const fs::path copy = dir / fs::path(file).filename();
    std::ofstream(copy) << events.dump();
    fs::copy_file(ddpsim::trace::kineto_sidecar_path(file),
                  ddpsim::trace::kineto_sidecar_path(copy.string()));
    shifted.push_back(copy.string());
  }
  const Trace late = ddpsim::trace::import_kineto(shifted);
  for (int rank = 0; rank < 2; ++rank) {
    const RankTrace& before = original.ranks[static_cast<std::size_t>(rank)];
    const RankTrace& after = late.ranks[static_cast<std::size_t>(rank)];
    for (const std::int64_t it : after.complete_iterations()) {
      const std::int64_t backward_end = of_type(after, it, EventType::BackwardEnd).at(0)->t_ns;
      const auto ends_before = of_type(before, it, EventType::AllreduceEnd);
      const auto ends_after = of_type(after, it, EventType::AllreduceEnd);
      ASSERT_EQ(ends_before.size(), ends_after.size());
      for (std::size_t k = 0; k < ends_after.size(); ++k) {
        EXPECT_LE(ends_after[k]->t_ns, backward_end);
        EXPECT_GE(ends_after[k]->t_ns, ends_before[k]->t_ns);
      }
      const auto last = [](const std::vector<const Event*>& ends) {
        return *std::max_element(ends.begin(), ends.end(), [](const Event* a, const Event* b) {
          return a->bucket < b->bucket;
        });
      };
      EXPECT_LT(last(ends_after)->t_ns - last(ends_before)->t_ns, 200'000)
          << "rank " << rank << " iteration " << it;
    }
  }
  ddpsim::trace::write_trace((dir / "trace").string(), late);
  EXPECT_EQ(ddpsim::trace::read_trace((dir / "trace").string()).world_size(), 2);
}

namespace {

// Removes the `nth` (0-based) event named `name` from a run's rank files, copied into `dir`.
std::vector<std::string> copy_without_nth(const std::string& run, const fs::path& dir,
                                          const std::string& name, std::size_t nth) {
  std::vector<std::string> copies;
  for (const std::string& file : rank_files(run)) {
    const json events = load_json(file);
    json kept = json::array();
    std::size_t seen = 0;
    for (const json& event : events) {
      if (event.value("name", "") == name && seen++ == nth) continue;
      kept.push_back(event);
    }
    const fs::path copy = dir / fs::path(file).filename();
    std::ofstream(copy) << kept.dump();
    fs::copy_file(ddpsim::trace::kineto_sidecar_path(file),
                  ddpsim::trace::kineto_sidecar_path(copy.string()));
    copies.push_back(copy.string());
  }
  return copies;
}

}  // namespace

// The profiler may stop before a Gloo worker records the last transfer: that cuts the last
// iteration, which is dropped; a transfer missing from an earlier iteration is an error.
TEST(KinetoImport, CutLastIterationIsDroppedButAGapEarlierIsAnError) {
  const Trace full = ddpsim::trace::import_kineto(rank_files("mlp-cap0.25"));
  const auto iterations = full.ranks[0].complete_iterations();
  ASSERT_EQ(iterations.size(), 2u);
  const std::size_t buckets = full.meta().bucket_assignments.at(0).buckets.size();

  const TempDir cut_scratch;
  const fs::path cut_dir = cut_scratch.path();
  const Trace cut = ddpsim::trace::import_kineto(
      copy_without_nth("mlp-cap0.25", cut_dir, "gloo:all_reduce", 2 * buckets - 1));
  EXPECT_EQ(cut.ranks[0].complete_iterations(),
            std::vector<std::int64_t>{iterations.front()});

  const TempDir gap_scratch;
  const fs::path gap_dir = gap_scratch.path();
  const auto gap = copy_without_nth("mlp-cap0.25", gap_dir, "gloo:all_reduce", 0);
  const std::string message = kineto_test::import_error(gap);
  EXPECT_NE(message.find(gap[0] + ":0: expected " + std::to_string(buckets) +
                         " gloo:all_reduce events"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("ddpsim.iteration#" + std::to_string(iterations.front()) + ", got " +
                         std::to_string(buckets - 1)),
            std::string::npos)
      << message;
}
