// What a machine profile (ddp-machine-profile; traces/MACHINE.md) tells a replay: the network's
// α and β, fitted to its all-reduce ladder; the gain of two all-reduces in flight; the effective
// cores of co-located ranks; how all-reduces and compute slow each other when they overlap; the
// cost of resuming after a sleep (version 2 profiles). `ddp-sim replay | advise | sweep --machine FILE` take these where
// no flag gives them (prepare_replay), so the flags stay overrides.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ddpsim/sim/calibrate.hpp"
#include "ddpsim/sim/network_ladder.hpp"
#include "ddpsim/trace/machine_profile.hpp"
#include "ddpsim/trace/model.hpp"

namespace ddpsim::sim {

struct MachineSettings {
  // t(S) = a + b·S through the ladder's one-at-a-time medians, least squares on the relative
  // misfit (each size counts alike, from 4 KiB to 64 MiB), turned into α and β by the shape's
  // formula at the profile's world size. Its `fitted_to` names the file.
  Calibration calibration;
  // The ladder itself, timing each all-reduce where the network is the profile's and the line
  // misses the ladder (Note [the ladder as the network] in docs/model.md).
  NetworkLadder ladder;
  // --allreduces-in-flight 2=G: the profile's in-flight gain when it timed 2 at once. The
  // replay takes it only with a network fitted to the trace (with_machine in prepared_replay).
  std::optional<double> in_flight_gain;
  // --effective-cores K=C: K the ranks per host, when the profile's ranks shared one host.
  std::map<int, double> effective_cores;
  // --overlap-bandwidth-fraction: the bandwidth term's share of the overlap's all-reduce alone
  // over the same while compute runs, (alone − a) / (busy − a) with a the ladder line's
  // intercept, in (0, 1]. Unset for a version 1 profile.
  std::optional<double> overlap_bandwidth_fraction;
  // --compute-fraction-during-allreduce: the profile's overlap.compute_fraction.
  std::optional<double> compute_fraction_during_allreduce;
  // --sleep-resume-cost: the profile's sleep.resume_cost_s.
  std::optional<double> sleep_resume_cost_s;
};

// Throws RequestError (prepared_replay.hpp) naming `file` when the ladder gives no line (a time
// that does not grow with size).
MachineSettings machine_settings(const trace::MachineProfile& profile, AllreduceAlgorithm shape,
                                 const std::string& file);

// Does `profile` describe the machine `trace` ran on? RequestError naming `file` and the
// mismatch where it cannot (another backend; another number of hosts); the returned warnings
// name what it can only approximate (another world size: the ring's factors differ; another
// device).
std::vector<std::string> check_machine_matches(const trace::MachineProfile& profile, const trace::Trace& trace,
                                               const std::string& file);

// When the replay takes its network from the profile: a warning where the trace's own
// all-reduces that ran alone after backward (at least kMinAloneAllreduces, over its complete
// iterations but warm-up) took, in median, less than kSlowProfileRatio of the ladder's time at
// their sizes: the profile was timed while the machine was slower than during the job, and a
// what-if on its network comes out slow. nullopt otherwise, or when the world sizes differ (the
// ladder's times are its own world size's). See Note [overlap on the machine] in docs/model.md.
inline constexpr int kMinAloneAllreduces = 3;
inline constexpr double kSlowProfileRatio = 0.9;
std::optional<std::string> slow_profile_warning(const trace::MachineProfile& profile, const trace::Trace& trace,
                                                const std::string& file);

// For a fit from the trace on fewer than 3 message sizes, the clause a what-if's headline ends
// with, naming the command that measures the machine instead, or, where a profile was given
// (`machine_given`) and --calibration kept the trace's fit over it, the flag to drop; "" otherwise.
std::string few_sizes_headline_note(const std::optional<Calibration>& calibration, bool machine_given = false);

}  // namespace ddpsim::sim
