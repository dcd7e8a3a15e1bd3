// The advised values an [advice] experiment acts on, read from `ddp-sim advise --json`
// (simulator/src/advice/). Every field name of advise's JSON the runner depends on is read in
// advice_read.cpp alone, so a change of advise's output is one edit there.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddpsim::experiment {

struct AdvisedValues {
  // Timeout: the advised process-group timeout; the time within which advise says a hung rank
  // is detected ("detection_time_s": the timeout + the longest a rank runs between
  // collectives; advise without it: the replayed time), the replayed time from a rank's hang
  // to its detection, and the rank whose hang that replay assumed.
  std::optional<double> timeout_s;
  std::optional<double> detect_s;
  std::optional<double> replayed_detect_s;
  std::optional<int> hang_rank;
  // Bucket cap: the trace's own cap, the cap advised, whether the advice is "keep yours", and
  // the cap the runs compare with the own one: the advised cap, or with "keep" the fastest
  // other cap searched (what keeping declines). The predicted gain of that cap over the own
  // one, 1 - its median / the own median, and its interval.
  std::optional<double> own_cap_mb;
  std::optional<double> advised_cap_mb;
  std::optional<bool> keep;
  std::optional<double> compared_cap_mb;
  std::optional<double> predicted_gain;
  std::optional<std::pair<double, double>> predicted_gain_interval;
  // Stragglers: the ranks advise names, ascending.
  std::optional<std::vector<int>> named_stragglers;
};

// Throws std::runtime_error naming `source` for text that is not JSON or not an object. A
// section advise left out or marked unavailable leaves its fields unset.
AdvisedValues read_advice(const std::string& json_text, const std::string& source);

}  // namespace ddpsim::experiment
