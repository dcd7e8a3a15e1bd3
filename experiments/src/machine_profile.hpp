// The sitting's machine profile ([predict] corun_profile, resume_profile): measured in one round
// per repetition, before that repetition's first run, and pooled over the rounds there are into
// the replay flags each cross prediction gets (commands.hpp's ProfileArgs). What a round's file
// holds and how rounds pool: corun_profile.hpp, resume_profile.hpp.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "grid.hpp"
#include "runner.hpp"
#include "spec.hpp"

namespace ddpsim::experiment {

class MachineProfile {
 public:
  MachineProfile(const ExperimentSpec& spec, const Layout& layout, const RunOptions& options)
      : spec_(spec), layout_(layout), bin_dir_(options.bin_dir), corun_script_(options.corun_script),
        resume_script_(options.resume_script), testbed_script_(options.testbed_script) {}

  // The round of repetition `rep`: the co-run profile for each number of ranks, and the resume
  // profile's pair, each whose file is not there yet. Returns what went wrong ("" when nothing
  // did, or nothing was due), nullopt when interrupted. A failed round leaves no file: the
  // predictions pool the rounds there are, and a rerun measures it again before the predictions
  // it serves.
  std::optional<std::string> measure(int rep);
  // --dry-run: the commands measure(rep) would run, each under a "# WHAT, repetition R" line.
  void print_round(int rep, std::ostream& out) const;

  // What a prediction from `baseline` to `point` gets: the resume profile's --sleep-resume-cost,
  // and, when it changes the layout, the co-run profile's --effective-cores. Sets `why` (and
  // returns none) when a profile the spec asks for cannot be had: no round measured, or a file
  // that cannot be read. Writes the pooled profile beside the rounds.
  ProfileArgs args_for(const Point& baseline, const Point& point, std::string& why);

  // The pooled profiles the last prediction was given, in words, by name ("co-run profile",
  // "resume profile"); none before any.
  const std::map<std::string, std::string>& summaries() const { return summaries_; }
  // --dry-run: the flags args_for gives, with PROFILE where the measured value will go.
  ProfileArgs placeholders() const;

 private:
  // One job of a round: `command` writes `json`.
  struct Job {
    Command command;
    std::string json;
    std::string step;  // its log's step name
    std::string what;  // in words, for messages
    double timeout_s = 0;
  };
  // The jobs of repetition `rep`'s round whose file is not there yet, in the order they run:
  // the resume profile's pair (one rank alone, as it is and slowed), then the co-run profile of
  // each number of ranks (alone, then that many at once).
  std::vector<Job> due_jobs(int rep) const;

  // The resume profile's --sleep-resume-cost, pooled over the pairs measured so far; none when
  // the spec has no resume profile.
  std::vector<std::string> resume_args(std::string& why);
  // The co-run profile's --effective-cores for a prediction that changes the layout; none for
  // one that keeps it, or when the spec has no co-run profile.
  std::vector<std::string> corun_args(const Point& baseline, const Point& point, std::string& why);
  // --machine with the sitting's machine profile; none when the spec measures none.
  std::vector<std::string> machine_args(std::string& why) const;

  const ExperimentSpec& spec_;
  const Layout& layout_;
  const std::string& bin_dir_;
  const std::string& corun_script_;
  const std::string& resume_script_;
  const std::string& testbed_script_;
  std::map<std::string, std::string> summaries_;
};

}  // namespace ddpsim::experiment
