// CSV field quoting and line splitting for rank-R.events.csv (internal to the library).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ddpsim::trace::detail {

// A text field as it goes into the file: line breaks become spaces (one event per line), and
// the field is quoted, with '"' doubled, when it holds ',' or '"'.
std::string quote_csv_field(std::string_view text);

// Splits one line (without its newline) into fields, undoing the quoting. Returns false and
// sets `problem` ("a closing quote", …) when the line is not valid CSV.
bool split_csv_line(std::string_view line, std::vector<std::string>& fields,
                    std::string& problem);

}  // namespace ddpsim::trace::detail
