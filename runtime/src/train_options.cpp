#include "ddpsim/runtime/train_options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <iostream>
#include <sstream>
#include <vector>

namespace ddpsim::runtime {
namespace {

constexpr double kBytesPerMiB = 1024.0 * 1024.0;

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void require(bool condition, const std::string& message) {
  if (!condition) throw UsageError(message);
}

// Largest values the run can take: beyond them a value is an overflow (a float learning rate,
// bytes of a bucket in 64 bits, Gloo's timeout in nanoseconds) or a machine-sized mistake.
constexpr double kMaxFloat = std::numeric_limits<float>::max();
constexpr double kMaxBucketCapMb = 1 << 20;     // 1 TiB
constexpr double kMaxTimeoutS = 365.0 * 86400;  // a year
constexpr int kMaxThreads = 1024;
constexpr std::int64_t kMaxDatasetSize = 100'000'000;
constexpr double kMaxParameters = 2147483648.0;  // 2^31 (8 GiB of float32)

// CLI11 2.1 reads integers with strtoll/strtoull and keeps a saturated result (or, for an
// unsigned option, a negative number wrapped around): refuse what does not fit instead.
CLI::Validator fits_in_64_bits(bool non_negative) {
  return CLI::Validator(
      [non_negative](std::string& text) -> std::string {
        if (text.empty()) return "expected an integer, got an empty value";
        const std::size_t digits = text.find_first_not_of(" \t");
        const bool negative = digits != std::string::npos && text[digits] == '-';
        if (non_negative && negative) return "expected a non-negative integer, got " + text;
        errno = 0;
        char* end = nullptr;
        if (negative) {
          (void)std::strtoll(text.c_str(), &end, 0);
        } else {
          (void)std::strtoull(text.c_str(), &end, 0);
        }
        const bool too_big = errno == ERANGE ||
                             (!non_negative && !negative &&
                              std::strtoull(text.c_str(), nullptr, 0) >
                                  static_cast<unsigned long long>(
                                      std::numeric_limits<std::int64_t>::max()));
        if (too_big) return "expected an integer that fits in 64 bits, got " + text;
        return "";
      },
      "");  // no description: --help shows the option's type alone
}

// "1,4,25" -> {1, 4, 25}; every entry a finite number in (0, kMaxBucketCapMb], or one line.
std::vector<double> parse_bucket_caps(const std::string& text) {
  const std::string expected =
      "--bucket-caps-mb " + text + ": expected a comma-separated list of positive MiB up to 1048576 (e.g. 1,4,25)";
  std::vector<double> caps;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    errno = 0;
    const double value = item.empty() ? std::nan("") : std::strtod(item.c_str(), &end);
    require(!item.empty() && end != nullptr && *end == '\0' && errno == 0 && std::isfinite(value) && value > 0 &&
                value <= kMaxBucketCapMb,
            expected);
    caps.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return caps;
}

// About how many parameters the synthetic workloads will allocate (double: no overflow).
double approximate_parameters(const TrainOptions& o) {
  const double width = static_cast<double>(o.width);
  if (o.model == "mlp" || o.model == "mp-mlp") return (static_cast<double>(o.depth) + 1) * width * (width + 1);
  if (o.model == "transformer") {
    const double d = static_cast<double>(o.d_model);
    return static_cast<double>(o.layers) * 12 * d * d +
           (2 * static_cast<double>(o.vocab) + static_cast<double>(o.seq_len)) * d;
  }
  return 0;  // convnet, resnet18: fixed sizes
}

void validate(const TrainOptions& o) {
  require(o.model == "mlp" || o.model == "convnet" || o.model == "resnet18" ||
              o.model == "transformer" || o.model == "mp-mlp",
          "--model " + o.model + ": expected mlp, convnet, resnet18, transformer or mp-mlp");
  require(o.comm_hook == "allreduce" || o.comm_hook == "fp16" || o.comm_hook == "bf16",
          "--comm-hook " + o.comm_hook + ": expected allreduce, fp16 or bf16");
  require(o.sync_every >= 1, "--sync-every: expected a positive integer");
  require(o.checkpoint_every >= 0, "--checkpoint-every: expected a non-negative integer");
  require(o.checkpoint_every == 0 || !o.checkpoint_dir.empty(),
          "--checkpoint-every: expected --checkpoint-dir too");
  require(!o.resume || !o.checkpoint_dir.empty(), "--resume: expected --checkpoint-dir too");
  require(o.optimizer == "sgd" || o.optimizer == "adam",
          "--optimizer " + o.optimizer + ": expected sgd or adam");
  require(o.backend == "gloo" || o.backend == "nccl",
          "--backend " + o.backend + ": expected gloo or nccl");
  require(o.device == "auto" || o.device == "cpu" || o.device == "cuda",
          "--device " + o.device + ": expected auto, cpu or cuda");
  require(o.backend != "nccl" || o.device != "cpu",
          "--device cpu: --backend nccl all-reduces CUDA tensors only; use --backend gloo on the CPU");
  require(o.iterations >= 1, "--iterations: expected a positive integer");
  require(o.batch_size >= 1, "--batch-size: expected a positive integer");
  require(o.threads >= 1 && o.threads <= kMaxThreads,
          "--threads: expected an integer from 1 to " + std::to_string(kMaxThreads));
  require(std::isfinite(o.lr) && o.lr > 0 && o.lr <= kMaxFloat,
          "--lr: expected a positive number (a float32)");
  require(std::isfinite(o.bucket_cap_mb) && o.bucket_cap_mb > 0 && o.bucket_cap_mb <= kMaxBucketCapMb,
          "--bucket-cap-mb: expected a positive number up to 1048576 (MiB)");
  require(std::isfinite(o.first_bucket_cap_mb) && o.first_bucket_cap_mb > 0 &&
              o.first_bucket_cap_mb <= kMaxBucketCapMb,
          "--first-bucket-cap-mb: expected a positive number up to 1048576 (MiB)");
  require(std::isfinite(o.timeout_s) && o.timeout_s > 0 && o.timeout_s <= kMaxTimeoutS,
          "--timeout: expected positive seconds up to a year (31536000)");
  require(o.width >= 1 && o.depth >= 1, "--width/--depth: expected positive integers");
  require(o.layers >= 1 && o.d_model >= 1 && o.heads >= 1 && o.seq_len >= 1 && o.vocab >= 2,
          "--layers/--d-model/--heads/--seq-len/--vocab: expected positive integers (vocab >= 2)");
  require(o.d_model % o.heads == 0, "--d-model " + std::to_string(o.d_model) +
                                        ": expected a multiple of --heads " +
                                        std::to_string(o.heads));
  require(o.dataset_size >= 1 && o.dataset_size <= kMaxDatasetSize,
          "--dataset-size: expected an integer from 1 to " + std::to_string(kMaxDatasetSize));
  require(approximate_parameters(o) <= kMaxParameters,
          "--width/--depth/--layers/--d-model/--vocab: expected a model of at most 2^31 "
          "parameters, got about " + format_number(approximate_parameters(o)));
  require(!o.trace_dir.empty() || !o.trace, "--trace-dir: expected a directory");
  require(o.fail_iteration >= 0, "--fail-iteration: expected a non-negative integer");
  require(o.amp == "none" || o.amp == "bf16" || o.amp == "fp16",
          "--amp " + o.amp + ": expected none, bf16 or fp16");
  require(std::isfinite(o.loss_scale_init) && o.loss_scale_init > 0 && o.loss_scale_init <= kMaxFloat,
          "--loss-scale-init: expected a positive number (a float32)");
  require(std::isfinite(o.clip_grad_norm) && o.clip_grad_norm >= 0 && o.clip_grad_norm <= kMaxFloat,
          "--clip-grad-norm: expected a non-negative number (a float32)");
  require(o.inject_inf_at >= -1, "--inject-inf-at: expected an iteration (>= 0)");
  require(o.inject_inf_at < 0 || o.amp != "none",
          "--inject-inf-at: expected --amp too (only loss scaling skips a non-finite step)");
  require(o.lr_schedule == "constant" || o.lr_schedule == "step" || o.lr_schedule == "cosine",
          "--lr-schedule " + o.lr_schedule + ": expected constant, step or cosine");
  require(o.warmup_steps >= 0, "--warmup-steps: expected a non-negative integer");
  require(o.lr_step_size >= 1, "--lr-step-size: expected a positive integer");
  require(std::isfinite(o.lr_gamma) && o.lr_gamma > 0 && o.lr_gamma <= kMaxFloat,
          "--lr-gamma: expected a positive number (a float32)");
  require(o.fail_rank >= -1, "--fail-rank: expected a rank (>= 0)");
  require(o.eval_every >= 0, "--eval-every: expected a non-negative integer");
  require(o.eval_batch_size >= 1, "--eval-batch-size: expected a positive integer");
  require(o.eval_every == 0 || o.model == "convnet" || o.model == "mlp",
          "--eval-every: expected --model convnet or mlp (the workloads with a test split), got " +
              o.model);
}

}  // namespace

std::int64_t TrainOptions::bucket_cap_bytes() const {
  if (!bucket_caps_mb.empty()) {
    return static_cast<std::int64_t>(*std::max_element(bucket_caps_mb.begin(), bucket_caps_mb.end()) * kBytesPerMiB);
  }
  return static_cast<std::int64_t>(bucket_cap_mb * kBytesPerMiB);
}

std::int64_t TrainOptions::first_bucket_cap_bytes() const {
  // Python DDP with bucket_cap_mb_list: first_bucket_bytes_cap = bucket_bytes_cap = max(list).
  if (!bucket_caps_mb.empty()) return bucket_cap_bytes();
  return static_cast<std::int64_t>(first_bucket_cap_mb * kBytesPerMiB);
}

bool TrainOptions::on_cuda() const {
  return device == "cuda" || (device == "auto" && backend == "nccl");
}

std::vector<std::int64_t> TrainOptions::bucket_cap_bytes_list() const {
  std::vector<std::int64_t> bytes;
  for (double cap_mb : bucket_caps_mb) bytes.push_back(static_cast<std::int64_t>(cap_mb * kBytesPerMiB));
  return bytes;
}

std::map<std::string, std::string> TrainOptions::workload_settings() const {
  std::map<std::string, std::string> settings = {
      {"batch_size", std::to_string(batch_size)},
      {"optimizer", optimizer},
      {"lr", format_number(lr)},
      {"seed", std::to_string(seed)},
      {"threads", std::to_string(threads)},
      {"iterations", std::to_string(iterations)},
  };
  if (lr_schedule != "constant") {
    settings["lr_schedule"] = lr_schedule;
    settings["warmup_steps"] = std::to_string(warmup_steps);
    if (lr_schedule == "step") {
      settings["lr_step_size"] = std::to_string(lr_step_size);
      settings["lr_gamma"] = format_number(lr_gamma);
    }
  }
  if (model == "mlp" || model == "mp-mlp") {
    settings["width"] = std::to_string(width);
    settings["depth"] = std::to_string(depth);
  } else if (model == "transformer") {
    settings["layers"] = std::to_string(layers);
    settings["d_model"] = std::to_string(d_model);
    settings["heads"] = std::to_string(heads);
    settings["seq_len"] = std::to_string(seq_len);
    settings["vocab"] = std::to_string(vocab);
  }
  if (model == "convnet") {
    settings["dataset"] = "fashion-mnist";
  } else {
    settings["dataset"] = "synthetic";
    settings["dataset_size"] = std::to_string(dataset_size);
  }
  return settings;
}

std::optional<TrainOptions> parse_train_options(int argc, const char* const* argv,
                                                int& exit_code) {
  TrainOptions o;
  CLI::App app{
      "ddp-train: data-parallel training on PyTorch's own c10d::Reducer (DistributedDataParallel "
      "without Python), one process per rank, traced for ddpsim.",
      "ddp-train"};
  bool no_trace = false;
  // A repeated flag overrides the earlier one (as with argparse), so scripts can append.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // The test and fault-injection hooks are out of --help; --help-all lists them too. They are
  // hidden only when --help prints: CLI11 names a hidden option "" in its errors.
  app.set_help_all_flag("--help-all", "Print this help and the test hooks, and exit");
  const std::string test_hooks = "Test hooks (--help-all only)";

  const std::string model = "Model and data";
  app.add_option("--model", o.model, "mlp | convnet | resnet18 | transformer")->capture_default_str()->group(model);
  app.add_option("--width", o.width, "mlp: hidden width (also the input size)")->capture_default_str()->group(model);
  app.add_option("--depth", o.depth, "mlp: hidden layers")->capture_default_str()->group(model);
  app.add_option("--layers", o.layers, "transformer: decoder blocks")->capture_default_str()->group(model);
  app.add_option("--d-model", o.d_model, "transformer: model width")->capture_default_str()->group(model);
  app.add_option("--heads", o.heads, "transformer: attention heads")->capture_default_str()->group(model);
  app.add_option("--seq-len", o.seq_len, "transformer: tokens per sample")->capture_default_str()->group(model);
  app.add_option("--vocab", o.vocab, "transformer: vocabulary size")->capture_default_str()->group(model);
  app.add_option("--dataset-size", o.dataset_size, "synthetic workloads: samples in the dataset")
      ->capture_default_str()
      ->group(model);
  app.add_option("--data-dir", o.data_dir, "convnet: directory of the Fashion-MNIST .gz files (default: $DDPSIM_FASHION_MNIST_DIR or /usr/share/datasets/fashion-mnist)")
      ->capture_default_str()
      ->group(model);

  const std::string training = "Training";
  app.add_option("--iterations", o.iterations, "training iterations")->capture_default_str()->group(training);
  app.add_option("--batch-size", o.batch_size, "samples per rank per iteration")
      ->capture_default_str()
      ->group(training);
  app.add_option("--optimizer", o.optimizer, "sgd (momentum 0.9) | adam")->capture_default_str()->group(training);
  app.add_option("--lr", o.lr, "learning rate")->capture_default_str()->group(training);
  app.add_option("--lr-schedule", o.lr_schedule,
                 "constant | step | cosine, stepped once per batch (linear warm-up first)")
      ->capture_default_str()
      ->group(training);
  app.add_option("--warmup-steps", o.warmup_steps,
                 "--lr-schedule: linear warm-up over this many steps")
      ->capture_default_str()
      ->group(training);
  app.add_option("--lr-step-size", o.lr_step_size,
                 "--lr-schedule step: multiply the rate by --lr-gamma every this many steps")
      ->capture_default_str()
      ->group(training);
  app.add_option("--lr-gamma", o.lr_gamma, "--lr-schedule step: the factor")->capture_default_str()->group(training);
  app.add_option("--seed", o.seed, "seed for model initialisation and data order")
      ->capture_default_str()
      ->group(training);
  app.add_option("--threads", o.threads, "intra-op threads per rank (torch::set_num_threads)")
      ->capture_default_str()
      ->group(training);
  app.add_option("--amp", o.amp,
                 "none | bf16 | fp16: autocast the forward to this type (CPU: bf16; fp16 needs "
                 "CUDA) with dynamic loss scaling as torch.amp.GradScaler")
      ->capture_default_str()
      ->group(training);
  app.add_option("--loss-scale-init", o.loss_scale_init,
                 "--amp: the initial loss scale (GradScaler's init_scale; the lab uses 16384)")
      ->capture_default_str()
      ->group(training);
  app.add_option("--clip-grad-norm", o.clip_grad_norm,
                 "clip the gradients' total norm to this (after unscaling under --amp); 0: off")
      ->capture_default_str()
      ->group(training);
  app.add_option("--eval-every", o.eval_every,
                 "evaluate over the test split after every K-th iteration (0: never)")
      ->capture_default_str()
      ->group(training);
  app.add_option("--eval-batch-size", o.eval_batch_size, "samples per rank per evaluation batch")
      ->capture_default_str()
      ->group(training);

  const std::string ddp = "DDP";
  app.add_option("--bucket-cap-mb", o.bucket_cap_mb, "DDP bucket size cap in MiB")->capture_default_str()->group(ddp);
  app.add_option("--first-bucket-cap-mb", o.first_bucket_cap_mb,
                 "cap of the first bucket in MiB (PyTorch's _DEFAULT_FIRST_BUCKET_BYTES)")
      ->capture_default_str()
      ->group(ddp);
  std::string bucket_caps_text;
  const CLI::Option* bucket_caps_given =
      app.add_option("--bucket-caps-mb", bucket_caps_text,
                     "per-bucket caps in MiB, e.g. 1,4,25: bucket i's cap, the last repeating (DDP's "
                     "bucket_cap_mb_list); not with --bucket-cap-mb/--first-bucket-cap-mb")
          ->group(ddp);
  app.add_option("--comm-hook", o.comm_hook,
                 "allreduce | fp16 | bf16: gradient compression as PyTorch's default hooks")
      ->capture_default_str()
      ->group(ddp);
  app.add_option("--sync-every", o.sync_every,
                 "all-reduce every K-th iteration; the others accumulate locally (no_sync)")
      ->capture_default_str()
      ->group(ddp);

  const std::string process_group = "Process group and device";
  app.add_option("--backend", o.backend, "gloo | nccl")->capture_default_str()->group(process_group);
  app.add_option("--device", o.device,
                 "auto | cpu | cuda: where the model and gradients live (auto: cuda under nccl, "
                 "cpu under gloo); gloo with cuda lets ranks share a GPU")
      ->capture_default_str()
      ->group(process_group);
  app.add_option("--init", o.init_method, "env:// | file:///PATH | tcp://HOST:PORT")
      ->capture_default_str()
      ->group(process_group);
  app.add_option("--timeout", o.timeout_s, "process-group timeout in seconds")
      ->capture_default_str()
      ->group(process_group);

  const std::string skew = "Skew (injected stragglers)";
  std::vector<std::string> slowdowns, delays, distributions;
  std::uint64_t skew_seed = 0;
  app.add_option("--slowdown", slowdowns, "RANK=F: that rank's compute takes F (>= 1) times as long (repeatable)")
      ->group(skew);
  app.add_option("--delay", delays,
                 "RANK=MS[@ITER]: that rank (or all) stalls MS ms at the start of iteration ITER "
                 "(every iteration without @ITER; repeatable)")
      ->group(skew);
  app.add_option("--delay-dist", distributions,
                 "RANK|all=lognormal:MU,SIGMA|exp:MEAN|uniform:A,B: a random stall in ms at the "
                 "start of every iteration (repeatable)")
      ->group(skew);
  const CLI::Option* skew_seed_given =
      app.add_option("--skew-seed", skew_seed, "seed of --delay-dist draws (default: --seed)")->group(skew);

  const std::string checkpoints = "Checkpoints";
  app.add_option("--checkpoint-dir", o.checkpoint_dir, "where checkpoint.pt is written and read")->group(checkpoints);
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "rank 0 writes a checkpoint every N iterations (0: never)")
      ->capture_default_str()
      ->group(checkpoints);
  app.add_flag("--resume", o.resume, "every rank starts from --checkpoint-dir's checkpoint")->group(checkpoints);

  const std::string output = "Output";
  app.add_option("--trace-dir", o.trace_dir, "where rank-R.{meta.json,events.csv} go")
      ->capture_default_str()
      ->group(output);
  app.add_flag("--no-trace", no_trace, "record nothing (PyTorch's default all-reduce, no hooks)")->group(output);
  app.add_option("--step-times", o.step_times,
                 "write {\"rank\", \"step_seconds\": [...]} JSON of every step but iteration 0 "
                 "({rank} is replaced): what runtime/bench compares")
      ->group(output);
  app.add_flag("--quiet", o.quiet, "no progress lines")->group(output);

  app.add_option("--inject-inf-at", o.inject_inf_at,
                 "with --amp: rank 0 multiplies its loss at this iteration by +inf, so "
                 "every rank's all-reduced gradients are not finite and the step is skipped")
      ->capture_default_str()
      ->group(test_hooks);
  app.add_option("--dump-grads", o.dump_grads,
                 "write local and averaged gradients of the last iteration ({rank} is "
                 "replaced by the rank)")
      ->group(test_hooks);
  app.add_option("--dump-params", o.dump_params,
                 "write the parameters after the last step ({rank} is replaced)")
      ->group(test_hooks);
  app.add_option("--fail-rank", o.fail_rank, "fault injection: this rank exits (status 3) at --fail-iteration")
      ->group(test_hooks);
  app.add_option("--fail-iteration", o.fail_iteration, "fault injection: the iteration at which --fail-rank exits")
      ->capture_default_str()
      ->group(test_hooks);
  for (const char* name : {"--iterations", "--batch-size", "--width", "--depth", "--layers",
                           "--d-model", "--heads", "--seq-len", "--vocab", "--dataset-size",
                           "--sync-every", "--inject-inf-at", "--warmup-steps", "--lr-step-size",
                           "--eval-every", "--eval-batch-size", "--checkpoint-every",
                           "--fail-iteration"}) {
    app.get_option(name)->check(fits_in_64_bits(false));
  }
  app.get_option("--seed")->check(fits_in_64_bits(true));
  // CLI11 2.1 reads an empty value ("--fail-rank ''") as 0: refuse it for every option.
  const CLI::Validator non_empty(
      [](std::string& text) { return text.empty() ? std::string("expected a value, got an empty one") : std::string(); },
      "");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_items_expected_min() > 0 && !option->get_name().empty() &&
        option->get_name() != "--help") {
      option->check(non_empty);
    }
  }
  app.get_option("--skew-seed")->check(fits_in_64_bits(true));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    for (CLI::Option* option : app.get_options()) {
      if (option->get_group() == test_hooks) option->group("");
    }
    std::cout << app.help();
    exit_code = 0;
    return std::nullopt;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    exit_code = 0;
    return std::nullopt;
  } catch (const CLI::ParseError& error) {
    throw UsageError(error.what());
  }
  o.trace = !no_trace;
  try {
    for (const auto& text : slowdowns) o.skew.slowdowns.push_back(trace::parse_slowdown(text));
    for (const auto& text : delays) o.skew.delays.push_back(trace::parse_delay(text));
    for (const auto& text : distributions) {
      o.skew.distributions.push_back(trace::parse_delay_distribution(text));
    }
  } catch (const trace::SkewError& error) {
    throw UsageError(error.what());
  }
  o.skew.seed = skew_seed_given->count() > 0 ? skew_seed : o.seed;
  if (bucket_caps_given->count() > 0) {
    require(app.get_option("--bucket-cap-mb")->count() == 0 && app.get_option("--first-bucket-cap-mb")->count() == 0,
            "--bucket-caps-mb: expected either the list or --bucket-cap-mb/--first-bucket-cap-mb, got both");
    o.bucket_caps_mb = parse_bucket_caps(bucket_caps_text);
  }
  validate(o);
  return o;
}

std::string expand_rank_pattern(const std::string& path_pattern, int rank) {
  static const std::string placeholder = "{rank}";
  std::string path = path_pattern;
  for (auto at = path.find(placeholder); at != std::string::npos;
       at = path.find(placeholder, at)) {
    path.replace(at, placeholder.size(), std::to_string(rank));
  }
  return path;
}

}  // namespace ddpsim::runtime
