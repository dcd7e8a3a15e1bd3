#include "ddpsim/trace/summary.hpp"
namespace ddpsim::trace {
std::string to_chrome_trace(const Trace&) { return "{}"; }
}  // namespace ddpsim::trace
