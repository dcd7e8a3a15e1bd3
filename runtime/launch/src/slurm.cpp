#include "ddpsim/launch/slurm.hpp"

#include "parse_int.hpp"

namespace ddpsim::launch {

namespace {
constexpr std::size_t kMaxNodes = 1u << 20;
}  // namespace

std::string first_host_of_nodelist(const std::string& nodelist) {
  // A host list is comma-separated entries, where commas inside brackets separate ranges of
  // one entry: "a[1-3,7],b". The first host is the first entry with every bracket group
  // replaced by the start of its first range.
  std::string host;
  std::size_t i = 0;
  while (i < nodelist.size() && nodelist[i] != ',') {
    if (nodelist[i] == ']') throw std::invalid_argument("host list '" + nodelist + "': unbalanced ']'");
    if (nodelist[i] != '[') {
      host += nodelist[i++];
      continue;
    }
    const std::size_t close = nodelist.find(']', i);
    if (close == std::string::npos) throw std::invalid_argument("host list '" + nodelist + "': unbalanced '['");
    const std::string ranges = nodelist.substr(i + 1, close - i - 1);
    const std::string first_value = ranges.substr(0, ranges.find_first_of(",-"));
    if (first_value.empty()) throw std::invalid_argument("host list '" + nodelist + "': empty range in brackets");
    host += first_value;
    i = close + 1;
  }
  if (host.empty()) throw std::invalid_argument("host list '" + nodelist + "': no host");
  return host;
}

std::vector<int> expand_tasks_per_node(const std::string& tasks_per_node) {
  const auto bad = [&] {
    return std::invalid_argument("'" + tasks_per_node + "': expected counts like 2(x3),1");
  };
  std::vector<int> counts;
  std::size_t start = 0;
  while (start <= tasks_per_node.size()) {
    std::size_t end = tasks_per_node.find(',', start);
    if (end == std::string::npos) end = tasks_per_node.size();
    const std::string item = tasks_per_node.substr(start, end - start);
    int repeat = 1;
    std::string count_text = item;
    const std::size_t paren = item.find('(');
    if (paren != std::string::npos) {
      // "N(xR)": N tasks on each of R nodes.
      if (item.size() < paren + 4 || item.compare(paren, 2, "(x") != 0 || item.back() != ')') throw bad();
      const auto parsed_repeat = detail::parse_int(item.substr(paren + 2, item.size() - paren - 3));
      if (!parsed_repeat || *parsed_repeat <= 0) throw bad();
      repeat = *parsed_repeat;
      count_text = item.substr(0, paren);
    }
    const auto count = detail::parse_int(count_text);
    if (!count || *count <= 0) throw bad();
    // No cluster has a million nodes; the cap keeps a garbled "(x2000000000)" from
    // allocating gigabytes.
    if (counts.size() + static_cast<std::size_t>(repeat) > kMaxNodes) throw bad();
    counts.insert(counts.end(), static_cast<std::size_t>(repeat), *count);
    start = end + 1;
  }
  return counts;
}

}  // namespace ddpsim::launch
