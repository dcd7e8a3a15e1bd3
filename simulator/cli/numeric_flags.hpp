// Validators for ddp-sim's numeric flags. CLI11's own conversions let too much through: an
// integer that overflows saturates, "-1" becomes 2^64 − 1 for an unsigned seed, and a range
// written with comparisons passes NaN. Each validator reads the whole text itself and names
// what was expected, so every bad number is one line: "--flag: expected …, got TEXT".
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace ddpsim::cli {

// A decimal integer in [min, max] (no exponent, no fraction, no overflow).
CLI::Validator integer_in(std::int64_t min, std::int64_t max);
// An unsigned 64-bit decimal integer (a seed): no sign, no overflow.
CLI::Validator unsigned_integer();
// A finite number in [min, max], or (min, max] when min_open. `expected` is the message's
// wording, e.g. "a finite number > 0".
CLI::Validator finite_number(double min, double max, bool min_open, const std::string& expected);

// The common cases.
CLI::Validator positive_number();      // (0, +max double]
CLI::Validator non_negative_number();  // [0, +max double]
// Bytes/s, at least 1: below that a bucket's transfer outlasts what SimGrid's clock can
// resolve and it reports a deadlock instead of a time.
CLI::Validator bandwidth();
// A bucket cap in MiB whose bytes fit the trace's int64: (0, 8.7e12], or [0, …] with zero_ok.
CLI::Validator bucket_cap_mb(bool zero_ok);

}  // namespace ddpsim::cli
