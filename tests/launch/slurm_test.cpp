// SLURM's compressed host lists and task counts.
#include "ddpsim/launch/slurm.hpp"

#include <gtest/gtest.h>

namespace {

using ddpsim::launch::expand_tasks_per_node;
using ddpsim::launch::first_host_of_nodelist;

TEST(SlurmNodelist, FirstHost) {
  EXPECT_EQ(first_host_of_nodelist("node1"), "node1");
  EXPECT_EQ(first_host_of_nodelist("a,b,c"), "a");
  EXPECT_EQ(first_host_of_nodelist("node[07-09,12]"), "node07");
  EXPECT_EQ(first_host_of_nodelist("node[3,1-2],gpu[1-4]"), "node3");
  EXPECT_EQ(first_host_of_nodelist("rack[1-2]-n[03-04]"), "rack1-n03");
  EXPECT_EQ(first_host_of_nodelist("x[5]y"), "x5y");
}

TEST(SlurmNodelist, RejectsMalformedLists) {
  EXPECT_THROW(first_host_of_nodelist(""), std::invalid_argument);
  EXPECT_THROW(first_host_of_nodelist(",a"), std::invalid_argument);
  EXPECT_THROW(first_host_of_nodelist("n[1-2"), std::invalid_argument);
  EXPECT_THROW(first_host_of_nodelist("n1-2]"), std::invalid_argument);
  EXPECT_THROW(first_host_of_nodelist("n[]"), std::invalid_argument);
}

TEST(SlurmTasksPerNode, Expands) {
  EXPECT_EQ(expand_tasks_per_node("4"), (std::vector<int>{4}));
  EXPECT_EQ(expand_tasks_per_node("2(x3),1"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(expand_tasks_per_node("1,3(x2)"), (std::vector<int>{1, 3, 3}));
}

TEST(SlurmTasksPerNode, RejectsMalformedCounts) {
  for (const char* bad : {"", "0", "a", "2(x)", "2(x0)", "2(3)", "2(x3", ",", "1,,2", "2(x2000000000)"}) {
    EXPECT_THROW(expand_tasks_per_node(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
