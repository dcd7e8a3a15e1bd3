// The measurements of `ddp-machine-profile` (traces/MACHINE.md says what each one is) over the
// job's own process group. Every rank runs measure() in step with the others and gets the same
// profile back: each time is the slowest rank's, gathered through the group.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "c10d_compat.hpp"
#include "ddpsim/launch/dist_env.hpp"
#include "ddpsim/runtime/machine_profile_options.hpp"
#include "ddpsim/trace/machine_profile.hpp"

namespace ddpsim::runtime {

class MachineProfiler {
 public:
  // `device` holds the tensors: the CPU, or this rank's CUDA device.
  MachineProfiler(const MachineProfileOptions& options, const launch::DistEnv& env,
                  c10::intrusive_ptr<c10d::ProcessGroup> group, at::Device device);

  // Measures everything; `progress` (rank 0's, may be empty) hears one line per stage.
  // Throws std::runtime_error naming the collective that failed.
  trace::MachineProfile measure(const std::function<void(const std::string&)>& progress = {});

 private:
  // All ranks meet (a one-element all-reduce: the one collective every backend has).
  void meet();
  // Runs `tensors` as one all-reduce each, issued at once, and waits for all of them.
  void allreduce(std::vector<at::Tensor>& tensors, c10d::ReduceOp op = c10d::ReduceOp::SUM);
  // Every rank's `mine` (equal lengths), rank after rank.
  std::vector<double> gather(const std::vector<double>& mine);
  // Element by element, the largest over the ranks.
  std::vector<double> slowest(const std::vector<double>& mine);
  // Every rank's host name, in rank order.
  std::vector<std::string> host_names();
  // Ranks must agree on what they measure, or their collectives would not match.
  void check_same_options();
  // Seconds from now until every all-reduce of `tensors` issued at once has ended.
  double time_allreduces(std::vector<at::Tensor>& tensors);
  trace::AllreduceLadder measure_ladder(const std::function<void(const std::string&)>& progress);
  trace::ComputeColocation measure_compute(const std::vector<std::string>& hosts, int ranks_per_host);
  // How an all-reduce of `bytes` (one of --overlap-size) and the rank's compute slow each other.
  trace::ComputeCommOverlap measure_overlap(std::int64_t bytes);
  trace::SleepResume measure_sleep();
  // The compute kernel: float32 matrix products, the bulk of a backward pass (on a GPU, larger
  // ones, to take milliseconds); `per_kernel` of them are one kernel.
  struct Products {
    explicit Products(at::Device device);
    void run(int count) const;  // `count` products, waited for
    void sync() const;
    at::Device device;
    std::int64_t n;
    int per_kernel;
    at::Tensor a, b;
    mutable at::Tensor c;
  };
  // `kernels` runs of the fixed compute kernel back to back: seconds per run.
  double time_kernel(int kernels = 1);

  MachineProfileOptions options_;
  launch::DistEnv env_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  at::Device device_;
  std::string what_;  // the collective running now, for errors
};

}  // namespace ddpsim::runtime
