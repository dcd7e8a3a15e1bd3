// The training loop of one rank, written like the Python loop it reproduces (the SageMaker lab's,
// ../shared/seeds/004_*; the lines with --flags are optional):
//
//   model = DDP(model); opt = SGD(model.parameters()); scaler = GradScaler(init)    # --amp
//   for epoch: sampler.set_epoch(epoch)
//     for x, y in loader:
//       with autocast(dtype): loss = F.cross_entropy(model(x), y)                    # --amp
//       scaler.scale(loss).backward()
//       scaler.unscale_(opt); clip_grad_norm_(model.parameters(), max)  # --clip-grad-norm
//       scaler.step(opt); scaler.update(); opt.zero_grad()
//       lr_scheduler.step()                                                 # --lr-schedule
//       every K batches: evaluate(model, eval_loader)                       # --eval-every
//
// with each phase bracketed by trace events when tracing is on.
#include "ddpsim/runtime/trainer.hpp"

#include <torch/autograd.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>

#include "c10d_compat.hpp"
#include "ddp_tracer.hpp"
#include "ddpsim/data/sampler.hpp"
#include "ddpsim/launch/dist_env.hpp"
#include "ddpsim/launch/init_method.hpp"
#include "ddpsim/runtime/failure_kind.hpp"
#include "ddpsim/runtime/progress_meter.hpp"
#include "ddpsim/trace/stats.hpp"
#include "checkpoint.hpp"
#include "comm_hooks.hpp"
#include "ddpsim/runtime/lr_schedule.hpp"
#include "distributed_data_parallel.hpp"
#include "evaluation.hpp"
#include "mixed_precision.hpp"
#include "skew_injector.hpp"
#include "stop_signal.hpp"
#include "workloads/mp_mlp.hpp"
#include "workload.hpp"

#ifndef DDPSIM_VERSION
#define DDPSIM_VERSION "unknown"
#endif
#ifndef DDPSIM_GIT_SHA
#define DDPSIM_GIT_SHA "unknown"
#endif

namespace ddpsim::runtime {
namespace {

using trace::EventType;

std::unique_ptr<Workload> make_workload(const TrainOptions& o, int local_rank) {
  if (o.model == "mp-mlp") return make_mp_mlp_workload(o, local_rank);
  if (o.model == "mlp") return make_mlp_workload(o);
  if (o.model == "convnet") return make_convnet_workload(o);
  if (o.model == "resnet18") return make_resnet18_workload(o);
  if (o.model == "transformer") return make_transformer_workload(o);
  throw UsageError("--model " + o.model + ": expected mlp, convnet, resnet18 or transformer");
}

std::string dtype_name(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kHalf:
      return "float16";
    case at::kBFloat16:
      return "bfloat16";
    case at::kDouble:
      return "float64";
    default:
      return "float32";
  }
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

trace::RunMeta make_run_meta(const TrainOptions& o, const launch::DistEnv& env,
                             torch::nn::Module& module) {
  trace::RunMeta meta;
  meta.source = "measured";
  meta.tool = {"ddp-train", DDPSIM_VERSION, DDPSIM_GIT_SHA};
  meta.start_time_utc = trace::utc_now_iso8601();
  meta.host = host_name();
  meta.rank = env.rank;
  meta.local_rank = env.local_rank;
  meta.world_size = env.world_size;
  meta.backend = o.backend;
  meta.workload_name = o.model;
  meta.workload = o.workload_settings();
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    trace::Parameter p;
    p.index = static_cast<int>(meta.parameters.size());
    p.name = item.key();
    p.numel = item.value().numel();
    p.dtype = dtype_name(item.value());
    meta.parameters.push_back(std::move(p));
  }
  meta.bucket_cap_bytes = o.bucket_cap_bytes();
  meta.first_bucket_cap_bytes = o.first_bucket_cap_bytes();
  meta.bucket_cap_bytes_list = o.bucket_cap_bytes_list();
  meta.timeout_s = o.timeout_s;
  meta.skew = o.skew.to_meta();
  meta.settings = {
      {"comm_hook", o.comm_hook},
      {"sync_every", std::to_string(o.sync_every)},
      {"find_unused_parameters", "false"},
      {"gradient_as_bucket_view", "false"},
      {"init_method", o.init_method},
      {"threads", std::to_string(o.threads)},
      {"launcher_env", launch::to_string(env.source)},
      {"amp", o.amp},
      {"device", o.on_cuda() ? "cuda" : "cpu"},
  };
  if (o.amp != "none") {
    std::ostringstream scale;
    scale << o.loss_scale_init;
    meta.settings["loss_scale_init"] = scale.str();
  }
  if (o.clip_grad_norm > 0) {
    std::ostringstream norm;
    norm << o.clip_grad_norm;
    meta.settings["clip_grad_norm"] = norm.str();
  }
  if (o.eval_every > 0) meta.settings["eval_every"] = std::to_string(o.eval_every);
  if (o.checkpoint_every > 0) meta.settings["checkpoint_every"] = std::to_string(o.checkpoint_every);
  return meta;
}

// Debug dumps for tests: one line per tensor, "<kind> <index> <name> <numel> <values...>",
// values with 9 significant digits (exact for float32).
class TensorDump {
 public:
  explicit TensorDump(const std::string& path) : out_(path) {
    if (!out_) throw UsageError(path + ": cannot open for writing");
    out_ << std::setprecision(9);
  }
  void write(const std::string& kind, std::size_t index, const std::string& name,
             const at::Tensor& tensor) {
    const at::Tensor flat = tensor.detach().to(at::kCPU, at::kFloat).contiguous().view(-1);
    const float* values = flat.data_ptr<float>();
    out_ << kind << ' ' << index << ' ' << name << ' ' << flat.numel();
    for (std::int64_t i = 0; i < flat.numel(); ++i) out_ << ' ' << values[i];
    out_ << '\n';
  }

 private:
  std::ofstream out_;
};

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o,
                                                        const std::vector<at::Tensor>& params) {
  if (o.optimizer == "adam") {
    return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(o.lr));
  }
  return std::make_unique<torch::optim::SGD>(params,
                                             torch::optim::SGDOptions(o.lr).momentum(0.9));
}


// The names of the phases, for the one-line failure report.
const char* phase_name(EventType phase) {
  switch (phase) {
    case EventType::ForwardBegin:
      return "forward";
    case EventType::BackwardBegin:
      return "backward";
    case EventType::OptimizerBegin:
      return "optimizer step";
    case EventType::EvalBegin:
      return "evaluation";
    default:
      return "bucket rebuild / buffer broadcast";
  }
}

class Trainer {
 public:
  Trainer(const TrainOptions& options, const launch::DistEnv& env) : o_(options), env_(env) {}

  int run() {
    const launch::InitMethod init = launch::parse_init_method(o_.init_method);
    torch::set_num_threads(o_.threads);
    install_stop_signal_handler();
    // On CUDA (NCCL, or Gloo with --device cuda): this rank's GPU becomes the current device
    // before anything touches CUDA. NCCL ranks need a GPU each; Gloo's may share one.
    const int device =
        o_.on_cuda() ? compat::bind_cuda_device(env_.local_rank, o_.backend == "nccl"
                                                                     ? GpuSharing::OneRankPerGpu
                                                                     : GpuSharing::Shared)
                     : -1;
    workload_ = make_workload(o_, env_.local_rank);
    auto module = workload_->module();
    // mp-mlp places its two stages itself.
    const bool on_cuda = device >= 0 && o_.model != "mp-mlp";
    const torch::Device module_device =
        on_cuda ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device))
                : torch::Device(torch::kCPU);
    if (on_cuda) module->to(module_device);
    // torch.autocast("cpu") casts to bfloat16; float16 autocast is CUDA's.
    if (o_.amp == "fp16" && !on_cuda) {
      throw UsageError("--amp fp16: expected a CUDA device (--device cuda), got the CPU; use "
                       "--amp bf16 there");
    }
    amp_.autocast = o_.amp != "none";
    amp_.autocast_device = on_cuda ? at::kCUDA : at::kCPU;
    amp_.autocast_dtype = o_.amp == "fp16" ? at::kHalf : at::kBFloat16;
    amp_.device = module_device;
    amp_.batch_size = o_.eval_batch_size;
    if (amp_.autocast) {
      GradScalerOptions scaling;
      scaling.init_scale = o_.loss_scale_init;
      scaler_ = std::make_unique<GradScaler>(scaling, module_device);
    }
    if (o_.lr_schedule != "constant" || o_.warmup_steps > 0) {
      schedule_ = std::make_unique<LrSchedule>(LrSchedule::from(o_));
    }

    data::DistributedSampler sampler(workload_->dataset_size(), env_.world_size, env_.rank,
                                     /*shuffle=*/true, o_.seed);
    const std::int64_t batches_per_epoch =
        static_cast<std::int64_t>(sampler.num_samples()) / o_.batch_size;
    if (batches_per_epoch == 0) {
      throw UsageError("--batch-size " + std::to_string(o_.batch_size) +
                       ": larger than this rank's shard of the dataset (" +
                       std::to_string(sampler.num_samples()) + " samples)");
    }

    auto group = compat::make_process_group(compat::process_group_spec(o_.backend, init, env_, o_.timeout_s));

    if (o_.trace) {
      try {
        writer_ = std::make_unique<trace::TraceWriter>(o_.trace_dir,
                                                       make_run_meta(o_, env_, *module));
      } catch (const trace::TraceError& error) {
        throw UsageError(std::string("--trace-dir: ") + error.what());
      }
    }
    // Before the tracer and the Reducer: see SkewInjector.
    skew_ = std::make_unique<SkewInjector>(o_.skew, env_.rank, writer_.get(),
                                           module->parameters());
    if (o_.trace) {
      // Before the Reducer: see DdpTracer.
      tracer_ = std::make_unique<DdpTracer>(*writer_, module->parameters());
    }
    DdpSettings settings;
    settings.bucket_cap_bytes = o_.bucket_cap_bytes();
    settings.first_bucket_cap_bytes = o_.first_bucket_cap_bytes();
    settings.bucket_cap_bytes_list = o_.bucket_cap_bytes_list();
    ddp_ = std::make_unique<DistributedDataParallel>(
        module, group, settings,
        make_comm_hook(o_.comm_hook, group, tracer_.get()));
    optimizer_ = make_optimizer(o_, ddp_->parameters());
    std::int64_t first_iteration = 0;
    if (o_.resume) {
      try {
        first_iteration = load_checkpoint(o_.checkpoint_dir, *module, *optimizer_,
                                          ddp_->parameters().front().device())
                              .iterations_done;
      } catch (const CheckpointError& error) {
        throw UsageError(std::string("--resume: ") + error.what());
      }
    }
    if (tracer_) {
      for (const StartUpCollective& c : ddp_->start_up_collectives()) {
        tracer_->record_start_up(c.kind, c.t_ns, c.dur_ns, c.bytes, first_iteration);
      }
    }

    const bool report = env_.rank == 0 && !o_.quiet;
    ProgressMeter progress(o_.iterations, o_.batch_size * env_.world_size,
                           report ? stdout : nullptr);
    std::int64_t epoch = -1;
    std::vector<std::size_t> shard;
    at::Tensor loss;
    // Per-iteration time without building the batch: DDP's work plus tracing, what a
    // benchmark of either compares.
    std::vector<double> step_seconds;
    for (std::int64_t it = first_iteration; it < o_.iterations; ++it) {
      if (it / batches_per_epoch != epoch) {
        epoch = it / batches_per_epoch;
        sampler.set_epoch(static_cast<std::uint64_t>(epoch));
        shard = sampler.indices();
      }
      const auto first = static_cast<std::size_t>((it % batches_per_epoch) * o_.batch_size);
      std::vector<std::int64_t> indices(shard.begin() + first,
                                        shard.begin() + first + o_.batch_size);
      Batch batch = workload_->batch(indices);
      if (on_cuda) {
        batch.input = batch.input.to(module_device);
        batch.target = batch.target.to(module_device);
      }
      if (env_.rank == o_.fail_rank && it == o_.fail_iteration) inject_failure(it);
      const bool last = it + 1 == o_.iterations;
      const auto step_start = ProgressMeter::Clock::now();
      loss = run_iteration(it, batch, last);
      const auto now = ProgressMeter::Clock::now();
      // Iteration 0 (one bucket, lazy allocations) is not representative.
      if (it > 0 || o_.iterations == 1) {
        step_seconds.push_back(std::chrono::duration<double>(now - step_start).count());
      }
      if (progress.due(now)) progress.report(it + 1, loss.item<double>(), now);
      if (o_.eval_every > 0 && (it + 1) % o_.eval_every == 0) run_evaluation(it);
      if (o_.checkpoint_every > 0 && (it + 1) % o_.checkpoint_every == 0) checkpoint(it + 1, epoch);
    }
    progress.finish(o_.iterations, loss.item<double>(), trace::median_of(step_seconds),
                    ProgressMeter::Clock::now());
    if (!o_.dump_params.empty()) dump_params();
    if (!o_.step_times.empty()) write_step_times(step_seconds);
    compat::shutdown_process_group(*ddp_->process_group());
    // Reducer before the tracer whose hook it holds, tracer before the writer it writes to.
    optimizer_.reset();
    ddp_.reset();
    tracer_.reset();
    skew_.reset();
    writer_.reset();
    return kExitOk;
  }

 private:
  at::Tensor run_iteration(std::int64_t it, const Batch& batch, bool last) {
    std::vector<at::Tensor> local_grads;
    if (last && !o_.dump_grads.empty()) local_grads = local_gradients(batch);

    // Gradient accumulation: only every sync_every-th backward all-reduces (and the last).
    const bool sync = (it + 1) % o_.sync_every == 0 || last;
    if (tracer_) tracer_->begin_iteration(it, sync);
    phase_ = EventType::IterationBegin;
    phase_start_ = trace::now_ns();
    at::Tensor loss;
    try {
      if (stop_requested()) {
        throw std::runtime_error("terminated by SIGTERM (a launcher stops the job when a rank fails)");
      }
      skew_->begin_iteration(it);
      ddp_->before_forward(sync);
      enter(EventType::ForwardBegin);
      {
        AutocastGuard autocast(amp_.autocast_device, amp_.autocast_dtype, amp_.autocast);
        loss = workload_->loss(batch);
      }
      // K accumulated gradients of loss/K average like one batch K times as large.
      at::Tensor objective = o_.sync_every > 1 ? loss / static_cast<double>(o_.sync_every) : loss;
      if (scaler_) objective = scaler_->scale(objective);
      if (it == o_.inject_inf_at && env_.rank == 0) {
        objective = objective * std::numeric_limits<double>::infinity();
      }
      skew_->stretch_phase(phase_start_);
      ddp_->after_forward(sync);
      mark(EventType::ForwardEnd);
      enter(EventType::BackwardBegin);
      skew_->begin_backward();
      objective.backward();
      mark(EventType::BackwardEnd);
      if (!local_grads.empty()) dump_grads(local_grads);
      if (sync) {
        enter(EventType::OptimizerBegin);
        optimizer_step(it);
      }
    } catch (const std::exception& error) {
      fail(it, error);
    }
    if (tracer_) tracer_->end_iteration();
    return loss.detach();
  }

  // scaler.unscale_, clip_grad_norm_, scaler.step (skipped when a gradient is not finite: the
  // gradients are all-reduced, so every rank decides alike), scaler.update, zero_grad, with the
  // learning rate of this batch. Under AMP, optimizer_end records stepped/skipped and the scale
  // this iteration's loss was multiplied by.
  void optimizer_step(std::int64_t it) {
    bool finite = true;
    std::string scale_used;
    if (scaler_) {
      std::ostringstream text;
      text << scaler_->current_scale();
      scale_used = text.str();
      finite = scaler_->unscale(ddp_->parameters());
    }
    if (o_.clip_grad_norm > 0) torch::nn::utils::clip_grad_norm_(ddp_->parameters(), o_.clip_grad_norm);
    if (schedule_) {
      for (auto& group : optimizer_->param_groups()) group.options().set_lr(schedule_->rate_at(it));
    }
    if (finite) optimizer_->step();
    if (scaler_) scaler_->update();
    optimizer_->zero_grad();
    skew_->stretch_phase(phase_start_);
    mark(EventType::OptimizerEnd, scaler_ ? (finite ? "stepped" : "skipped") : "", scale_used);
  }

  // Evaluation after iteration `it`, between two iterations in the trace (eval_begin, eval_end
  // with "correct/total"); rank 0 prints the accuracy.
  void run_evaluation(std::int64_t it) {
    phase_ = EventType::EvalBegin;
    phase_start_ = trace::now_ns();
    mark(EventType::EvalBegin);
    EvalCounts counts;
    try {
      counts = evaluate(*workload_, *ddp_->process_group(), amp_);
    } catch (const std::exception& error) {
      fail(it, error);
    }
    const std::string counted = std::to_string(counts.correct) + "/" + std::to_string(counts.total);
    // The counts' all-reduce: how long this rank waited for the others (two int64 counts).
    if (tracer_ && counts.allreduce_ns >= 0) {
      tracer_->record_collective("all_reduce", counts.allreduce_begin_ns, counts.allreduce_ns, 16, "evaluation");
    }
    mark(EventType::EvalEnd, "", counted);
    if (tracer_) tracer_->flush();
    if (env_.rank == 0) {
      std::printf("eval after iteration %" PRId64 ": accuracy %.4f (%s) in %.3f s\n", it + 1,
                  counts.accuracy(), counted.c_str(),
                  static_cast<double>(trace::now_ns() - phase_start_) / 1e9);
      std::fflush(stdout);
    }
  }

  void enter(EventType phase) {
    phase_ = phase;
    phase_start_ = trace::now_ns();
    mark(phase);
  }

  void mark(EventType type, const std::string& kind = "", const std::string& message = "") {
    if (tracer_) tracer_->mark(type, kind, message);
  }

  // A collective failed: the process group is unusable now, so record, report and leave at
  // once, without running destructors that would wait on the dead collective.
  [[noreturn]] void fail(std::int64_t it, const std::exception& error) {
    const std::string message = compat::exception_message(error);
    const FailureKind kind = classify_failure(message);
    const std::int64_t waited = trace::now_ns() - phase_start_;
    const int bucket = tracer_ ? tracer_->pending_bucket() : -1;
    try {
      if (tracer_) tracer_->record_failure(kind, message, waited);
    } catch (const trace::TraceError&) {
      // The trace cannot take the failure (a full disk): the line below still says it.
    }
    const std::string bucket_text = bucket >= 0 ? std::to_string(bucket) : "-";
    std::fprintf(stderr,
                 "ddp-train: rank %d failed at iteration %" PRId64 " bucket %s: %s: %s (in the %s, "
                 "after %.3f s)\n",
                 env_.rank, it, bucket_text.c_str(), to_string(kind), message.c_str(),
                 phase_name(phase_), static_cast<double>(waited) / 1e9);
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(kExitFailure);
  }

  // Dies like a crashed worker: no goodbye to the peers, only a note in its own trace.
  [[noreturn]] void inject_failure(std::int64_t it) {
    if (tracer_) {
      tracer_->begin_iteration(it);
      tracer_->record_failure(FailureKind::Error, "injected failure (--fail-rank)", 0);
    }
    std::fprintf(stderr, "ddp-train: rank %d: injected failure at iteration %" PRId64 "\n",
                 env_.rank, it);
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(kExitInjected);
  }

  // Rank 0 writes the checkpoint, then every rank meets: none runs ahead while it may still be
  // incomplete, and a job that dies later restarts from a whole one. Only after an optimizer
  // step: mid-accumulation gradients are not part of a checkpoint.
  void checkpoint(std::int64_t iterations_done, std::int64_t epoch) {
    if (iterations_done % o_.sync_every != 0) return;
    if (env_.rank == 0) {
      save_checkpoint(o_.checkpoint_dir, *workload_->module(), *optimizer_,
                      {iterations_done, static_cast<std::uint64_t>(epoch)});
    }
    const std::int64_t begin_ns = trace::now_ns();
    ddp_->process_group()->barrier()->wait();
    // The barrier's wait (rank 0's write, for the others) as a `collective` event.
    if (tracer_) {
      tracer_->record_collective("barrier", begin_ns, trace::now_ns() - begin_ns, -1, "checkpoint");
      tracer_->flush();
    }
  }

  // This rank's own gradients for `batch`, before any averaging: torch::autograd::grad returns
  // them without running the gradient accumulators, so neither .grad nor DDP's hooks see them.
  std::vector<at::Tensor> local_gradients(const Batch& batch) {
    const at::Tensor loss = workload_->loss(batch);
    return torch::autograd::grad({loss}, ddp_->parameters());
  }

  void dump_grads(const std::vector<at::Tensor>& local_grads) {
    TensorDump dump(expand_rank_pattern(o_.dump_grads, env_.rank));
    const auto names = workload_->module()->named_parameters(/*recurse=*/true).keys();
    for (std::size_t i = 0; i < local_grads.size(); ++i) {
      dump.write("local_grad", i, names[i], local_grads[i]);
    }
    const auto& params = ddp_->parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
      dump.write("ddp_grad", i, names[i], params[i].grad());
    }
  }

  void write_step_times(const std::vector<double>& step_seconds) const {
    const std::string path = expand_rank_pattern(o_.step_times, env_.rank);
    std::ofstream out(path);
    if (!out) throw UsageError("--step-times " + path + ": cannot open for writing");
    out << "{\"rank\": " << env_.rank << ", \"step_seconds\": [";
    out.precision(9);
    for (std::size_t i = 0; i < step_seconds.size(); ++i) out << (i ? ", " : "") << step_seconds[i];
    out << "]}\n";
  }

  void dump_params() {
    TensorDump dump(expand_rank_pattern(o_.dump_params, env_.rank));
    std::size_t i = 0;
    for (const auto& item : workload_->module()->named_parameters(/*recurse=*/true)) {
      dump.write("param", i++, item.key(), item.value());
    }
  }

  const TrainOptions& o_;
  const launch::DistEnv env_;
  std::unique_ptr<Workload> workload_;
  std::unique_ptr<trace::TraceWriter> writer_;
  std::unique_ptr<SkewInjector> skew_;  // writes to writer_; its hooks go before tracer_'s
  std::unique_ptr<DdpTracer> tracer_;
  std::unique_ptr<DistributedDataParallel> ddp_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  EvalSettings amp_;                     // autocast and device, for training and evaluation
  std::unique_ptr<GradScaler> scaler_;   // --amp
  std::unique_ptr<LrSchedule> schedule_;  // --lr-schedule / --warmup-steps
  EventType phase_ = EventType::IterationBegin;
  std::int64_t phase_start_ = 0;
};

}  // namespace

namespace {

// Every path the run will write, checked before any work: a bad one is a usage error (exit 2)
// at once, not a failure after the training it was meant to record.
void check_paths(const TrainOptions& o, const launch::DistEnv& env, const launch::InitMethod& init) {
  namespace fs = std::filesystem;
  if (o.fail_rank >= env.world_size) {
    throw UsageError("--fail-rank " + std::to_string(o.fail_rank) + ": expected a rank below the world size " +
                     std::to_string(env.world_size));
  }
  if (init.kind == launch::InitMethod::Kind::File) {
    const fs::path parent = fs::path(init.path).parent_path();
    if (!fs::is_directory(parent)) {
      throw UsageError("--init " + init.text + ": expected a file in an existing directory, got no directory " +
                       parent.string());
    }
  }
  if (o.resume && !fs::is_regular_file(checkpoint_path(o.checkpoint_dir))) {
    throw UsageError("--resume: " + checkpoint_path(o.checkpoint_dir) +
                     ": no checkpoint there (expected a file written by --checkpoint-every)");
  }
  if (o.checkpoint_every > 0) {
    std::error_code ec;
    fs::create_directories(o.checkpoint_dir, ec);
    if (ec || !fs::is_directory(o.checkpoint_dir)) {
      throw UsageError("--checkpoint-dir " + o.checkpoint_dir +
                       ": expected a directory that can be created, got " +
                       (ec ? ec.message() : std::string("a file")));
    }
  }
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--step-times", &o.step_times}, {"--dump-grads", &o.dump_grads}, {"--dump-params", &o.dump_params}};
  for (const auto& [flag, pattern] : outputs) {
    if (pattern->empty()) continue;
    const fs::path path = expand_rank_pattern(*pattern, env.rank);
    const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    if (!fs::is_directory(parent) || fs::is_directory(path)) {
      throw UsageError(std::string(flag) + " " + path.string() +
                       ": expected a file in an existing directory");
    }
  }
}

}  // namespace

int run_training(const TrainOptions& options) {
  launch::DistEnv env;
  try {
    compat::check_backend_available(options.backend);
    if (options.on_cuda()) compat::check_cuda_available();
    env = launch::detect_dist_env();
    const launch::InitMethod init = launch::parse_init_method(options.init_method);
    options.skew.check_ranks(env.world_size);
    check_paths(options, env, init);
  } catch (const trace::SkewError& error) {
    throw UsageError(error.what());
  } catch (const compat::UnsupportedBackendError& error) {
    throw UsageError(error.what());
  } catch (const launch::DistEnvError& error) {
    throw UsageError(error.what());
  } catch (const launch::InitMethodError& error) {
    throw UsageError(std::string("--init ") + error.what());
  }
  try {
    return Trainer(options, env).run();
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& error) {
    // Setup failed (rendezvous, process group, model mismatch across ranks).
    const std::string message = compat::exception_message(error);
    std::fprintf(stderr, "ddp-train: rank %d: %s: %s\n", env.rank,
                 to_string(classify_failure(message)), message.c_str());
    return kExitFailure;
  }
}

}  // namespace ddpsim::runtime
