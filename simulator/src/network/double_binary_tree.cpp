// The double binary tree's shape (allreduce.hpp).
#include <algorithm>

#include "ddpsim/sim/allreduce.hpp"

namespace ddpsim::sim {

std::vector<int> binary_tree_parents(int world_size) {
  std::vector<int> parent(static_cast<std::size_t>(std::max(world_size, 0)), -1);
  if (world_size <= 1) return parent;
  int top = 1;
  while (top * 2 < world_size) top *= 2;
  // In the infinite in-order tree, the parent of r (lowest set bit `low`) is the one of
  // r − low and r + low whose lowest set bit is 2·low.
  const auto parent_in_full_tree = [](int r) {
    const int low = r & -r;
    return (r & (2 * low)) != 0 ? r - low : r + low;
  };
  for (int r = 1; r < world_size; ++r) {
    if (r == top) {
      parent[static_cast<std::size_t>(r)] = 0;
      continue;
    }
    int up = parent_in_full_tree(r);
    while (up >= world_size) up = parent_in_full_tree(up);  // skip ranks that do not exist
    parent[static_cast<std::size_t>(r)] = up;
  }
  return parent;
}

std::vector<std::vector<int>> double_binary_tree_neighbours(int world_size) {
  std::vector<std::vector<int>> neighbours(static_cast<std::size_t>(std::max(world_size, 0)));
  const std::vector<int> parents = binary_tree_parents(world_size);
  // The second tree relabels the first: with even W, rank r plays W−1−r (odd ranks, the
  // first tree's leaves, become inner nodes); with odd W mirroring would keep the middle
  // rank inner in both, so rank r plays r+1 instead.
  const auto second = [world_size](int r) {
    return world_size % 2 == 0 ? world_size - 1 - r : (r + 1) % world_size;
  };
  const auto link = [&neighbours](int a, int b) {
    neighbours[static_cast<std::size_t>(a)].push_back(b);
    neighbours[static_cast<std::size_t>(b)].push_back(a);
  };
  for (int r = 0; r < world_size; ++r) {
    const int p = parents[static_cast<std::size_t>(r)];
    if (p < 0) continue;
    link(r, p);
    link(second(r), second(p));
  }
  return neighbours;
}

int double_binary_tree_max_degree(int world_size) {
  std::size_t degree = 0;
  for (const auto& peers : double_binary_tree_neighbours(world_size)) degree = std::max(degree, peers.size());
  return static_cast<int>(degree);
}

}  // namespace ddpsim::sim
