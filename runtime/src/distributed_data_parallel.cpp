#include "distributed_data_parallel.hpp"

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/distributed/c10d/logger.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

#include "ddpsim/trace/io.hpp"

namespace ddpsim::runtime {
namespace {

// DDP's broadcast_bucket_size: parameters and buffers travel in chunks of at most 250 MiB.
constexpr std::size_t kBroadcastBucketBytes = 250u * 1024u * 1024u;

std::vector<at::Tensor> detached(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(t.detach());
  return out;
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(
    std::shared_ptr<torch::nn::Module> module, c10::intrusive_ptr<c10d::ProcessGroup> group,
    const DdpSettings& settings, std::unique_ptr<c10d::CommHookInterface> comm_hook)
    : module_(std::move(module)), group_(std::move(group)) {
  std::unordered_map<size_t, std::string> param_names;
  for (const auto& item : module_->named_parameters(/*recurse=*/true)) {
    param_names.emplace(params_.size(), item.key());
    params_.push_back(item.value());
  }
  buffers_ = module_->buffers(/*recurse=*/true);

  // _verify_param_shape_across_processes: same count, shapes, dtypes everywhere, or a clear
  // error instead of a hang in the first all-reduce.
  const std::int64_t check_ns = trace::now_ns();
  c10d::verify_params_across_processes(group_, params_, std::nullopt);
  start_up_.push_back({"all_gather", check_ns, trace::now_ns() - check_ns, -1});

  // _sync_module_states: every rank starts from rank 0's parameters and buffers.
  std::vector<at::Tensor> states = detached(params_);
  for (const auto& b : detached(buffers_)) states.push_back(b);
  if (!states.empty()) {
    std::int64_t bytes = 0;
    for (const auto& t : states) bytes += static_cast<std::int64_t>(t.nbytes());
    const std::int64_t broadcast_ns = trace::now_ns();
    c10d::broadcast_coalesced(group_, states, kBroadcastBucketBytes, 0);
    start_up_.push_back({"broadcast", broadcast_ns, trace::now_ns() - broadcast_ns, bytes});
  }

  // _ddp_init_helper without find_unused_parameters: iteration 0 runs with ONE bucket holding
  // every parameter (sys.maxsize limit) because registration order need not be the order in
  // which gradients appear; the Reducer rebuilds buckets from the observed order, using
  // bucket_cap and first_bucket_cap, at the start of iteration 1. Python reverses the lists to
  // approximate backward order.
  // With a per-bucket list (bucket_cap_mb_list) Python DDP 2.13 buckets iteration 0 by the list
  // too (BucketCapacityConfig.compute_bucket_size_limits), in registration order, reversed;
  // the Reducer then rebuilds with the same list.
  std::vector<size_t> initial_limit = {
      static_cast<size_t>(std::numeric_limits<std::int64_t>::max())};
  if (!settings.bucket_cap_bytes_list.empty()) {
    initial_limit.assign(settings.bucket_cap_bytes_list.begin(), settings.bucket_cap_bytes_list.end());
  }
  auto bucket_indices =
      std::get<0>(c10d::compute_bucket_assignment_by_size(params_, initial_limit));
  std::reverse(bucket_indices.begin(), bucket_indices.end());

  reducer_ = compat::make_reducer(params_, std::move(bucket_indices), group_,
                                  settings.bucket_cap_bytes,
                                  settings.first_bucket_cap_bytes, std::move(param_names),
                                  settings.bucket_cap_bytes_list);
  logger_ = std::make_shared<c10d::Logger>(reducer_);
  // Weak in the Reducer, as in Python, to avoid a reference cycle.
  reducer_->set_logger(logger_);
  logger_->set_construction_data_and_log(module_->name(), /*device_ids=*/{},
                                         /*output_device=*/-1, /*broadcast_buffers=*/true,
                                         /*has_sync_bn=*/false, /*static_graph=*/false);
  if (comm_hook) {
    // DDP.register_comm_hook: once, before the first backward.
    logger_->set_comm_hook("ddpsim.observed_allreduce");
    reducer_->register_comm_hook(std::move(comm_hook));
  }
}

DistributedDataParallel::~DistributedDataParallel() {
  // The Logger reads the Reducer in its destructor: drop it first, as Python does.
  logger_.reset();
  reducer_.reset();
}

bool DistributedDataParallel::before_forward(bool sync) {
  if (sync) {
    logger_->set_runtime_stats_and_log();
    reducer_->prepare_for_forward();
  }
  // Before the forward pass, as Python does, so the new buckets are allocated before the
  // activations raise memory use to its peak.
  const bool rebuilt = reducer_->rebuild_buckets();
  if (!buffers_.empty() && last_forward_synced_) {
    // broadcast_buffers=True: rank 0's buffers (e.g. BatchNorm running statistics) win.
    torch::NoGradGuard no_grad;
    c10d::broadcast_coalesced(group_, buffers_, kBroadcastBucketBytes, 0);
  }
  return rebuilt;
}

void DistributedDataParallel::after_forward(bool sync) {
  last_forward_synced_ = sync;
  if (sync) reducer_->prepare_for_backward({});
}

}  // namespace ddpsim::runtime
