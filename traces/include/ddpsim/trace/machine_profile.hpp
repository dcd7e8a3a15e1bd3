// A machine profile (traces/MACHINE.md): what `ddp-machine-profile` measured on the machines a
// job runs on, for `ddp-sim --machine` to replay that job with. All-reduce times over a ladder of
// message sizes, one at a time and several in flight at once (as DDP issues its buckets); how
// much co-located ranks slow each other's compute; how an all-reduce and the rank's own compute
// slow each other when they overlap (as DDP overlaps buckets with backward); what a rank pays to
// resume after a short sleep. With the provenance to tell whether a trace and a profile belong
// together (backend, hosts, ranks).
//
// Both halves speak it through this library: the runtime writes it, the simulator reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::trace {

// The value of the top-level "ddpsim_machine_profile" key this library writes. It reads this
// version and every earlier one: version 1 has no `overlap` and no `sleep` section.
inline constexpr int kMachineProfileVersion = 2;

// Repeated measurements of one thing: their median, extremes and count (seconds).
struct Timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  int samples = 0;
};

// Repetitions in, their Timing out (median of an even count: the mean of the middle two).
// An empty input gives a Timing of 0 samples.
Timing timing_of(std::vector<double> seconds);

// Per round and host, the slowest of the host's ranks that computed in it: when the host had
// done the round's work. `rank_major` holds `rounds` samples per rank, rank after rank, 0 where
// the rank did not compute; `hosts` names each rank's host. Rounds are in order, hosts in the
// order of their first rank; a host none of whose ranks computed in a round gives nothing.
std::vector<double> slowest_per_host_and_round(const std::vector<double>& rank_major,
                                               const std::vector<std::string>& hosts, int rounds);

// One rung of the all-reduce ladder. Each sample is the slowest rank's time, from a barrier to
// the end of its all-reduce(s).
struct LadderStep {
  std::int64_t bytes = 0;  // one all-reduce's message
  Timing one;              // one all-reduce of `bytes` alone
  Timing together;         // `in_flight` all-reduces of `bytes` each, issued at once, until the last ends
};

struct AllreduceLadder {
  std::string dtype = "float32";
  int in_flight = 2;           // K: how many `together` issues at once
  std::vector<LadderStep> steps;  // by increasing bytes, each size once
  // What K in flight do together over one alone: median over the steps of K · one / together
  // (K when they overlap perfectly, 1 when they queue). With K = 2, ddp-sim's
  // --allreduces-in-flight 2=G.
  double in_flight_gain = 1;
};

// The compute kernel on the first `ranks` of each host at once (the others idle).
struct ColocationStep {
  int ranks = 2;
  Timing together;                // one sample per computing rank and repetition
  std::optional<Timing> slowest;  // one per host and repetition (slowest_per_host_and_round)
  // ranks · alone / slowest (together in a file without it): ddp-sim's --effective-cores ranks=C.
  double effective_cores = 1;
};

// The same compute kernel timed on each rank alone (its host's other ranks idle) and on all of
// a host's ranks at once.
struct ComputeColocation {
  std::string kernel;  // what was timed, in words
  Timing alone;        // one sample per rank and repetition
  Timing together;     // one sample per rank and repetition
  // One sample per host and repetition: when the host's last rank ended (a job's ranks wait for
  // it). Absent from files written before it was measured.
  std::optional<Timing> slowest;
  // K · alone / slowest (together where there is no `slowest`), K the ranks per host: the host's
  // compute throughput with all its ranks busy, in ranks running alone (K when co-running costs
  // nothing). ddp-sim's --effective-cores K=C.
  double effective_cores = 1;
  // Where K >= 3: every count of co-running ranks from 2 to K, increasing, the last one the
  // fields above; what a replay at fewer ranks a host than the profile's needs. Optional.
  std::vector<ColocationStep> by_ranks;
};

// The same all-reduce timed alone and while every rank computes, at one size of --overlap-size.
struct OverlapAtSize {
  std::int64_t bytes = 0;
  Timing allreduce_alone;
  Timing allreduce_busy;
};

// An all-reduce and the rank's own compute at once, on every rank, as DDP runs a bucket's
// all-reduce while backward goes on: each rank issues one all-reduce of `bytes` and computes the
// kernel's matrix products one by one until it ends. In every round, beside it: the all-reduce
// alone, and the kernel on every rank with no all-reduce. Absent from version 1 files.
struct ComputeCommOverlap {
  std::int64_t bytes = 0;
  Timing allreduce_alone;  // the all-reduce of `bytes` with no compute (slowest rank)
  Timing allreduce_busy;   // the same all-reduce while every rank computes (slowest rank)
  Timing compute_quiet;    // compute.kernel on every rank at once, no all-reduce (every rank's)
  Timing compute_busy;     // seconds per compute.kernel's work while the all-reduce runs (every rank's)
  // allreduce_alone / allreduce_busy, in (0, 1]: the all-reduce's speed while compute runs, in
  // units of its speed alone.
  double allreduce_fraction = 1;
  // compute_quiet / compute_busy, in (0, 1]: compute's speed while an all-reduce runs, in units
  // of its speed without one. ddp-sim's --compute-fraction-during-allreduce.
  double compute_fraction = 1;
  // The all-reduce alone and busy at every size measured, increasing (`bytes` among them): an
  // all-reduce under compute first waits for the CPU, then runs at part of its speed, so its
  // fraction depends on its size. The replay takes `bytes`' only (the fields above); these show
  // how far a layout of other bucket sizes is from it. Empty: a file with the one size only.
  std::vector<OverlapAtSize> by_size;
};

// A rank that sleeps `requested_s` and then computes pays more than the sleep: the sleep's
// overshoot and a slower start (cold caches, a core that idled). What a straggler emulated by
// sleeps (ddp-train --slowdown, python_ddp.py --slowdown) pays per sleep. Absent from version 1.
// One sample per rank and round: every rank sleeps, then times one product; then times the same
// product again, hot.
struct SleepResume {
  double requested_s = 0;
  Timing slept;    // how long the sleep took
  Timing resumed;  // the product right after the sleep
  Timing hot;      // the same product right after another
  // The median over the samples of slept + resumed − requested − hot, at least 0: what each
  // sleep costs beyond its request. ddp-sim's --sleep-resume-cost.
  double resume_cost_s = 0;
};

struct MachineProfile {
  int version = kMachineProfileVersion;
  // Provenance.
  std::string tool_name = "ddp-machine-profile";
  std::string tool_version;
  std::string git_sha;
  std::string created_utc;          // ISO 8601, when rank 0 finished measuring
  std::string launcher;             // where the ranks learnt their place: torchrun, slurm, openmpi, ...
  std::string backend;              // gloo | nccl
  std::string device;               // cpu | cuda: where the tensors lived
  int world_size = 0;
  std::vector<std::string> hosts;   // each host once, in the order of their first rank
  int ranks_per_host = 0;           // the most ranks any host ran
  int threads = 0;                  // intra-op threads per rank (torch::set_num_threads)
  std::string torch_version;
  std::string gloo_version;         // empty: not known
  std::string nccl_version;         // empty: not known (or not built with NCCL)
  // Measurements.
  AllreduceLadder allreduce;
  ComputeColocation compute;
  std::optional<ComputeCommOverlap> overlap;  // nullopt: a version 1 file
  std::optional<SleepResume> sleep;           // nullopt: a version 1 file
};

// The profile as JSON text (two-space indented, fields in MACHINE.md's order, one newline at
// the end). Doubles round-trip exactly.
std::string machine_profile_to_json(const MachineProfile& profile);

// Parses and checks a profile. Throws TraceError (io.hpp) naming `file`, the line of the
// offending top-level key and what was expected: one line.
MachineProfile machine_profile_from_json(const std::string& text, const std::string& file);

// Reads `path` (TraceError when it cannot be read or does not hold a valid profile).
MachineProfile read_machine_profile(const std::string& path);
// Writes atomically (write_file_atomically); TraceError naming `path` when it cannot.
void write_machine_profile(const std::string& path, const MachineProfile& profile);

}  // namespace ddpsim::trace
