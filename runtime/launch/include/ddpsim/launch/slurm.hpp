#pragma once
// The compressed lists SLURM writes into its environment variables.
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpsim::launch {

// The first host of a SLURM host list: "node[07-09,12],gpu1" -> "node07",
// "rack[1-2]-n[3-4]" -> "rack1-n3". Zero padding is kept as written. Throws
// std::invalid_argument on an empty list or unbalanced brackets.
std::string first_host_of_nodelist(const std::string& nodelist);

// Tasks per node, expanded: "2(x3),1" -> {2, 2, 2, 1}. Throws std::invalid_argument.
std::vector<int> expand_tasks_per_node(const std::string& tasks_per_node);

}  // namespace ddpsim::launch
