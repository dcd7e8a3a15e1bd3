// Evaluation over the test split, sharded and all-reduced (evaluation.hpp).
#include "evaluation.hpp"

#include <torch/nn.h>
#include <torch/utils.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "ddpsim/data/sampler.hpp"
#include "ddpsim/trace/io.hpp"
#include "mixed_precision.hpp"

namespace ddpsim::runtime {

Batch Workload::eval_batch(const std::vector<std::int64_t>& /*indices*/) {
  throw std::logic_error("this workload has no test split");
}

torch::Tensor Workload::logits(const torch::Tensor& /*input*/) {
  throw std::logic_error("this workload has no test split");
}

EvalCounts evaluate(Workload& workload, c10d::ProcessGroup& group, const EvalSettings& settings) {
  const auto split_size = static_cast<std::size_t>(workload.eval_dataset_size());
  data::DistributedSampler sampler(split_size, group.getSize(), group.getRank(),
                                   /*shuffle=*/false);
  const std::vector<std::size_t> shard = sampler.indices();
  auto module = workload.module();
  module->eval();
  at::Tensor correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(settings.device));
  {
    torch::NoGradGuard no_grad;
    AutocastGuard autocast(settings.autocast_device, settings.autocast_dtype, settings.autocast);
    const auto batch_size = static_cast<std::size_t>(settings.batch_size);
    for (std::size_t first = 0; first < shard.size(); first += batch_size) {
      const std::size_t last = std::min(shard.size(), first + batch_size);
      const std::vector<std::int64_t> indices(shard.begin() + static_cast<std::ptrdiff_t>(first),
                                              shard.begin() + static_cast<std::ptrdiff_t>(last));
      Batch batch = workload.eval_batch(indices);
      const at::Tensor predicted = workload.logits(batch.input.to(settings.device)).argmax(1);
      correct += predicted.eq(batch.target.to(settings.device)).sum();
    }
  }
  module->train();
  // dist.all_reduce([correct, total], SUM): the whole split's counts on every rank.
  std::vector<at::Tensor> counts = {
      torch::stack({correct, torch::full({}, static_cast<std::int64_t>(shard.size()),
                                         correct.options())})};
  const std::int64_t begin_ns = trace::now_ns();
  group.allreduce(counts)->wait();
  const at::Tensor on_cpu = counts.front().to(torch::kCPU);
  EvalCounts result{on_cpu[0].item<std::int64_t>(), on_cpu[1].item<std::int64_t>()};
  result.allreduce_begin_ns = begin_ns;
  result.allreduce_ns = trace::now_ns() - begin_ns;
  return result;
}

}  // namespace ddpsim::runtime
