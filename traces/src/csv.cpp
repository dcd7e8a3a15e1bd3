#include "csv.hpp"

namespace ddpsim::trace::detail {

std::string quote_csv_field(std::string_view text) {
  std::string single_line(text);
  for (char& c : single_line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (single_line.find_first_of(",\"") == std::string::npos) return single_line;
  std::string quoted = "\"";
  for (char c : single_line) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

bool split_csv_line(std::string_view line, std::vector<std::string>& fields,
                    std::string& problem) {
  fields.clear();
  std::size_t pos = 0;
  while (true) {
    std::string field;
    if (pos < line.size() && line[pos] == '"') {
      // Quoted field: runs to the first quote that is not doubled.
      ++pos;
      bool closed = false;
      while (pos < line.size()) {
        if (line[pos] == '"') {
          if (pos + 1 < line.size() && line[pos + 1] == '"') {
            field += '"';
            pos += 2;
            continue;
          }
          closed = true;
          ++pos;
          break;
        }
        field += line[pos++];
      }
      if (!closed) {
        problem = "a closing quote in field " + std::to_string(fields.size() + 1);
        return false;
      }
      if (pos < line.size() && line[pos] != ',') {
        problem = "',' after the quoted field " + std::to_string(fields.size() + 1);
        return false;
      }
    } else {
      const std::size_t end = line.find(',', pos);
      const std::size_t stop = end == std::string_view::npos ? line.size() : end;
      field.assign(line.substr(pos, stop - pos));
      pos = stop;
    }
    fields.push_back(std::move(field));
    if (pos >= line.size()) return true;
    ++pos;  // the ','
    if (pos == line.size()) {
      fields.emplace_back();  // a trailing ',' ends with an empty field
      return true;
    }
  }
}

}  // namespace ddpsim::trace::detail
