// The values every numeric flag's bad-input table tries: 0, a negative, NaN, the infinities, a
// huge and a non-numeric value, and an empty one. A table skips those its flag accepts.
#pragma once

#include <string>
#include <vector>

namespace ddpsim::test_support {

inline const std::vector<std::string> kBadNumbers = {"0",     "-3",  "nan", "inf", "-inf", "99999999999999999999",
                                                     "1e300", "abc", ""};

// kBadNumbers less those in `accepted`, in kBadNumbers' order.
inline std::vector<std::string> bad_numbers_except(const std::vector<std::string>& accepted) {
  std::vector<std::string> values;
  for (const auto& value : kBadNumbers) {
    bool ok = false;
    for (const auto& valid : accepted) ok = ok || valid == value;
    if (!ok) values.push_back(value);
  }
  return values;
}

}  // namespace ddpsim::test_support
