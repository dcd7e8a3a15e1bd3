// Standard torch.profiler traces built event by event, so that each rule of the
// importer is checked against a known answer: Gloo's worker spans time the all-reduces of CPU
// and CUDA-tensor Gloo jobs, NCCL kernels those of NCCL jobs, and a lone NCCL rank (which
// launches no kernel) has instantaneous all-reduces. The shapes of the events are those of
// real traces written by torch 2.13 (CPU, Gloo) and 2.11 (H100, NCCL and Gloo on CUDA) with
// runtime/peer/python_ddp.py --profile.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"
#include "kineto_test_support.hpp"
#include "test_support.hpp"
#include "ddpsim/trace/model.hpp"
#include "ddpsim/trace/summary.hpp"

namespace fs = std::filesystem;
using ddpsim::trace::testing::TempDir;
using ddpsim::trace::Event;
using ddpsim::trace::EventType;
using ddpsim::trace::Trace;
using ddpsim::trace::TraceError;
using nlohmann::json;

namespace {

constexpr int kMainThread = 100;
constexpr int kGlooWorker = 200;

// A profile of `steps` ProfilerSteps of 1000 us each, starting at 10000 us; each step launches
// one all-reduce per bucket (c10d::allreduce_ on the main thread, a TensorList, as in real
// traces) at 500 + 100 b us into the step.
class ProfileBuilder {
 public:
  ProfileBuilder(std::string backend, int rank, int world_size) {
    doc_["schemaVersion"] = 1;
    doc_["distributedInfo"] = {{"backend", backend}, {"rank", rank}, {"world_size", world_size}};
    doc_["traceEvents"] = json::array();
  }

  void add(const std::string& name, const std::string& cat, int tid, double ts, double dur,
           json args = json::object()) {
    doc_["traceEvents"].push_back({{"ph", "X"}, {"name", name}, {"cat", cat}, {"pid", 1},
                                   {"tid", tid}, {"ts", ts}, {"dur", dur}, {"args", args}});
  }

  static double step_start(int step) { return 10000.0 + 1000.0 * step; }
  static double launch(int step, int bucket) { return step_start(step) + 500.0 + 100.0 * bucket; }

  void steps(int count) {
    for (int s = 0; s < count; ++s) {
      add("ProfilerStep#" + std::to_string(s + 1), "user_annotation", kMainThread, step_start(s),
          999.0);
    }
  }

  void c10d_allreduce(int step, int bucket) {
    add("c10d::allreduce_", "cpu_op", kMainThread, launch(step, bucket), 10.0,
        {{"Input Dims", json::array({json::array({json::array({1000})}), json::array()})},
         {"Input type", {"TensorList", ""}}});
  }

  // Gloo's worker: takes the work `wait` us after the launch and runs it for `run` us.
  void gloo_span(int step, int bucket, std::int64_t numel, double wait, double run, const std::string& type = "float") {
    add("gloo:all_reduce", "user_annotation", kGlooWorker, launch(step, bucket) + wait, run,
        {{"Input Dims", {{numel}}}, {"Input type", {type}}});
  }

  void write(const fs::path& path) const { std::ofstream(path) << doc_.dump(); }

 private:
  json doc_;
};


std::vector<const Event*> of_type(const Trace& trace, int rank, EventType type) {
  std::vector<const Event*> found;
  for (const Event& e : trace.ranks.at(static_cast<std::size_t>(rank)).events) {
    if (e.type == type) found.push_back(&e);
  }
  return found;
}

// The first step's all-reduces in time order: bucket 1's 3000 floats, then bucket 0's 1000,
// whose transfer began `wait_us` after its launch.
void expect_bucket_1_then_bucket_0(const std::vector<const Event*>& begins, double wait_us) {
  ASSERT_GE(begins.size(), 2u);
  EXPECT_EQ(begins[0]->bucket, 1);
  EXPECT_EQ(begins[0]->bytes, 12000);
  EXPECT_EQ(begins[1]->bucket, 0);
  EXPECT_EQ(begins[1]->bytes, 4000);
  EXPECT_EQ(begins[1]->t_ns, static_cast<std::int64_t>((ProfileBuilder::launch(0, 0) + wait_us) * 1000));
}


// Two Gloo buckets of 1000 (launch reports no size) and 3000 floats; the worker takes the
// second bucket's work late (wait 150 us) because it was busy with the first.
ProfileBuilder gloo_profile(int steps) {
  ProfileBuilder p("gloo", 0, 2);
  p.steps(steps);
  for (int s = 0; s < steps; ++s) {
    p.c10d_allreduce(s, 0);
    p.c10d_allreduce(s, 1);
    p.gloo_span(s, 0, 1000, 5.0, 200.0);
    p.gloo_span(s, 1, 3000, 150.0, 120.0);
  }
  return p;
}

}  // namespace

TEST(KinetoStandardImport, GlooWorkerSpansTimeAndSizeTheAllreduces) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  gloo_profile(3).write(dir / "rank-0.json");
  const Trace trace = ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  // One rank of a 2-rank job: replicated, as the summary says.
  ASSERT_EQ(trace.world_size(), 2);
  EXPECT_EQ(trace.ranks[0].meta.backend, "gloo");
  EXPECT_EQ(trace.ranks[0].meta.settings.at("allreduce_timing"), "gloo worker spans");
  const auto begins = of_type(trace, 1, EventType::AllreduceBegin);
  const auto ends = of_type(trace, 1, EventType::AllreduceEnd);
  const auto ready = of_type(trace, 1, EventType::BucketReady);
  ASSERT_EQ(begins.size(), 6u);
  ASSERT_EQ(ends.size(), 6u);
  for (int s = 0; s < 3; ++s) {
    const auto b0 = static_cast<std::size_t>(2 * s);
    EXPECT_EQ(ready[b0]->t_ns, static_cast<std::int64_t>(ProfileBuilder::launch(s, 0) * 1000));
    EXPECT_EQ(begins[b0]->t_ns, static_cast<std::int64_t>((ProfileBuilder::launch(s, 0) + 5) * 1000));
    EXPECT_EQ(ends[b0]->t_ns, static_cast<std::int64_t>((ProfileBuilder::launch(s, 0) + 205) * 1000));
    EXPECT_EQ(begins[b0 + 1]->t_ns,
              static_cast<std::int64_t>((ProfileBuilder::launch(s, 1) + 150) * 1000));
    EXPECT_EQ(begins[b0]->bytes, 4000);
    EXPECT_EQ(begins[b0 + 1]->bytes, 12000);
  }
}

TEST(KinetoStandardImport, GlooSpanOfAnotherSizeIsNotTakenForALaunch) {
  // Where a launch says its size (record_param_comms inside it), a worker span of another size
  // is not its transfer, even if it comes first: here the second launch's work started first.
  const TempDir scratch;
  const fs::path dir = scratch.path();
  ProfileBuilder p("gloo", 0, 1);
  p.steps(2);
  for (int s = 0; s < 2; ++s) {
    const double t = ProfileBuilder::launch(s, 0);
    for (const auto& [offset, numel] : {std::pair{0.0, 1000}, std::pair{20.0, 3000}}) {
      p.add("c10d::allreduce_", "cpu_op", kMainThread, t + offset, 10.0);
      p.add("record_param_comms", "cpu_op", kMainThread, t + offset + 1, 5.0,
            {{"Collective name", "allreduce"}, {"In msg nelems", numel}, {"dtype", "Float"}});
    }
    p.gloo_span(s, 0, 3000, 25.0, 50.0);  // the second launch's work
    p.gloo_span(s, 0, 1000, 60.0, 50.0);  // the first launch's, taken later
  }
  p.write(dir / "rank-0.json");
  const Trace trace = ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  const auto begins = of_type(trace, 0, EventType::AllreduceBegin);
  ASSERT_EQ(begins.size(), 4u);
  expect_bucket_1_then_bucket_0(begins, 60);  // sorted by time within the step
}

namespace {

// Gloo's worker span of one launch: its elements, and when it began after its launch.
struct WorkerSpan {
  std::int64_t numel;
  double wait_us;
};

// Three steps of two launches that say no size (TensorLists), each step's two worker spans given
// by `spans(step)`, written to `file`.
std::string two_launch_profile(const fs::path& file, const std::function<std::pair<WorkerSpan, WorkerSpan>(int)>& spans) {
  ProfileBuilder p("gloo", 0, 2);
  p.steps(3);
  for (int s = 0; s < 3; ++s) {
    const auto [first, second] = spans(s);
    p.c10d_allreduce(s, 0);
    p.c10d_allreduce(s, 1);
    p.gloo_span(s, 0, first.numel, first.wait_us, 100.0);
    p.gloo_span(s, 1, second.numel, second.wait_us, 120.0);
  }
  p.write(file);
  return file.string();
}

}  // namespace

TEST(KinetoStandardImport, GlooSpansRecordedOutOfOrderArePairedByTheSizesOfTheOtherSteps) {
  // Launches that say no size (a TensorList, as torch 2.13 records on CPUs) take the first span
  // after them; Gloo's two workers may record their begins out of the order they took the work.
  // Here the first step's second work began first (620 us into the step, the first's at 650):
  // its launches are paired again with the sizes the other steps show, each with the first
  // span of that size that began after it.
  const TempDir scratch;
  const Trace trace = ddpsim::trace::import_kineto({two_launch_profile(scratch.path() / "rank-0.json", [](int s) {
    return std::pair{WorkerSpan{1000, s == 0 ? 150.0 : 5.0}, WorkerSpan{3000, 20.0}};
  })});
  const auto& meta = trace.ranks.at(0).meta;
  EXPECT_EQ(meta.settings.at("gloo_spans_paired_by_size"), "ProfilerStep#1");
  EXPECT_EQ(meta.settings.count("skipped_steps"), 0u);
  const auto begins = of_type(trace, 0, EventType::AllreduceBegin);
  ASSERT_EQ(begins.size(), 6u);
  expect_bucket_1_then_bucket_0(begins, 150);
  EXPECT_NE(ddpsim::trace::describe_import(trace).find("Gloo spans of ProfilerStep#1 paired with their launches by size"),
            std::string::npos)
      << ddpsim::trace::describe_import(trace);
  // A span that began before the launch it would need is no pairing: the step stays odd.
  const Trace odd = ddpsim::trace::import_kineto({two_launch_profile(scratch.path() / "odd.json", [](int s) {
    return std::pair{WorkerSpan{s == 2 ? 3000 : 1000, 5.0}, WorkerSpan{s == 2 ? 1000 : 3000, 5.0}};
  })});
  EXPECT_EQ(odd.ranks.at(0).meta.settings.count("gloo_spans_paired_by_size"), 0u);
}

TEST(KinetoStandardImport, GlooLaunchWithoutWorkerSpanIsNamedInOneLine) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  ProfileBuilder p("gloo", 0, 2);
  p.steps(3);
  for (int s = 0; s < 3; ++s) {
    p.c10d_allreduce(s, 0);
    if (s != 1) p.gloo_span(s, 0, 1000, 5.0, 100.0);  // a step in the middle lacks it
  }
  p.write(dir / "rank-0.json");
  const std::string error = kineto_test::import_error({(dir / "rank-0.json").string()});
  EXPECT_NE(error.find((dir / "rank-0.json").string()), std::string::npos) << error;
  EXPECT_NE(error.find("gloo:all_reduce span"), std::string::npos) << error;
  EXPECT_NE(error.find("1 of 3 all-reduces without one"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(KinetoStandardImport, GlooLastStepCutByTheProfilerIsDropped) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  ProfileBuilder p = gloo_profile(2);
  p.add("ProfilerStep#3", "user_annotation", kMainThread, ProfileBuilder::step_start(2), 999.0);
  p.c10d_allreduce(2, 0);  // its worker span fell after the profiler stopped
  p.write(dir / "rank-0.json");
  const Trace trace = ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  EXPECT_EQ(trace.ranks[0].complete_iterations(), (std::vector<std::int64_t>{1, 2}));
}

// One odd step in the middle (an all-reduce of another size) is skipped and said; when most
// steps are unlike the first, the layout is in doubt and the trace is refused in one line.
TEST(KinetoStandardImport, OddMiddleStepIsSkippedAndSaidButMostlyOddStepsAreRefused) {
  const auto profile = [](const std::vector<int>& odd_steps) {
    ProfileBuilder p("gloo", 0, 1);
    p.steps(5);
    for (int s = 0; s < 5; ++s) {
      const bool odd = std::find(odd_steps.begin(), odd_steps.end(), s) != odd_steps.end();
      p.c10d_allreduce(s, 0);
      p.gloo_span(s, 0, odd ? 1500 : 1000, 5.0, 100.0);
    }
    return p;
  };
  const TempDir scratch;
  const fs::path dir = scratch.path();
  profile({2}).write(dir / "rank-0.json");
  const Trace trace = ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  EXPECT_EQ(trace.ranks[0].complete_iterations(), (std::vector<std::int64_t>{1, 2, 4, 5}));
  EXPECT_EQ(trace.ranks[0].meta.settings.at("skipped_steps"), "ProfilerStep#3");
  const auto notes = ddpsim::trace::summarize(trace).notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& note) {
    return note.find("skipped:     profiler steps ProfilerStep#3") == 0;
  }));

  // ddp-trace import's report says how many were kept and which were left out, and that 4 are few.
  EXPECT_EQ(ddpsim::trace::describe_import(trace).substr(0, describe_import(trace).find('\n')),
            "steps: 4 profiled steps (1 left out whose all-reduces differ from the others': ProfilerStep#3; with "
            "gradient accumulation under no_sync() a what-if's iteration is a step that all-reduces): few for a "
            "what-if to resample; profile more (schedule(..., active=10, repeat=1): a schedule that repeats writes its "
            "last cycle over the others)");

  profile({1, 2, 3}).write(dir / "rank-0.json");
  const std::string error = kineto_test::import_error({(dir / "rank-0.json").string()});
  EXPECT_NE(error.find("the same all-reduces (buckets) in most steps as in ProfilerStep#1"), std::string::npos)
      << error;
  EXPECT_NE(error.find("of 5 steps unlike it"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(KinetoStandardImport, LoneNcclRankHasInstantAllreducesButTwoRanksNeedKernels) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  ProfileBuilder one("nccl", 0, 1);
  one.steps(2);
  for (int s = 0; s < 2; ++s) {
    one.c10d_allreduce(s, 0);
    one.add("record_param_comms", "cpu_op", kMainThread, ProfileBuilder::launch(s, 0) + 1, 5.0,
            {{"Collective name", "allreduce"}, {"In msg nelems", 1000}, {"dtype", "Float"}});
  }
  one.add("some_gemm_kernel", "kernel", 7, ProfileBuilder::launch(0, 0), 50.0);
  one.write(dir / "rank-0.json");
  const Trace trace = ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  ASSERT_EQ(trace.world_size(), 1);
  EXPECT_EQ(trace.ranks[0].meta.settings.at("allreduce_timing"),
            "none (one NCCL rank transfers nothing)");
  const auto begins = of_type(trace, 0, EventType::AllreduceBegin);
  const auto ends = of_type(trace, 0, EventType::AllreduceEnd);
  ASSERT_EQ(begins.size(), 2u);
  EXPECT_EQ(begins[0]->t_ns, ends[0]->t_ns);
  EXPECT_EQ(begins[0]->bytes, 4000);

  ProfileBuilder two("nccl", 0, 2);
  two.steps(2);
  for (int s = 0; s < 2; ++s) two.c10d_allreduce(s, 0);
  two.add("some_gemm_kernel", "kernel", 7, ProfileBuilder::launch(0, 0), 50.0);
  two.write(dir / "rank-0-of-2.json");
  const std::string error = kineto_test::import_error({(dir / "rank-0-of-2.json").string()});
  EXPECT_NE(error.find("NCCL AllReduce kernel"), std::string::npos) << error;
  EXPECT_NE(error.find("2 of 2 all-reduces without one"), std::string::npos) << error;
}

TEST(KinetoStandardImport, SummarySaysPhasesAreNotRecordedRatherThanPrintingZeros) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  gloo_profile(3).write(dir / "rank-0.json");
  const Trace trace = ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  const ddpsim::trace::Summary summary = ddpsim::trace::summarize(trace);
  EXPECT_FALSE(summary.has_phases);
  const std::string table = ddpsim::trace::summary_to_table(summary);
  EXPECT_NE(table.find("phases:      not recorded"), std::string::npos) << table;
  EXPECT_EQ(table.find("hidden behind"), std::string::npos) << table;
  EXPECT_NE(ddpsim::trace::summary_to_json(summary).find("\"has_phases\": false"),
            std::string::npos);
}

TEST(KinetoStandardImport, OddFieldTypesAndImpossibleTimesAreOneLineNotACrash) {
  // Found by the importer's fuzzer: a non-string "ph" or "backend" threw nlohmann's type_error,
  // and a time beyond int64 nanoseconds overflowed.
  const TempDir scratch;
  const fs::path dir = scratch.path();
  json odd = json::parse(R"({"distributedInfo": {"backend": 7, "rank": 0, "world_size": 1},
    "traceEvents": [{"ph": 1, "name": "x"},
                    {"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "tid": 1,
                     "ts": 1e300, "dur": 5}]})");
  std::ofstream(dir / "huge.json") << odd.dump();
  const std::string error = kineto_test::import_error({(dir / "huge.json").string()});
  EXPECT_NE(error.find("below 4e15"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;

  odd["traceEvents"][1]["ts"] = 10;
  std::ofstream(dir / "backend.json") << odd.dump();
  // A backend that is not a string reads as NCCL's default; the trace still lacks all-reduces.
  const std::string missing = kineto_test::import_error({(dir / "backend.json").string()});
  EXPECT_NE(missing.find("all-reduces"), std::string::npos) << missing;
}

namespace {

// A Gloo profile with what record_shapes=True adds and DDP labels: per step, DDP's forward,
// the autograd engine's first function, four gradients accumulated (10, 10x100, 250 and 500
// floats, in that order) and the optimizer step; bucket 0 holds the first two gradients (1010
// floats), bucket 1 the last two (750), and an undefined gradient after them. `shapes` false:
// the gradients carry no Input Dims.
ProfileBuilder gradient_profile(int steps, bool shapes = true, std::int64_t bucket1 = 750, bool used_map = false) {
  ProfileBuilder p("gloo", 0, 2);
  p.steps(steps);
  const std::vector<std::pair<json, double>> gradients = {
      {json::array({10}), 200.0}, {json::array({10, 100}), 300.0}, {json::array({250}), 520.0}, {json::array({500}), 550.0}};
  for (int s = 0; s < steps; ++s) {
    const double t = ProfileBuilder::step_start(s);
    p.add("DistributedDataParallel.forward", "user_annotation", kMainThread, t + 10, 90);
    p.add("autograd::engine::evaluate_function: MmBackward0", "cpu_op", kMainThread, t + 150, 20);
    for (const auto& [dims, end] : gradients) {
      json args = shapes ? json{{"Input Dims", json::array({dims})}, {"Input type", {"float"}}} : json::object();
      p.add("torch::autograd::AccumulateGrad", "cpu_op", kMainThread, t + end - 5, 5, args);
    }
    // An undefined gradient (as DLRM's profile has one): no parameter, with or without shapes.
    p.add("torch::autograd::AccumulateGrad", "cpu_op", kMainThread, t + 560, 0,
          {{"Input Dims", json::array({json::array()})}, {"Input type", {""}}});
    p.c10d_allreduce(s, 0);
    p.c10d_allreduce(s, 1);
    p.gloo_span(s, 0, 1010, 5.0, 50.0);
    p.gloo_span(s, 1, bucket1, 5.0, 50.0);
    if (used_map) {  // find_unused_parameters=True: the map of used parameters, one int each
      p.c10d_allreduce(s, 2);
      p.gloo_span(s, 2, 4, 60.0, 10.0, "int");
    }
    p.add("Optimizer.step#SGD.step", "user_annotation", kMainThread, t + 800, 100);
  }
  return p;
}

}  // namespace

TEST(KinetoStandardImport, GradientShapesGiveParametersInReadyOrderAndTheBucketsAsListsOfThem) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  gradient_profile(3).write(dir / "rank-0.json");
  const Trace trace = ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  const auto& meta = trace.ranks.at(0).meta;
  EXPECT_EQ(meta.settings.at("parameters"), "per-gradient");
  // The k-th of n gradients to become ready is parameter n-1-k.
  ASSERT_EQ(meta.parameters.size(), 4u);
  EXPECT_EQ(meta.parameters[3].name, "grad0:10");
  EXPECT_EQ(meta.parameters[2].name, "grad1:10x100");
  EXPECT_EQ(meta.parameters[2].numel, 1000);
  EXPECT_EQ(meta.parameters[0].numel, 500);
  EXPECT_EQ(meta.parameters[0].dtype, "float32");
  ASSERT_EQ(meta.bucket_assignments.size(), 1u);
  const std::vector<std::vector<int>> buckets = {{3, 2}, {1, 0}};
  EXPECT_EQ(meta.bucket_assignments[0].buckets, buckets);
  // Caps: the first bucket closed at 4040 bytes with 40 before its last (first in (40, 4040]:
  // neither default nor a round size fits, its upper end is taken); the last only bounds the
  // cap from below (1000 bytes), so DDP's 25 MiB stands.
  EXPECT_EQ(meta.first_bucket_cap_bytes, 4040);
  EXPECT_EQ(meta.bucket_cap_bytes, 25LL * 1024 * 1024);
  EXPECT_NE(meta.settings.at("bucket_caps").find("bucket_cap_mb 25"), std::string::npos) << meta.settings.at("bucket_caps");
  // Every gradient's ready time is its AccumulateGrad's end; the phases are DDP's labels.
  const auto ready = of_type(trace, 1, EventType::GradReady);
  ASSERT_EQ(ready.size(), 12u);
  EXPECT_EQ(ready[0]->param, 3);
  EXPECT_EQ(ready[0]->t_ns, static_cast<std::int64_t>((ProfileBuilder::step_start(0) + 200) * 1000));
  EXPECT_EQ(ready[3]->param, 0);
  EXPECT_EQ(ready[3]->t_ns, static_cast<std::int64_t>((ProfileBuilder::step_start(0) + 550) * 1000));
  const auto backward = of_type(trace, 0, EventType::BackwardBegin);
  ASSERT_EQ(backward.size(), 3u);
  EXPECT_EQ(backward[1]->t_ns, static_cast<std::int64_t>((ProfileBuilder::step_start(1) + 150) * 1000));
  const auto backward_end = of_type(trace, 0, EventType::BackwardEnd);
  ASSERT_EQ(backward_end.size(), 3u);
  EXPECT_EQ(backward_end[1]->t_ns, static_cast<std::int64_t>((ProfileBuilder::step_start(1) + 800) * 1000));
  EXPECT_EQ(of_type(trace, 0, EventType::ForwardBegin).size(), 3u);
  EXPECT_EQ(of_type(trace, 0, EventType::OptimizerEnd).size(), 3u);
  EXPECT_TRUE(ddpsim::trace::summarize(trace).has_phases);
  // Enough steps to say nothing more about them; the exact path and its caps.
  const fs::path many = dir / "rank-0-many.json";
  gradient_profile(ddpsim::trace::kFewProfiledSteps).write(many);
  const std::string report = ddpsim::trace::describe_import(ddpsim::trace::import_kineto({many.string()}));
  EXPECT_EQ(report.substr(0, report.find('\n')), "steps: 5 profiled steps");
  EXPECT_NE(report.find("\nparameters: 4 gradients with their shapes in 2 buckets: re-bucketing is exact\nbuckets: "
                        "bucket_cap_mb 25"),
            std::string::npos)
      << report;
}

// DDP with find_unused_parameters=True all-reduces its map of the parameters used (ints) after
// the last bucket, every step: not a bucket, but one of the step's other collectives.
TEST(KinetoStandardImport, AnIntegerAllreduceIsNotABucketButOneOfTheStepsCollectives) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  gradient_profile(3, true, 750, /*used_map=*/true).write(dir / "rank-0.json");
  const Trace trace = ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  const auto& meta = trace.ranks.at(0).meta;
  EXPECT_EQ(meta.settings.at("parameters"), "per-gradient");
  const std::vector<std::vector<int>> buckets = {{3, 2}, {1, 0}};
  ASSERT_EQ(meta.bucket_assignments.size(), 1u);
  EXPECT_EQ(meta.bucket_assignments[0].buckets, buckets);
  EXPECT_EQ(of_type(trace, 0, EventType::AllreduceBegin).size(), 6u);
  const auto others = of_type(trace, 0, EventType::Collective);
  ASSERT_EQ(others.size(), 3u);
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(others[static_cast<std::size_t>(s)]->kind, "all_reduce");
    EXPECT_EQ(others[static_cast<std::size_t>(s)]->iteration, s + 1);
    EXPECT_EQ(others[static_cast<std::size_t>(s)]->bytes, 16);
    // Timed by Gloo's worker, as the buckets are.
    EXPECT_EQ(others[static_cast<std::size_t>(s)]->t_ns, static_cast<std::int64_t>((ProfileBuilder::launch(s, 2) + 60) * 1000));
    EXPECT_EQ(others[static_cast<std::size_t>(s)]->dur_ns, 10000);
    EXPECT_EQ(others[static_cast<std::size_t>(s)]->message, "gloo worker span");
  }
  // A dtype the importer does not know is no reason to drop an all-reduce: it is refused, named.
  ProfileBuilder odd("gloo", 0, 2);
  odd.steps(2);
  for (int s = 0; s < 2; ++s) {
    odd.c10d_allreduce(s, 0);
    odd.gloo_span(s, 0, 1000, 5.0, 50.0, "Float8_e4m3fn");
  }
  odd.write(dir / "rank-0.json");
  const std::string error = kineto_test::import_error({(dir / "rank-0.json").string()});
  EXPECT_NE(error.find("in a float dtype, got all-reduce 0 of ProfilerStep#1 of dtype float8_e4m3fn"), std::string::npos)
      << error;
}

TEST(KinetoStandardImport, GradientsWithoutShapesKeepOneParameterPerBucketAndSayWhy) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  gradient_profile(3, /*shapes=*/false).write(dir / "rank-0.json");
  const Trace trace = ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  const auto& meta = trace.ranks.at(0).meta;
  EXPECT_EQ(meta.settings.at("parameters"), "per-bucket");
  EXPECT_EQ(meta.parameters.size(), 2u);
  EXPECT_NE(meta.settings.at("parameters_reason").find("4 of 4 AccumulateGrad events have no \"Input Dims\""),
            std::string::npos)
      << meta.settings.at("parameters_reason");
  EXPECT_NE(meta.settings.at("parameters_reason").find("record_shapes=True"), std::string::npos);
  EXPECT_TRUE(of_type(trace, 0, EventType::GradReady).empty());
  EXPECT_NE(ddpsim::trace::describe_import(trace).find("\nparameters: one per bucket (2): re-bucketing is approximate, "
                                                       "as 4 of 4 AccumulateGrad events have no \"Input Dims\""),
            std::string::npos)
      << ddpsim::trace::describe_import(trace);
}

// A bucket of one gradient taken out of turn, as DLRM's profile has (c10d buckets a sparse
// gradient alone): gradients of 10, 10x100, 250, 40 and 500 floats ready in that order, buckets
// of 1010, then 40 (launched after its gradient), then 750 (the 250 and the 500). The 40 is that
// parameter alone.
TEST(KinetoStandardImport, ABucketOfOneGradientOutOfTurnIsThatParameterAlone) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  const auto write = [&](double alone_ready) {
    ProfileBuilder p("gloo", 0, 2);
    p.steps(2);
    const std::vector<std::pair<json, double>> gradients = {{json::array({10}), 200.0},
                                                            {json::array({10, 100}), 300.0},
                                                            {json::array({40}), alone_ready},
                                                            {json::array({250}), 520.0},
                                                            {json::array({500}), 560.0}};
    for (int s = 0; s < 2; ++s) {
      for (const auto& [dims, end] : gradients) {
        p.add("torch::autograd::AccumulateGrad", "cpu_op", kMainThread, ProfileBuilder::step_start(s) + end - 5, 5,
              {{"Input Dims", json::array({dims})}, {"Input type", {"float"}}});
      }
      for (int b = 0; b < 3; ++b) p.c10d_allreduce(s, b);  // launched at 500, 600 and 700 us
      p.gloo_span(s, 0, 1010, 5.0, 50.0);
      p.gloo_span(s, 1, 40, 5.0, 10.0);
      p.gloo_span(s, 2, 750, 5.0, 50.0);
    }
    p.write(dir / "rank-0.json");
    return ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  };
  const Trace trace = write(540.0);
  const auto& meta = trace.ranks.at(0).meta;
  ASSERT_EQ(meta.settings.at("parameters"), "per-gradient") << meta.settings.at("parameters_reason");
  ASSERT_EQ(meta.parameters.size(), 5u);
  for (const auto& parameter : meta.parameters) EXPECT_EQ(parameter.alone, parameter.index == 1) << parameter.name;
  EXPECT_EQ(meta.bucket_assignments.at(0).buckets, (std::vector<std::vector<int>>{{4, 3}, {1}, {2, 0}}));
  // It bounds no cap: the first bucket closed in (40, 4040] bytes, the rest is one bucket.
  EXPECT_NE(meta.settings.at("bucket_caps").find("bucket_cap_mb 25"), std::string::npos) << meta.settings.at("bucket_caps");
  const std::string report = ddpsim::trace::describe_import(trace);
  EXPECT_NE(report.find("; 1 parameter in a bucket of its own out of gradient-ready order, kept so at every cap"),
            std::string::npos)
      << report;
  // A gradient of that size ready only after the bucket's all-reduce launched cannot be in it.
  const Trace late = write(650.0);
  EXPECT_EQ(late.ranks.at(0).meta.settings.at("parameters"), "per-bucket");
  EXPECT_NE(late.ranks.at(0).meta.settings.at("parameters_reason").find("bucket 1 of 40 elements"), std::string::npos)
      << late.ranks.at(0).meta.settings.at("parameters_reason");
}

TEST(KinetoStandardImport, GradientsThatDoNotFillTheBucketsKeepOneParameterPerBucketAndSayWhy) {
  const TempDir scratch;
  const fs::path dir = scratch.path();
  gradient_profile(3, true, /*bucket1=*/800).write(dir / "rank-0.json");  // 50 floats nobody accumulated
  const Trace trace = ddpsim::trace::import_kineto({(dir / "rank-0.json").string()});
  const auto& meta = trace.ranks.at(0).meta;
  EXPECT_EQ(meta.settings.at("parameters"), "per-bucket");
  EXPECT_NE(meta.settings.at("parameters_reason").find("the 4 gradients (1760 elements) do not fill the all-reduced "
                                                        "buckets (1810 elements)"),
            std::string::npos)
      << meta.settings.at("parameters_reason");
}
