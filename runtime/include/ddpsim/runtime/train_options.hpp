// Everything `ddp-train` can be told on its command line.
//
// Torch-free on purpose: parsing and validating flags must not cost a LibTorch compile, and the
// tests check the parser without starting a process group.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "ddpsim/trace/skew.hpp"

namespace ddpsim::runtime {

// Bad input from the user: one line naming the flag and what was expected (exit status 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TrainOptions {
  // Workload.
  std::string model = "mlp";  // mlp | convnet | resnet18 | transformer | mp-mlp
  std::int64_t iterations = 20;
  std::int64_t batch_size = 32;  // per rank
  std::string optimizer = "sgd";  // sgd (momentum 0.9) | adam
  double lr = 0.01;
  std::uint64_t seed = 0;
  int threads = 1;
  // mlp
  std::int64_t width = 1024;
  std::int64_t depth = 4;
  // transformer
  std::int64_t layers = 2;
  std::int64_t d_model = 256;
  std::int64_t heads = 4;
  std::int64_t seq_len = 64;
  std::int64_t vocab = 1024;
  // Synthetic workloads draw sample i deterministically from (seed, i); this is how many exist.
  std::int64_t dataset_size = 50000;
  // convnet: where the Fashion-MNIST idx files are.
  std::string data_dir;  // empty: $DDPSIM_FASHION_MNIST_DIR or /usr/share/datasets/fashion-mnist

  // DDP.
  double bucket_cap_mb = 25.0;
  double first_bucket_cap_mb = 1.0;
  // --bucket-caps-mb A,B,C: DDP's bucket_cap_mb_list (PyTorch 2.13): bucket i's cap, the last
  // repeating, as c10d's size-limit vector. Empty: none (the two caps above apply). Given, it
  // replaces them, and bucket_cap_bytes()/first_bucket_cap_bytes() are its largest cap, as
  // Python DDP sets them.
  std::vector<double> bucket_caps_mb;
  std::string backend = "gloo";  // gloo | nccl
  // Where the model and its gradients live: auto (cuda under NCCL, cpu under Gloo) | cpu | cuda.
  // Gloo with cuda: its collectives stage the buckets through host memory, and ranks may share a
  // GPU (2 ranks on a 1-GPU machine: GPU compute, a real all-reduce).
  std::string device = "auto";
  std::string init_method = "env://";
  double timeout_s = 1800.0;  // torch.distributed's default process-group timeout
  std::string comm_hook = "allreduce";  // allreduce | fp16 | bf16 (PyTorch's default hooks)
  // Gradient accumulation: all-reduce every sync_every-th iteration only (the others run under
  // DDP's no_sync()).
  std::int64_t sync_every = 1;

  // Injected stragglers (--slowdown, --delay, --delay-dist; seed from --skew-seed or --seed).
  trace::SkewSpec skew;

  // Mixed precision (torch.autocast + torch.amp.GradScaler): none (fp32) | bf16 | fp16 (CUDA).
  std::string amp = "none";
  double loss_scale_init = 65536.0;  // GradScaler's init_scale (the lab uses 16384)
  double clip_grad_norm = 0;         // max total gradient norm, 0: no clipping
  // Test-only: at this iteration rank 0 multiplies its loss by +inf, so its gradients (and,
  // after the all-reduce, every rank's) are not finite. -1: never.
  std::int64_t inject_inf_at = -1;

  // Learning-rate schedule, stepped once per batch (lr_schedule.hpp).
  std::string lr_schedule = "constant";  // constant | step | cosine
  std::int64_t warmup_steps = 0;
  std::int64_t lr_step_size = 1000;  // step: multiply by lr_gamma every lr_step_size steps
  double lr_gamma = 0.1;

  // Evaluation over the test split every eval_every iterations (0: never), sharded like
  // DistributedSampler(shuffle=False); accuracy is all-reduced, printed and traced.
  std::int64_t eval_every = 0;
  std::int64_t eval_batch_size = 64;

  // Checkpoints: rank 0 writes DIR/checkpoint.pt every N iterations; --resume loads it.
  std::string checkpoint_dir;
  std::int64_t checkpoint_every = 0;  // 0: never
  bool resume = false;

  // Observation.
  std::string trace_dir = "trace";
  bool trace = true;
  bool quiet = false;
  // Debug outputs for tests; "{rank}" in the path is replaced by the rank.
  std::string dump_grads;   // local and averaged gradients of the last iteration
  std::string dump_params;  // parameters after the last optimizer step
  std::string step_times;   // JSON of every timed step's seconds ({rank} replaced); benchmarks
  // Fault injection: rank `fail_rank` exits (status 3) when iteration `fail_iteration` begins,
  // as a crashed worker would; the other ranks then see the failure their backend reports.
  int fail_rank = -1;
  std::int64_t fail_iteration = 0;

  std::int64_t bucket_cap_bytes() const;
  std::int64_t first_bucket_cap_bytes() const;
  std::vector<std::int64_t> bucket_cap_bytes_list() const;  // empty without --bucket-caps-mb
  bool on_cuda() const;  // --device resolved: cuda, or auto under NCCL
  // The workload settings recorded in the trace metadata (only those that shape this model).
  std::map<std::string, std::string> workload_settings() const;
};

// Parses argv. Returns nullopt when the program should exit with `exit_code` at once (--help
// printed, exit 0); throws UsageError on bad input.
std::optional<TrainOptions> parse_train_options(int argc, const char* const* argv,
                                                int& exit_code);

// Replaces every "{rank}" in `path_pattern` by `rank`.
std::string expand_rank_pattern(const std::string& path_pattern, int rank);

}  // namespace ddpsim::runtime
