#include "param_dump.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace ddpsim::runtime::testing {

Dump read_dump(const std::string& path) {
  Dump dump;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string kind, name;
    int index = 0;
    std::size_t numel = 0;
    fields >> kind >> index >> name >> numel;
    std::vector<double> values(numel);
    for (double& v : values) fields >> v;
    EXPECT_TRUE(fields) << path << ": short line for " << name;
    dump[{kind, index}] = std::move(values);
  }
  return dump;
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  return worst;
}

}  // namespace ddpsim::runtime::testing
