// Writing rank-R.events.csv lines (the reading side, with its checks, is in reader.cpp).
#include "csv.hpp"
#include "ddpsim/trace/io.hpp"

namespace ddpsim::trace {

std::string events_csv_header() {
  return "rank,iteration,event,t_ns,bucket,param,bytes,dur_ns,kind,message";
}

namespace {

// Fields that do not apply are -1 in memory and empty in the file.
void append_optional(std::string& line, std::int64_t value) {
  line += ',';
  if (value >= 0) line += std::to_string(value);
}

}  // namespace

std::string event_to_csv(const Event& event) {
  std::string line;
  line.reserve(64);
  line += std::to_string(event.rank);
  line += ',';
  line += std::to_string(event.iteration);
  line += ',';
  line += to_string(event.type);
  line += ',';
  line += std::to_string(event.t_ns);
  append_optional(line, event.bucket);
  append_optional(line, event.param);
  append_optional(line, event.bytes);
  append_optional(line, event.dur_ns);
  line += ',';
  line += detail::quote_csv_field(event.kind);
  line += ',';
  line += detail::quote_csv_field(event.message);
  return line;
}

}  // namespace ddpsim::trace
