#include "c10d_compat.hpp"

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/cuda.h>

#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/NCCLUtils.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <type_traits>

#include "ddpsim/runtime/device_selection.hpp"
#include "ddpsim/runtime/failure_kind.hpp"
#include "ddpsim/runtime/train_options.hpp"

namespace ddpsim::runtime::compat {
namespace {

constexpr std::chrono::milliseconds kMinRendezvousTimeout{std::chrono::seconds(60)};

c10::intrusive_ptr<c10d::Store> make_store(const ProcessGroupSpec& spec) {
  const Rendezvous& rv = spec.rendezvous;
  switch (rv.kind) {
    case Rendezvous::Kind::Tcp: {
      c10d::TCPStoreOptions options;
      options.port = static_cast<std::uint16_t>(rv.port);
      options.isServer = spec.rank == 0;
      options.numWorkers = static_cast<std::size_t>(spec.world_size);
      options.waitWorkers = true;
      // The store only carries the rendezvous. Its timeout bounds how long ranks may take to
      // start, which has nothing to do with the collective timeout under study: a 1 s
      // collective timeout must not make a rank that starts 1 s late (a loaded machine) fail.
      options.timeout = std::max(spec.timeout, kMinRendezvousTimeout);
      return c10::make_intrusive<c10d::TCPStore>(rv.host, options);
    }
    case Rendezvous::Kind::File:
      return c10::make_intrusive<c10d::FileStore>(rv.file_path, spec.world_size);
    case Rendezvous::Kind::Memory:
      return c10::make_intrusive<c10d::HashStore>();
  }
  throw std::logic_error("unknown rendezvous kind");
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// Gloo needs one local network device to talk through. Like torch.distributed: the interface
// named by GLOO_SOCKET_IFNAME if set, otherwise this host's address. A job whose rendezvous
// address is a loopback address runs on one machine, so loopback is used then: it always
// exists, even where the host name does not resolve (containers).
std::shared_ptr<::gloo::transport::Device> make_gloo_device(const ProcessGroupSpec& spec) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname) {
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  }
  if (spec.world_size == 1 || spec.rendezvous.kind != Rendezvous::Kind::Tcp ||
      is_loopback(spec.rendezvous.host)) {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

c10::intrusive_ptr<c10d::ProcessGroup> make_gloo_group(const c10::intrusive_ptr<c10d::Store>& store,
                                                       const ProcessGroupSpec& spec) {
  auto options = c10d::ProcessGroupGloo::Options::create(spec.timeout);
  options->devices.push_back(make_gloo_device(spec));
  // torch.distributed uses two threads per device.
  options->threads = static_cast<int>(options->devices.size()) * 2;
  auto gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(store, spec.rank, spec.world_size,
                                                          options);
  // As torch.distributed's _new_process_group_helper does: the backend is attached to a
  // dispatching ProcessGroup for the device type it serves.
  auto group = c10::make_intrusive<c10d::ProcessGroup>(store, spec.rank, spec.world_size);
  // CUDA too, as torch.distributed registers "gloo" for both: under --device cuda the buckets are
  // CUDA tensors, which ProcessGroupGloo stages through host memory.
  group->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, gloo);
  group->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::GLOO, gloo);
  group->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
  return group;
}

#ifdef USE_C10D_NCCL
// Compiled and linked against the CUDA LibTorch (CI's CUDA leg); run on an H100 and an H200
// (scripts/gpu-check.sh).
c10::intrusive_ptr<c10d::ProcessGroup> make_nccl_group(const c10::intrusive_ptr<c10d::Store>& store,
                                                       const ProcessGroupSpec& spec) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = spec.timeout;
  auto nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, spec.rank, spec.world_size,
                                                          options);
  auto group = c10::make_intrusive<c10d::ProcessGroup>(store, spec.rank, spec.world_size);
  group->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::NCCL, nccl);
  group->setDefaultBackend(c10d::ProcessGroup::BackendType::NCCL);
  return group;
}
#endif

// A hook's future holds what the collective produced: a tensor list from ProcessGroup work.
at::Tensor first_tensor_of(const c10::IValue& result) {
  if (result.isTensor()) return result.toTensor();
  if (result.isTensorList()) return result.toTensorList().get(0);
  return result.toTensorVector().at(0);
}

// Written against c10d::CommHookInterface rather than CppCommHookInterface<T>: the hook's
// result is a plain tensor list, and the base interface asks for nothing more.
class ObservedAllreduceHook final : public c10d::CommHookInterface {
 public:
  ObservedAllreduceHook(c10::intrusive_ptr<c10d::ProcessGroup> group, AllreduceObserver* observer)
      : group_(std::move(group)), observer_(observer), scale_(1.0 / group_->getSize()) {}

  c10::intrusive_ptr<c10::ivalue::Future> runHook(c10d::GradBucket& bucket) override {
    at::Tensor& buffer = bucket.getBufferRef();
    const std::int64_t bytes =
        buffer.numel() * static_cast<std::int64_t>(buffer.element_size());
    const std::size_t index = bucket.getIndex();
    observer_->on_launch(bucket, bytes);
    // The Reducer copies the hook's result into the gradients as is, so averaging is the
    // hook's job. Multiplying by 1/W is what the Reducer's own default path does while it
    // copies gradients into the bucket, so traced and untraced runs compute the same values.
    buffer.mul_(scale_);
    std::vector<at::Tensor> tensors = {buffer};
    auto collective = group_->allreduce(tensors)->getFuture();
    // then() rather than addCallback(): the Reducer waits on the future we return, so the
    // completion is recorded before backward() can return.
    AllreduceObserver* observer = observer_;
    return collective->then(
        [observer, index, bytes](c10::ivalue::Future& done) -> c10::IValue {
          // then() runs this on failure too; a failed collective did not complete, and
          // value() rethrows its error to the Reducer.
          if (!done.hasError()) observer->on_complete(index, bytes);
          return done.value();
        },
        collective->elementType());
  }

  at::Tensor parseHookResult(const c10::IValue& result) override {
    return first_tensor_of(result);
  }

 private:
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  AllreduceObserver* observer_;
  double scale_;
};

}  // namespace

void check_backend_available(const std::string& backend) {
  if (backend == "gloo") return;
  if (backend == "nccl") {
#ifdef USE_C10D_NCCL
    // Whether this rank has a device of its own is bind_cuda_device's question.
    return;
#else
    throw UnsupportedBackendError(
        "this build of ddp-train has no NCCL (LibTorch without CUDA); use --backend gloo");
#endif
  }
  throw UnsupportedBackendError("--backend " + backend + ": expected gloo or nccl");
}

void check_cuda_available() {
#ifndef USE_C10D_NCCL
  throw UnsupportedBackendError(
      "--device cuda: this build of ddp-train has no CUDA (LibTorch without CUDA); use --device cpu");
#endif
}

int bind_cuda_device(int local_rank, GpuSharing sharing) {
#ifdef USE_C10D_NCCL
  const int device =
      cuda_device_for_rank(local_rank, static_cast<int>(torch::cuda::device_count()), sharing);
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(device));
  return device;
#else
  (void)local_rank;
  if (sharing == GpuSharing::Shared) check_cuda_available();  // throws: no CUDA in this build
  check_backend_available("nccl");  // throws: no CUDA in this build
  return -1;
#endif
}


namespace {

// The rendezvous an --init method names (process_group_spec).
Rendezvous rendezvous_for(const launch::InitMethod& init, const launch::DistEnv& env) {
  Rendezvous rv;
  switch (init.kind) {
    case launch::InitMethod::Kind::File:
      rv.kind = Rendezvous::Kind::File;
      rv.file_path = init.path;
      break;
    case launch::InitMethod::Kind::Tcp:
      rv.kind = Rendezvous::Kind::Tcp;
      rv.host = init.host;
      rv.port = init.port;
      break;
    case launch::InitMethod::Kind::Env:
      // A lone process needs no rendezvous server (and no free port).
      rv.kind = env.world_size == 1 ? Rendezvous::Kind::Memory
                                    : Rendezvous::Kind::Tcp;
      rv.host = env.master_addr;
      rv.port = env.master_port;
      break;
  }
  return rv;
}

}  // namespace

ProcessGroupSpec process_group_spec(const std::string& backend, const launch::InitMethod& init,
                                    const launch::DistEnv& env, double timeout_s) {
  ProcessGroupSpec spec;
  spec.backend = backend;
  spec.rank = env.rank;
  spec.world_size = env.world_size;
  spec.rendezvous = rendezvous_for(init, env);
  spec.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000.0));
  return spec;
}

std::string nccl_version() {
#ifdef USE_C10D_NCCL
  return c10d::getNcclVersion();
#else
  return "";
#endif
}

c10::intrusive_ptr<c10d::ProcessGroup> make_process_group(const ProcessGroupSpec& spec) {
  check_backend_available(spec.backend);
  auto store = make_store(spec);
#ifdef USE_C10D_NCCL
  if (spec.backend == "nccl") return make_nccl_group(store, spec);
#endif
  return make_gloo_group(store, spec);
}

void shutdown_process_group(c10d::ProcessGroup& group) {
#ifdef USE_C10D_NCCL
  if (group.getBackendType() == c10d::ProcessGroup::BackendType::NCCL) {
    group.getBackend(c10::DeviceType::CUDA)->shutdown();
  }
#else
  (void)group;
#endif
}

std::shared_ptr<c10d::Reducer> make_reducer(
    std::vector<at::Tensor> params, std::vector<std::vector<size_t>> bucket_indices,
    c10::intrusive_ptr<c10d::ProcessGroup> group, std::int64_t bucket_bytes_cap,
    std::int64_t first_bucket_bytes_cap, std::unordered_map<size_t, std::string> param_names,
    std::vector<std::int64_t> bucket_bytes_cap_list) {
  std::vector<bool> expect_sparse_gradients(params.size(), false);
  const bool find_unused_parameters = false;
  const bool gradient_as_bucket_view = false;
  const bool skip_all_reduce_unused_params = false;
  const bool use_python_reducer = false;
  // Empty: the Reducer rebuilds buckets with its own rule (first_bucket_bytes_cap, then
  // bucket_bytes_cap), as Python DDP asks when no per-bucket caps are given; otherwise these
  // limits replace that rule in Reducer::rebuild_buckets.
  // 2.13 added bucket_bytes_cap_list; the LibTorch 2.11 on the GPU machines we were lent has
  // the constructor without it. Choosing by what compiles keeps one code path for both.
  using Params = std::vector<at::Tensor>;
  using Buckets = std::vector<std::vector<size_t>>;
  using Group = c10::intrusive_ptr<c10d::ProcessGroup>;
  using Names = std::unordered_map<size_t, std::string>;
  if constexpr (std::is_constructible_v<c10d::Reducer, Params, Buckets, Group, std::vector<bool>,
                                        std::int64_t, bool, bool, Names, std::int64_t, bool, bool,
                                        std::vector<std::int64_t>>) {
    return std::make_shared<c10d::Reducer>(
        std::move(params), std::move(bucket_indices), std::move(group),
        std::move(expect_sparse_gradients), bucket_bytes_cap, find_unused_parameters,
        gradient_as_bucket_view, std::move(param_names), first_bucket_bytes_cap,
        skip_all_reduce_unused_params, use_python_reducer, std::move(bucket_bytes_cap_list));
  } else {
    if (!bucket_bytes_cap_list.empty()) {
      throw UsageError(std::string("--bucket-caps-mb: expected a LibTorch whose Reducer takes a per-bucket cap list (2.13+), got ") +
                       TORCH_VERSION);
    }
    return std::make_shared<c10d::Reducer>(
        std::move(params), std::move(bucket_indices), std::move(group),
        std::move(expect_sparse_gradients), bucket_bytes_cap, find_unused_parameters,
        gradient_as_bucket_view, std::move(param_names), first_bucket_bytes_cap,
        skip_all_reduce_unused_params, use_python_reducer);
  }
}

std::unique_ptr<c10d::CommHookInterface> make_observed_allreduce_hook(
    c10::intrusive_ptr<c10d::ProcessGroup> group, AllreduceObserver* observer) {
  return std::make_unique<ObservedAllreduceHook>(std::move(group), observer);
}

std::string exception_message(const std::exception& error) {
  // c10::Error::what() appends a C++ backtrace; its message alone is what a user needs.
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) {
    return first_line(c10_error->what_without_backtrace());
  }
  return first_line(error.what());
}

}  // namespace ddpsim::runtime::compat
