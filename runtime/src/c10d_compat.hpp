// The one place that knows which LibTorch it is compiled against.
//
// c10d's C++ API is not stable: LibTorch 2.x splits ProcessGroup into a dispatching
// c10d::ProcessGroup plus per-device c10d::Backend objects, changed the Reducer constructor, and
// raises c10::DistBackendError. Everything the runtime needs from c10d that differs between
// versions goes through these functions; the rest of runtime/ uses only what both share
// (ProcessGroup's collectives, Reducer's per-iteration calls, GradBucket, Logger).
//
// Built and tested: LibTorch 2.13 (pip wheel, CPU), Gloo. Compiled and linked: LibTorch 2.14.1
// (CUDA 13 wheel) with NCCL. Built and run on a GPU: LibTorch 2.11 (CUDA 13, NCCL 2.28) with
// -DDDPSIM_TORCH_ANY_VERSION=ON. c10d's C++ API changes between minor releases (2.13's Reducer
// took a per-bucket cap list; autograd nodes went from shared_ptr to intrusive_ptr), so other
// versions are refused at configure time unless asked for (see runtime/CMakeLists.txt).
#pragma once

#include <torch/csrc/autograd/variable.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>
#include <torch/version.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ddpsim/launch/dist_env.hpp"
#include "ddpsim/launch/init_method.hpp"
#include "ddpsim/runtime/device_selection.hpp"

namespace ddpsim::runtime::compat {

// The owning pointer to a parameter's AccumulateGrad node: c10::intrusive_ptr since LibTorch
// 2.13, std::shared_ptr before. Holding it keeps the node (and the hooks we added) alive.
using GradAccumulatorPtr =
    decltype(torch::autograd::impl::grad_accumulator(std::declval<const at::Tensor&>()));

// The requested backend is not part of this build (exit status 2: it is a usage error).
class UnsupportedBackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How ranks find each other (torch.distributed.init_process_group's init_method).
struct Rendezvous {
  enum class Kind {
    Tcp,     // TCPStore served by rank 0 at host:port (env:// and tcp://)
    File,    // FileStore on a shared file (file://)
    Memory,  // HashStore: a single process needs no rendezvous
  };
  Kind kind = Kind::Memory;
  std::string host = "127.0.0.1";
  int port = 29500;
  std::string file_path;
};

struct ProcessGroupSpec {
  std::string backend = "gloo";  // gloo | nccl
  int rank = 0;
  int world_size = 1;
  Rendezvous rendezvous;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
};

// The process group a launched program joins: this rank of `env`, over the rendezvous `init`
// names (env:// is the launcher's MASTER_ADDR:MASTER_PORT, none for a lone process; file:// and
// tcp:// as given), with `backend` and a timeout of `timeout_s` seconds. ddp-train and
// ddp-machine-profile share it, so a profile joins its process group exactly as the job does.
ProcessGroupSpec process_group_spec(const std::string& backend, const launch::InitMethod& init,
                                    const launch::DistEnv& env, double timeout_s);

// Throws UnsupportedBackendError when `backend` cannot run with this LibTorch on this machine
// (nccl without CUDA). Cheap: call it before anything else so the error comes first.
void check_backend_available(const std::string& backend);

// Throws UnsupportedBackendError when this LibTorch has no CUDA (--device cuda on the CPU build).
void check_cuda_available();

// Makes the rank's CUDA device (cuda_device_for_rank) the current one, as a Python DDP script's
// torch.cuda.set_device(local_rank) does before init_process_group: NCCL binds its communicator to
// the current device. Returns the device index; throws UsageError (no device, too few devices) or
// UnsupportedBackendError (no CUDA in this build). Gloo's ranks may share a device (Shared).
int bind_cuda_device(int local_rank, GpuSharing sharing = GpuSharing::OneRankPerGpu);

// Rendezvous through the store, then the backend's own connection setup. Every rank must call
// it; it returns once all world_size ranks have joined (or throws after the timeout).
c10::intrusive_ptr<c10d::ProcessGroup> make_process_group(const ProcessGroupSpec& spec);

// What torch.distributed.destroy_process_group() does before exit: a NCCL group's backend is
// shut down (its communicators finished, its watchdog stopped). Without it ProcessGroupNCCL's
// destructor warns on every run, and once on an H200 its watchdog reported the communicator
// torn down under it as "NCCL error: unhandled system error" after the job had finished.
// Gloo needs nothing.
void shutdown_process_group(c10d::ProcessGroup& group);

// c10d::Reducer with find_unused_parameters = false, gradient_as_bucket_view = false and dense
// gradients: the configuration Python DDP uses by default. `bucket_bytes_cap_list` non-empty:
// the Reducer rebuilds its buckets with these limits (bucket i's cap, the last repeating)
// instead of {first_bucket_bytes_cap, bucket_bytes_cap}, as Python DDP's bucket_cap_mb_list
// asks; a LibTorch whose Reducer lacks the list refuses it (UsageError).
std::shared_ptr<c10d::Reducer> make_reducer(
    std::vector<at::Tensor> params, std::vector<std::vector<size_t>> bucket_indices,
    c10::intrusive_ptr<c10d::ProcessGroup> group, std::int64_t bucket_bytes_cap,
    std::int64_t first_bucket_bytes_cap,
    std::unordered_map<size_t, std::string> param_names,
    std::vector<std::int64_t> bucket_bytes_cap_list = {});

// Sees each bucket's all-reduce from the comm hook. on_launch runs on the autograd thread that
// made the bucket ready, just before the collective starts; on_complete runs on the backend's
// thread when it has finished, before the Reducer may copy the result into the gradients.
class AllreduceObserver {
 public:
  virtual ~AllreduceObserver() = default;
  virtual void on_launch(const c10d::GradBucket& bucket, std::int64_t bytes) = 0;
  virtual void on_complete(std::size_t bucket_index, std::int64_t bytes) = 0;
};

// The comm hook that reproduces PyTorch's default reduction (average = sum / world size) while
// telling `observer` when each bucket starts and finishes. `observer` must outlive the Reducer.
std::unique_ptr<c10d::CommHookInterface> make_observed_allreduce_hook(
    c10::intrusive_ptr<c10d::ProcessGroup> group, AllreduceObserver* observer);

// The NCCL version this LibTorch runs ("2.28.3"), or "" in a build without NCCL.
std::string nccl_version();

// The message of an exception thrown by c10d or a backend, on one line without a backtrace.
std::string exception_message(const std::exception& error);

}  // namespace ddpsim::runtime::compat
