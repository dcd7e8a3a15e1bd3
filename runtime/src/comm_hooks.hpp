// Gradient compression, as PyTorch's default DDP comm hooks
// (torch.distributed.algorithms.ddp_comm_hooks.default_hooks):
//
//   allreduce  sum / world size in the gradients' own dtype (DDP's built-in reduction)
//   fp16       fp16_compress_hook: cast the bucket to float16, divide by the world size,
//              all-reduce, cast back into the bucket
//   bf16       bf16_compress_hook: the same with bfloat16
//
// Division happens before the all-reduce, in the compressed dtype, as PyTorch does (it keeps
// the sum from overflowing float16's range). The observer (the tracer) is told the bytes that
// actually travel, so a trace of an fp16 run shows half the bytes.
#pragma once

#include <memory>
#include <string>

#include "c10d_compat.hpp"

namespace ddpsim::runtime {

// The hook for `name` (allreduce | fp16 | bf16). `observer` may be null; then "allreduce" gives
// null, i.e. the Reducer's own built-in all-reduce with no hook at all.
std::unique_ptr<c10d::CommHookInterface> make_comm_hook(
    const std::string& name, c10::intrusive_ptr<c10d::ProcessGroup> group,
    compat::AllreduceObserver* observer);

}  // namespace ddpsim::runtime
