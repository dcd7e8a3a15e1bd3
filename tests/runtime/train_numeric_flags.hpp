// ddp-train's numeric flags and the bad values each must refuse, shared by the in-process table
// (options_test.cpp: every flag with every bad value, against parse_train_options) and the
// binary's (tests/hardening: each flag once, through the real ddp-train, which loads LibTorch
// at start-up and so costs most of a second a row).
#pragma once

#include <string>
#include <vector>

#include "bad_numbers.hpp"

namespace ddpsim::runtime::testing {

struct NumericFlag {
  std::string flag;
  std::vector<std::string> valid;  // the bad values this flag accepts
  bool transformer = false;        // a transformer size: checked on --model transformer
};

inline std::vector<NumericFlag> train_numeric_flags() {
  std::vector<NumericFlag> flags;
  for (const char* flag : {"--iterations", "--batch-size", "--threads", "--width", "--depth", "--dataset-size",
                           "--sync-every", "--lr-step-size", "--eval-batch-size", "--bucket-cap-mb",
                           "--first-bucket-cap-mb", "--timeout", "--inject-inf-at"}) {
    flags.push_back({flag, {}});
  }
  // 1e20 is a float32: a valid (if odd) rate, scale or factor; 1e300 is not.
  for (const char* flag : {"--lr", "--loss-scale-init", "--lr-gamma"}) flags.push_back({flag, {"99999999999999999999"}});
  flags.push_back({"--clip-grad-norm", {"0", "99999999999999999999"}});
  for (const char* flag :
       {"--seed", "--skew-seed", "--checkpoint-every", "--warmup-steps", "--eval-every", "--fail-iteration",
        "--fail-rank"}) {
    flags.push_back({flag, {"0"}});
  }
  for (const char* flag : {"--layers", "--d-model", "--heads", "--seq-len", "--vocab"}) {
    flags.push_back({flag, {}, true});
  }
  return flags;
}

// The bad values of `flag` (those it does not accept).
inline std::vector<std::string> bad_values(const NumericFlag& flag) {
  return test_support::bad_numbers_except(flag.valid);
}

}  // namespace ddpsim::runtime::testing
