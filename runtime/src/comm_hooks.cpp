#include "comm_hooks.hpp"

#include "ddpsim/runtime/train_options.hpp"

#include <ATen/core/ivalue.h>

#include <stdexcept>
#include <vector>

namespace ddpsim::runtime {
namespace {

at::Tensor first_tensor(const c10::IValue& result) {
  if (result.isTensor()) return result.toTensor();
  if (result.isTensorList()) return result.toTensorList().get(0);
  return result.toTensorVector().at(0);
}

// Written against c10d::CommHookInterface for the reason given in c10d_compat.cpp.
class CompressedAllreduceHook final : public c10d::CommHookInterface {
 public:
  CompressedAllreduceHook(c10::intrusive_ptr<c10d::ProcessGroup> group, at::ScalarType wire_dtype,
                          compat::AllreduceObserver* observer)
      : group_(std::move(group)), wire_dtype_(wire_dtype), observer_(observer) {}

  c10::intrusive_ptr<c10::ivalue::Future> runHook(c10d::GradBucket& bucket) override {
    at::Tensor buffer = bucket.getBufferRef();
    at::Tensor compressed = buffer.to(wire_dtype_).div_(group_->getSize());
    const std::int64_t bytes =
        compressed.numel() * static_cast<std::int64_t>(compressed.element_size());
    const std::size_t index = bucket.getIndex();
    if (observer_ != nullptr) observer_->on_launch(bucket, bytes);
    std::vector<at::Tensor> tensors = {compressed};
    auto collective = group_->allreduce(tensors)->getFuture();
    compat::AllreduceObserver* observer = observer_;
    // Decompress into the bucket's own buffer (what PyTorch's decompress() does), then hand it
    // back: the Reducer copies the result into the gradients.
    return collective->then(
        [observer, index, bytes, buffer](c10::ivalue::Future& done) -> c10::IValue {
          // As in the plain hook: a failed collective did not complete, and value() rethrows.
          if (observer != nullptr && !done.hasError()) observer->on_complete(index, bytes);
          buffer.copy_(first_tensor(done.value()));
          return c10::IValue(buffer);
        },
        c10::TensorType::get());
  }

  at::Tensor parseHookResult(const c10::IValue& result) override { return first_tensor(result); }

 private:
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  at::ScalarType wire_dtype_;
  compat::AllreduceObserver* observer_;
};

}  // namespace

std::unique_ptr<c10d::CommHookInterface> make_comm_hook(
    const std::string& name, c10::intrusive_ptr<c10d::ProcessGroup> group,
    compat::AllreduceObserver* observer) {
  if (name == "allreduce") {
    if (observer == nullptr) return nullptr;
    return compat::make_observed_allreduce_hook(std::move(group), observer);
  }
  if (name == "fp16") {
    return std::make_unique<CompressedAllreduceHook>(std::move(group), at::kHalf, observer);
  }
  if (name == "bf16") {
    return std::make_unique<CompressedAllreduceHook>(std::move(group), at::kBFloat16, observer);
  }
  throw std::invalid_argument("--comm-hook " + name + ": expected allreduce, fp16 or bf16");
}

}  // namespace ddpsim::runtime
