// torch.nn.parallel.DistributedDataParallel, in C++, on the same c10d::Reducer.
//
// Python DDP is a thin layer over c10d: it checks that every rank has the same parameters,
// broadcasts rank 0's model state, picks the initial buckets, builds the Reducer and Logger, and
// brackets each forward pass with a few Reducer calls. This class does exactly those steps, in
// the order torch/nn/parallel/distributed.py (1.13) does them, so gradients are bucketed,
// all-reduced and averaged by PyTorch's own code.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "c10d_compat.hpp"

namespace c10d {
class Logger;
}

namespace ddpsim::runtime {

struct DdpSettings {
  std::int64_t bucket_cap_bytes = 25LL * 1024 * 1024;
  std::int64_t first_bucket_cap_bytes = 1024 * 1024;
  // DDP's bucket_cap_mb_list in bytes (bucket i's cap, the last repeating); empty: none.
  std::vector<std::int64_t> bucket_cap_bytes_list;
};

// One of the collectives DDP's constructor runs, as this rank saw it (trace::now_ns clock):
// from entering the call until it returned, so a rank that arrives first waits for the others
// in it. With NCCL the call returns once the work is enqueued (c10d's Work::wait syncs streams).
struct StartUpCollective {
  std::string kind;         // all_gather (the parameter check) or broadcast (rank 0's state)
  std::int64_t t_ns = 0;
  std::int64_t dur_ns = 0;
  std::int64_t bytes = -1;  // -1: not known
};

class DistributedDataParallel {
 public:
  // Collective: every rank constructs it with the same model architecture. `comm_hook` may be
  // null (PyTorch's built-in averaging all-reduce). If a tracer hooks the parameters' gradient
  // accumulators, it must have done so before this constructor runs (see DdpTracer).
  DistributedDataParallel(std::shared_ptr<torch::nn::Module> module,
                          c10::intrusive_ptr<c10d::ProcessGroup> group, const DdpSettings& settings,
                          std::unique_ptr<c10d::CommHookInterface> comm_hook);
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  // What DDP.forward() does before running the module: runtime stats, prepare_for_forward, the
  // one-time bucket rebuild (a collective), and the broadcast of rank 0's buffers. Returns true
  // in the iteration whose buckets were rebuilt. `sync` false is a forward inside no_sync()
  // (require_backward_grad_sync = False): no stats, no prepare_for_forward.
  bool before_forward(bool sync = true);
  // What DDP.forward() does after the module ran: arm the Reducer for the coming backward.
  // Under no_sync() (`sync` false) the Reducer is not armed: its autograd hooks return at once
  // and the gradients accumulate locally in .grad until a synchronised backward.
  void after_forward(bool sync = true);

  const std::vector<at::Tensor>& parameters() const { return params_; }
  // The constructor's collectives in the order it ran them: the parameter check
  // (_verify_param_shape_across_processes) and the broadcast of rank 0's parameters and
  // buffers (_sync_module_states; absent for a module without either).
  const std::vector<StartUpCollective>& start_up_collectives() const { return start_up_; }
  const c10::intrusive_ptr<c10d::ProcessGroup>& process_group() const { return group_; }

 private:
  std::shared_ptr<torch::nn::Module> module_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> buffers_;
  std::shared_ptr<c10d::Reducer> reducer_;
  std::shared_ptr<c10d::Logger> logger_;
  // require_forward_param_sync: the buffers are broadcast only after a synchronised forward.
  bool last_forward_synced_ = true;
  std::vector<StartUpCollective> start_up_;
};

}  // namespace ddpsim::runtime
