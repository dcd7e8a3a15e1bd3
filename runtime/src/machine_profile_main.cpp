// ddp-machine-profile: one rank of a machine profile (traces/MACHINE.md), launched exactly like the
// training job it stands for; rank 0 writes the JSON that `ddp-sim --machine` reads.
#include <torch/torch.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>

#include "c10d_compat.hpp"
#include "ddpsim/launch/dist_env.hpp"
#include "ddpsim/launch/init_method.hpp"
#include "ddpsim/runtime/machine_profile_options.hpp"
#include "ddpsim/runtime/trainer.hpp"
#include "ddpsim/trace/error_reason.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "machine_profiler.hpp"

namespace ddpsim::runtime {
namespace {

void print_summary(const trace::MachineProfile& profile, const std::string& path) {
  std::printf("ddp-machine-profile: %d ranks on %zu host(s), %s on %s, torch %s\n", profile.world_size,
              profile.hosts.size(), profile.backend.c_str(), profile.device.c_str(), profile.torch_version.c_str());
  const std::string together = std::to_string(profile.allreduce.in_flight) + " at once (ms)";
  std::printf("  %12s %14s %20s %8s\n", "bytes", "one (ms)", together.c_str(), "gain");
  for (const trace::LadderStep& step : profile.allreduce.steps) {
    std::printf("  %12lld %14.3f %20.3f %8.2f\n", static_cast<long long>(step.bytes), step.one.median_s * 1e3,
                step.together.median_s * 1e3,
                profile.allreduce.in_flight * step.one.median_s / step.together.median_s);
  }
  std::printf("  %d in flight: x%.3f of one's rate together (median over the sizes)\n", profile.allreduce.in_flight,
              profile.allreduce.in_flight_gain);
  // A profile just measured always has `slowest`: its effective cores come from it.
  std::printf("  compute: %.3f ms alone, %.3f ms until the last of %d rank(s) per host at once ended: %.3f effective "
              "cores\n",
              profile.compute.alone.median_s * 1e3, profile.compute.slowest.value().median_s * 1e3,
              profile.ranks_per_host,
              profile.compute.effective_cores);
  if (!profile.compute.by_ranks.empty()) {
    std::printf("  effective cores by ranks a host at once:");
    for (const trace::ColocationStep& step : profile.compute.by_ranks) std::printf(" %d=%.3f", step.ranks, step.effective_cores);
    std::printf("\n");
  }
  if (profile.overlap) {
    const trace::ComputeCommOverlap& overlap = *profile.overlap;
    std::printf("  overlap: the %.3g MiB all-reduce at x%.3f of its speed while the ranks compute, compute at x%.3f "
                "of its pace while it runs\n",
                static_cast<double>(overlap.bytes) / (1 << 20), overlap.allreduce_fraction, overlap.compute_fraction);
    if (overlap.by_size.size() > 1) {
      std::printf("  overlap by size (the all-reduce's speed while the ranks compute):");
      for (const trace::OverlapAtSize& at : overlap.by_size) {
        // As overlap.allreduce_fraction: overlap cannot make the all-reduce faster than alone.
        std::printf(" %.3g MiB x%.3f", static_cast<double>(at.bytes) / (1 << 20),
                    std::min(1.0, at.allreduce_alone.median_s / at.allreduce_busy.median_s));
      }
      std::printf("\n");
    }
  }
  if (profile.sleep) {
    std::printf("  sleep resume: %.3f ms more than a %.3f ms sleep asked, each time\n", profile.sleep->resume_cost_s * 1e3,
                profile.sleep->requested_s * 1e3);
  }
  std::printf("wrote %s (ddp-sim replay|advise|sweep --machine %s)\n", path.c_str(), path.c_str());
}

int run(const MachineProfileOptions& options) {
  launch::DistEnv env;
  launch::InitMethod init;
  try {
    compat::check_backend_available(options.backend);
    if (options.on_cuda()) compat::check_cuda_available();
    env = launch::detect_dist_env();
    init = launch::parse_init_method(options.init_method);
  } catch (const compat::UnsupportedBackendError& error) {
    throw UsageError(error.what());
  } catch (const launch::DistEnvError& error) {
    throw UsageError(error.what());
  } catch (const launch::InitMethodError& error) {
    throw UsageError(std::string("--init ") + error.what());
  }
  if (env.world_size < 2) {
    throw UsageError("expected at least 2 ranks to all-reduce between, got 1: launch it like the training job "
                     "(ddp-launch --nproc-per-node 2 -- ddp-machine-profile --out machine.json; torchrun; srun)");
  }
  if (env.rank == 0) check_profile_out_path(options.out);
  try {
    torch::set_num_threads(options.threads);
    const int device = options.on_cuda()
                           ? compat::bind_cuda_device(env.local_rank, options.backend == "nccl"
                                                                          ? GpuSharing::OneRankPerGpu
                                                                          : GpuSharing::Shared)
                           : -1;
    auto group = compat::make_process_group(compat::process_group_spec(options.backend, init, env, options.timeout_s));
    const at::Device where = device >= 0 ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(device))
                                         : at::Device(at::kCPU);
    MachineProfiler profiler(options, env, group, where);
    const bool talk = env.rank == 0 && !options.quiet;
    trace::MachineProfile profile = profiler.measure([talk](const std::string& line) {
      if (talk) std::fprintf(stderr, "ddp-machine-profile: %s\n", line.c_str());
    });
    profile.tool_version = DDPSIM_VERSION;
    profile.git_sha = DDPSIM_GIT_SHA;
    if (env.rank == 0) {
      trace::write_machine_profile(options.out, profile);
      if (!options.quiet) print_summary(profile, options.out);
    }
    compat::shutdown_process_group(*group);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ddp-machine-profile: rank %d: %s\n", env.rank, compat::exception_message(error).c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace
}  // namespace ddpsim::runtime

int main(int argc, char** argv) {
  using namespace ddpsim::runtime;
  // A peer that dies mid-transfer must surface as an error from the backend, not kill us.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    int exit_code = kExitOk;
    const auto options = parse_machine_profile_options(argc, argv, exit_code);
    if (!options) return exit_code;
    return run(*options);
  } catch (const UsageError& error) {
    std::fprintf(stderr, "ddp-machine-profile: %s\n", ddpsim::trace::error_reason(error, "reading the options").c_str());
    return kExitUsage;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ddp-machine-profile: %s\n", ddpsim::trace::error_reason(error, "measuring").c_str());
    return kExitFailure;
  } catch (...) {
    std::fprintf(stderr, "ddp-machine-profile: %s\n", ddpsim::trace::unknown_error_reason("measuring").c_str());
    return kExitFailure;
  }
}
