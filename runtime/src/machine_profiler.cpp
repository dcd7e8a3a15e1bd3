// ddp-machine-profile's measurements (machine_profiler.hpp).
#include "machine_profiler.hpp"

#include <torch/cuda.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "ddpsim/trace/io.hpp"

namespace ddpsim::runtime {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "unknown";
  return name;
}

// "4 KiB", "64 MiB", or bytes.
std::string size_text(std::int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

constexpr std::size_t kHostNameBytes = 256;

// Rounds of the all-reduce measurements per --repeats: each round takes milliseconds, and a
// median over more of them moves less between profiles of a noisy machine (traces/MACHINE.md).
constexpr int kRoundsPerRepeat = 3;

}  // namespace

MachineProfiler::MachineProfiler(const MachineProfileOptions& options, const launch::DistEnv& env,
                                 c10::intrusive_ptr<c10d::ProcessGroup> group, at::Device device)
    : options_(options), env_(env), group_(std::move(group)), device_(device) {}

void MachineProfiler::allreduce(std::vector<at::Tensor>& tensors, c10d::ReduceOp op) {
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  try {
    for (at::Tensor& tensor : tensors) {
      std::vector<at::Tensor> one = {tensor};
      c10d::AllreduceOptions options;
      options.reduceOp = op;
      works.push_back(group_->allreduce(one, options));
    }
    for (auto& work : works) work->wait();
    if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
  } catch (const std::exception& error) {
    throw std::runtime_error(what_ + " failed: " + compat::exception_message(error));
  }
}

void MachineProfiler::meet() {
  const std::string what = what_;
  what_ = "the all-reduce that keeps the ranks in step (" + what + ")";
  std::vector<at::Tensor> one = {torch::zeros({1}, torch::TensorOptions().device(device_))};
  allreduce(one);
  what_ = what;
}

std::vector<double> MachineProfiler::gather(const std::vector<double>& mine) {
  const auto n = static_cast<std::int64_t>(mine.size());
  at::Tensor all = torch::zeros({env_.world_size * n}, torch::kFloat64);
  std::copy(mine.begin(), mine.end(), all.data_ptr<double>() + env_.rank * n);
  std::vector<at::Tensor> tensors = {all.to(device_)};
  allreduce(tensors);
  const at::Tensor back = tensors[0].cpu();
  return {back.data_ptr<double>(), back.data_ptr<double>() + back.numel()};
}

std::vector<double> MachineProfiler::slowest(const std::vector<double>& mine) {
  at::Tensor values = torch::tensor(mine, torch::kFloat64);
  std::vector<at::Tensor> tensors = {values.to(device_)};
  allreduce(tensors, c10d::ReduceOp::MAX);
  const at::Tensor back = tensors[0].cpu();
  return {back.data_ptr<double>(), back.data_ptr<double>() + back.numel()};
}

std::vector<std::string> MachineProfiler::host_names() {
  what_ = "gathering the host names";
  at::Tensor all = torch::zeros({static_cast<std::int64_t>(env_.world_size * kHostNameBytes)}, torch::kUInt8);
  const std::string host = this_host().substr(0, kHostNameBytes - 1);
  std::memcpy(all.data_ptr<std::uint8_t>() + env_.rank * kHostNameBytes, host.data(), host.size());
  std::vector<at::Tensor> tensors = {all.to(device_)};
  allreduce(tensors);
  const at::Tensor back = tensors[0].cpu();
  std::vector<std::string> names;
  for (int rank = 0; rank < env_.world_size; ++rank) {
    names.emplace_back(reinterpret_cast<const char*>(back.data_ptr<std::uint8_t>() + rank * kHostNameBytes));
  }
  return names;
}

void MachineProfiler::check_same_options() {
  what_ = "comparing the ranks' flags";
  std::vector<double> mine = {static_cast<double>(options_.sizes.size()),
                              static_cast<double>(options_.overlap_sizes.size()),
                              static_cast<double>(options_.in_flight), static_cast<double>(options_.repeats),
                              static_cast<double>(options_.warmup)};
  for (std::int64_t bytes : options_.sizes) mine.push_back(static_cast<double>(bytes));
  for (std::int64_t bytes : options_.overlap_sizes) mine.push_back(static_cast<double>(bytes));
  // The lists' lengths first: ranks that disagree on them would all-reduce vectors of two lengths.
  std::vector<double> length = {mine[0], -mine[0], mine[1], -mine[1]};
  length = slowest(length);
  if (length[0] != -length[1] || length[2] != -length[3]) {
    throw std::runtime_error("expected every rank to be given the same --sizes and --overlap-size, got lists of " +
                             std::to_string(static_cast<int>(-length[1])) + " to " +
                             std::to_string(static_cast<int>(length[0])) + " and " +
                             std::to_string(static_cast<int>(-length[3])) + " to " +
                             std::to_string(static_cast<int>(length[2])) + " sizes");
  }
  std::vector<double> both = mine;
  for (double value : mine) both.push_back(-value);
  both = slowest(both);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (both[i] != -both[mine.size() + i]) {
      throw std::runtime_error("expected every rank to be given the same --sizes, --overlap-size, --in-flight, "
                               "--repeats and --warmup, got ranks that differ");
    }
  }
}

double MachineProfiler::time_allreduces(std::vector<at::Tensor>& tensors) {
  meet();
  const auto start = std::chrono::steady_clock::now();
  allreduce(tensors);
  return seconds_since(start);
}

trace::AllreduceLadder MachineProfiler::measure_ladder(const std::function<void(const std::string&)>& progress) {
  trace::AllreduceLadder ladder;
  ladder.in_flight = options_.in_flight;
  const auto floats = torch::TensorOptions().dtype(torch::kFloat32).device(device_);
  // Zeros: a sum of zeros stays zero however often it is all-reduced (ones would overflow).
  std::vector<std::vector<at::Tensor>> one, together;
  for (std::int64_t bytes : options_.sizes) {
    one.push_back({torch::zeros({bytes / 4}, floats)});
    std::vector<at::Tensor> k;
    for (int i = 0; i < options_.in_flight; ++i) k.push_back(torch::zeros({bytes / 4}, floats));
    together.push_back(std::move(k));
  }
  const std::size_t steps = options_.sizes.size();
  // samples[round * 2 * steps + 2 * step + (0: one, 1: together)]; rounds interleave the sizes, so
  // a machine whose speed drifts spreads the drift over all of them.
  const int warmup = kRoundsPerRepeat * options_.warmup, rounds = kRoundsPerRepeat * options_.repeats;
  std::vector<double> samples;
  for (int round = 0; round < warmup + rounds; ++round) {
    for (std::size_t step = 0; step < steps; ++step) {
      what_ = "the all-reduce of " + size_text(options_.sizes[step]);
      const double alone = time_allreduces(one[step]);
      what_ = "the " + std::to_string(options_.in_flight) + " all-reduces in flight of " +
              size_text(options_.sizes[step]) + " each";
      const double at_once = time_allreduces(together[step]);
      if (round >= warmup) {
        samples.push_back(alone);
        samples.push_back(at_once);
      }
    }
    if (progress && round >= warmup && (round - warmup + 1) % kRoundsPerRepeat == 0) {
      progress("all-reduce ladder: round " + std::to_string(round - warmup + 1) + "/" + std::to_string(rounds));
    }
  }
  what_ = "gathering the all-reduce times";
  samples = slowest(samples);
  std::vector<double> gains;
  for (std::size_t step = 0; step < steps; ++step) {
    std::vector<double> alone, at_once;
    for (int round = 0; round < rounds; ++round) {
      alone.push_back(samples[round * 2 * steps + 2 * step]);
      at_once.push_back(samples[round * 2 * steps + 2 * step + 1]);
    }
    trace::LadderStep rung;
    rung.bytes = options_.sizes[step];
    rung.one = trace::timing_of(alone);
    rung.together = trace::timing_of(at_once);
    gains.push_back(options_.in_flight * rung.one.median_s / rung.together.median_s);
    ladder.steps.push_back(rung);
  }
  // K at once cannot do more than K times one's work: a larger ratio is noise.
  const double gain = trace::timing_of(gains).median_s;
  ladder.in_flight_gain = std::min<double>(gain, options_.in_flight);
  return ladder;
}

MachineProfiler::Products::Products(at::Device device)
    : device(device), n(device.is_cuda() ? 2048 : 256), per_kernel(device.is_cuda() ? 20 : 40) {
  torch::manual_seed(0);
  a = torch::rand({n, n}, torch::TensorOptions().device(device));
  b = torch::rand({n, n}, torch::TensorOptions().device(device));
  c = torch::empty({n, n}, torch::TensorOptions().device(device));
  sync();
}

void MachineProfiler::Products::run(int count) const {
  for (int i = 0; i < count; ++i) torch::mm_out(c, a, b);
  sync();
}

void MachineProfiler::Products::sync() const {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

double MachineProfiler::time_kernel(int kernels) {
  const Products products(device_);
  const auto start = std::chrono::steady_clock::now();
  products.run(kernels * products.per_kernel);
  return seconds_since(start) / kernels;
}

trace::ComputeColocation MachineProfiler::measure_compute(const std::vector<std::string>& hosts,
                                                          int ranks_per_host) {
  trace::ComputeColocation compute;
  compute.kernel = device_.is_cuda() ? "20 float32 products of 2048x2048 matrices on the rank's GPU"
                                     : "40 float32 products of 256x256 matrices on the CPU, " +
                                           std::to_string(options_.threads) + " thread(s) per rank";
  // This rank's place among its host's ranks: alone, slot s runs while its host's others wait.
  int slot = 0;
  for (int rank = 0; rank < env_.rank; ++rank) slot += hosts[rank] == hosts[env_.rank] ? 1 : 0;
  what_ = "the compute co-location's first kernel";
  time_kernel();  // warm: threads, allocations, caches
  // Each sample runs kColocationKernels kernels back to back (tens of milliseconds on a CPU): with
  // more ranks than cores, a single kernel is shorter than the scheduler's slices, some ranks run
  // it whole before others start, and their own times flatter the host (more effective cores
  // than it has). together[k]: the first k ranks of each host at once, k = 2..K (k = 1 with one
  // rank a host: all ranks at once); a rank outside them records 0, which the gather drops.
  constexpr int kColocationKernels = 10;
  const int fewest = std::min(2, ranks_per_host);
  std::vector<double> alone;
  std::vector<std::vector<double>> together(ranks_per_host + 1);
  for (int round = 0; round < options_.repeats; ++round) {
    for (int turn = 0; turn < ranks_per_host; ++turn) {
      what_ = "the compute co-location (rank alone, turn " + std::to_string(turn) + ")";
      meet();
      if (turn == slot) alone.push_back(time_kernel(kColocationKernels));
    }
    for (int ranks = fewest; ranks <= ranks_per_host; ++ranks) {
      what_ = ranks == ranks_per_host ? std::string("the compute co-location (all ranks at once)")
                                      : "the compute co-location (" + std::to_string(ranks) + " ranks a host at once)";
      meet();
      together[ranks].push_back(slot < ranks ? time_kernel(kColocationKernels) : 0.0);
    }
  }
  what_ = "gathering the compute times";
  compute.alone = trace::timing_of(gather(alone));
  // Co-running cannot give more than one core per rank: a larger ratio is noise.
  const auto cores = [&compute](int ranks, const trace::Timing& at_once) {
    return std::min<double>(ranks * compute.alone.median_s / at_once.median_s, ranks);
  };
  // Every rank gathers each count in turn (a collective); the file lists them from 3 ranks a host.
  // The host's throughput is its ranks' work over the time until the last of them ended, which
  // is also what a job's all-reduce waits for: the median rank's time would flatter it (3 ranks
  // on 2 cores: the median came out above 2 cores).
  for (int ranks = fewest; ranks <= ranks_per_host; ++ranks) {
    const std::vector<double> all = gather(together[ranks]);
    std::vector<double> computed = all;
    computed.erase(std::remove(computed.begin(), computed.end(), 0.0), computed.end());
    trace::ColocationStep step{ranks, trace::timing_of(std::move(computed)),
                               trace::timing_of(trace::slowest_per_host_and_round(all, hosts, options_.repeats))};
    step.effective_cores = cores(ranks, *step.slowest);
    if (ranks_per_host >= 3) compute.by_ranks.push_back(step);
    if (ranks == ranks_per_host) {
      compute.together = step.together;
      compute.slowest = step.slowest;
      compute.effective_cores = step.effective_cores;
    }
  }
  return compute;
}

trace::ComputeCommOverlap MachineProfiler::measure_overlap(std::int64_t bytes) {
  // The fractions are ratios of two noisy medians: kRoundsPerRepeat rounds per repetition.
  trace::ComputeCommOverlap overlap;
  overlap.bytes = bytes;
  const std::string size = size_text(overlap.bytes);
  std::vector<at::Tensor> one = {torch::zeros({overlap.bytes / 4}, torch::TensorOptions().dtype(torch::kFloat32).device(device_))};
  Products products(device_);
  std::vector<double> alone, busy, quiet_pace, busy_pace;
  for (int round = 0; round < kRoundsPerRepeat * (options_.warmup + options_.repeats); ++round) {
    what_ = "the all-reduce of " + size + " alone (overlap)";
    const double alone_s = time_allreduces(one);
    what_ = "the compute kernel on every rank at once (overlap)";
    meet();
    auto start = std::chrono::steady_clock::now();
    products.run(products.per_kernel);
    const double quiet_s = seconds_since(start);
    // Each rank issues the all-reduce and computes products one by one until it has ended:
    // the end is seen to within one product, a few percent of the all-reduce.
    what_ = "the all-reduce of " + size + " while the ranks compute";
    meet();
    start = std::chrono::steady_clock::now();
    int done = 0;
    try {
      c10::intrusive_ptr<c10d::Work> work = group_->allreduce(one);
      do {
        products.run(1);
        ++done;
      } while (!work->isCompleted());
      work->wait();
      products.sync();
    } catch (const std::exception& error) {
      throw std::runtime_error(what_ + " failed: " + compat::exception_message(error));
    }
    const double busy_s = seconds_since(start);
    if (round >= kRoundsPerRepeat * options_.warmup) {
      alone.push_back(alone_s);
      busy.push_back(busy_s);
      quiet_pace.push_back(quiet_s);
      busy_pace.push_back(busy_s / done * products.per_kernel);  // seconds per kernel's work
    }
  }
  what_ = "gathering the overlap times";
  overlap.allreduce_alone = trace::timing_of(slowest(alone));
  overlap.allreduce_busy = trace::timing_of(slowest(busy));
  overlap.compute_quiet = trace::timing_of(gather(quiet_pace));
  overlap.compute_busy = trace::timing_of(gather(busy_pace));
  // Overlap cannot make either faster than alone: a larger ratio is noise.
  overlap.allreduce_fraction = std::min(1.0, overlap.allreduce_alone.median_s / overlap.allreduce_busy.median_s);
  overlap.compute_fraction = std::min(1.0, overlap.compute_quiet.median_s / overlap.compute_busy.median_s);
  return overlap;
}

trace::SleepResume MachineProfiler::measure_sleep() {
  constexpr double kRequested = 200e-6;  // about what a straggler emulation sleeps after one gradient
  constexpr int kPerRound = 5;
  trace::SleepResume sleep;
  sleep.requested_s = kRequested;
  Products products(device_);
  std::vector<double> slept, resumed, hot, cost;
  for (int round = 0; round < options_.warmup + options_.repeats; ++round) {
    what_ = "the sleep resume timing";
    meet();
    for (int i = 0; i < kPerRound; ++i) {
      products.run(1);
      auto start = std::chrono::steady_clock::now();
      products.run(1);
      const double hot_s = seconds_since(start);
      start = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::duration<double>(kRequested));
      const double slept_s = seconds_since(start);
      start = std::chrono::steady_clock::now();
      products.run(1);
      const double resumed_s = seconds_since(start);
      if (round >= options_.warmup) {
        hot.push_back(hot_s);
        slept.push_back(slept_s);
        resumed.push_back(resumed_s);
        cost.push_back(slept_s + resumed_s - kRequested - hot_s);
      }
    }
  }
  what_ = "gathering the sleep resume times";
  sleep.slept = trace::timing_of(gather(slept));
  sleep.resumed = trace::timing_of(gather(resumed));
  sleep.hot = trace::timing_of(gather(hot));
  // A median below zero is noise, not a rank that resumes faster than it slept.
  sleep.resume_cost_s = std::max(0.0, trace::timing_of(gather(cost)).median_s);
  return sleep;
}

trace::MachineProfile MachineProfiler::measure(const std::function<void(const std::string&)>& progress) {
  check_same_options();
  trace::MachineProfile profile;
  profile.backend = options_.backend;
  profile.device = device_.is_cuda() ? "cuda" : "cpu";
  profile.world_size = env_.world_size;
  profile.launcher = launch::to_string(env_.source);
  profile.threads = options_.threads;
  profile.torch_version = TORCH_VERSION;
  profile.nccl_version = compat::nccl_version();
  const std::vector<std::string> hosts = host_names();
  for (const std::string& host : hosts) {
    const auto count = std::count(hosts.begin(), hosts.end(), host);
    profile.ranks_per_host = std::max(profile.ranks_per_host, static_cast<int>(count));
    if (std::find(profile.hosts.begin(), profile.hosts.end(), host) == profile.hosts.end()) {
      profile.hosts.push_back(host);
    }
  }
  if (progress) {
    progress(std::to_string(env_.world_size) + " ranks on " + std::to_string(profile.hosts.size()) + " host(s), " +
             options_.backend + " on " + profile.device + "; " + std::to_string(options_.sizes.size()) +
             " sizes from " + size_text(options_.sizes.front()) + " to " + size_text(options_.sizes.back()) + ", " +
             std::to_string(options_.in_flight) + " in flight, " + std::to_string(options_.repeats) + " repeats");
  }
  profile.allreduce = measure_ladder(progress);
  if (progress) progress("compute co-location: " + std::to_string(profile.ranks_per_host) + " rank(s) per host");
  profile.compute = measure_compute(hosts, profile.ranks_per_host);
  // Every size of --overlap-size in turn; the middle one's measurement is the profile's overlap.
  const std::vector<std::int64_t>& overlap_sizes = options_.overlap_sizes;
  const std::size_t middle = (overlap_sizes.size() - 1) / 2;
  std::vector<trace::OverlapAtSize> by_size;
  for (std::size_t i = 0; i < overlap_sizes.size(); ++i) {
    if (progress) progress("all-reduce of " + size_text(overlap_sizes[i]) + " against compute");
    trace::ComputeCommOverlap overlap = measure_overlap(overlap_sizes[i]);
    by_size.push_back({overlap.bytes, overlap.allreduce_alone, overlap.allreduce_busy});
    if (i == middle) profile.overlap = std::move(overlap);
  }
  profile.overlap->by_size = std::move(by_size);
  if (progress) progress("resuming after a sleep");
  profile.sleep = measure_sleep();
  profile.created_utc = trace::utc_now_iso8601();
  return profile;
}

}  // namespace ddpsim::runtime
