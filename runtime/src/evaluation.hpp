// Distributed evaluation as the lab runs it after training batches:
//
//   eval_sampler = DistributedSampler(eval_dataset, shuffle=False)   # this rank's shard
//   model.eval()
//   with torch.no_grad(), autocast(...):
//       for x, y in eval_loader: correct += (model(x).argmax(1) == y).sum(); total += len(y)
//   dist.all_reduce(tensor([correct, total]))                          # the whole split
//   model.train()
//
// The module is run without DDP's forward: in eval mode under no_grad, DDP's forward arms no
// Reducer, and neither evaluable workload has buffers to broadcast.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <cstdint>

#include "workload.hpp"

namespace ddpsim::runtime {

struct EvalCounts {
  std::int64_t correct = 0;
  std::int64_t total = 0;  // samples evaluated by all ranks (padding repeats included)
  // The all-reduce of the counts: when this rank entered it and how long it waited there
  // (trace::now_ns clock), for the trace's `collective` event.
  std::int64_t allreduce_begin_ns = -1;
  std::int64_t allreduce_ns = -1;
  double accuracy() const { return total > 0 ? static_cast<double>(correct) / total : 0.0; }
};

struct EvalSettings {
  std::int64_t batch_size = 64;
  torch::Device device = torch::Device(torch::kCPU);  // where batches go
  bool autocast = false;  // under the training's autocast (AutocastGuard)
  at::DeviceType autocast_device = at::kCPU;
  at::ScalarType autocast_dtype = at::kBFloat16;
};

// Every rank calls it (the counts are all-reduced over `group`); all get the same counts. When
// the world size does not divide the split, the shards are padded by repeating samples, as
// DistributedSampler(drop_last=False) does, and the repeats are counted.
EvalCounts evaluate(Workload& workload, c10d::ProcessGroup& group, const EvalSettings& settings);

}  // namespace ddpsim::runtime
