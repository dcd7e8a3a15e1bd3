// Stand-in for LibTorch's distributed-autograd context header.
//
// c10d/reducer.hpp includes torch/csrc/distributed/autograd/context/context.h, which Debian's
// libtorch-dev 1.13 does not ship. The Reducer only names two things from it: the callback type
// DistAutogradContext::GradCallback (in a static_assert) and ContextPtr (a shared_ptr member, used
// only by RPC-based distributed autograd, which ddp-train never enables). Declaring exactly those,
// with the same types as the real header, keeps Reducer's layout identical to the one compiled
// into libtorch_cpu. runtime/CMakeLists.txt puts this directory on the include path only when the
// real header is missing, so a LibTorch that ships it uses the real one.
#pragma once

#include <ATen/Tensor.h>

#include <functional>
#include <memory>

namespace torch {
namespace distributed {
namespace autograd {

class DistAutogradContext {
 public:
  using GradCallback = std::function<bool(at::Tensor&)>;
};

using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace autograd
}  // namespace distributed
}  // namespace torch
