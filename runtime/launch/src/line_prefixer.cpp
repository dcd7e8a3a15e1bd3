#include "ddpsim/launch/line_prefixer.hpp"

#include <utility>

namespace ddpsim::launch {

LinePrefixer::LinePrefixer(std::string prefix, std::size_t max_partial)
    : prefix_(std::move(prefix)), max_partial_(max_partial == 0 ? 1 : max_partial) {}

std::string LinePrefixer::feed(std::string_view chunk) {
  std::string out;
  while (!chunk.empty()) {
    const std::size_t newline = chunk.find('\n');
    if (newline == std::string_view::npos) {
      partial_.append(chunk);
      break;
    }
    out += prefix_;
    out += partial_;
    out.append(chunk.substr(0, newline + 1));
    partial_.clear();
    chunk.remove_prefix(newline + 1);
  }
  while (partial_.size() >= max_partial_) {
    out += prefix_;
    out.append(partial_, 0, max_partial_);
    out += '\n';
    partial_.erase(0, max_partial_);
  }
  return out;
}

std::string LinePrefixer::finish() {
  if (partial_.empty()) return "";
  std::string out = prefix_ + partial_ + "\n";
  partial_.clear();
  return out;
}

}  // namespace ddpsim::launch
