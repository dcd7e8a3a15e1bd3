// libFuzzer target for the profiler-trace importer: any bytes given as a user's torch.profiler
// file must give either a trace or one TraceError line, never a crash, hang or sanitizer report;
// and what it imports must pass the trace reader's own validation (never a wrong trace).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "ddpsim/trace/io.hpp"
#include "ddpsim/trace/kineto.hpp"
#include "ddpsim/trace/summary.hpp"

namespace {

using namespace ddpsim::trace;

// The importer reads files (as the CLI does); one per process, rewritten for each input and
// removed at exit (libFuzzer calls exit() after -runs or -max_total_time, so that ctest's runs
// leave no file in /tmp; after a crash it stays, and libFuzzer saves the input anyway).
struct InputFile {
  const std::string path = "/tmp/ddpsim-fuzz-kineto-" + std::to_string(::getpid()) + ".json";
  ~InputFile() { std::remove(path.c_str()); }
};

const std::string& input_path() {
  static const InputFile file;
  return file.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(input_path(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  Trace trace;
  try {
    trace = import_kineto({input_path()});
  } catch (const TraceError& error) {
    if (std::strchr(error.what(), '\n') != nullptr) std::abort();  // errors are one line
    return 0;
  }
  // What was imported is what ddp-trace would write: the reader must accept it unchanged.
  for (std::size_t r = 0; r < trace.ranks.size() && r < 2; ++r) {
    const RankTrace& rank = trace.ranks[r];
    std::string csv = events_csv_header() + "\n";
    for (const Event& event : rank.events) csv += event_to_csv(event) + "\n";
    try {
      parse_rank(meta_to_json(rank.meta), csv, "imported.meta.json", "imported.events.csv");
    } catch (const TraceError& error) {
      std::abort();  // the importer wrote a trace its own reader refuses
    }
  }
  const Summary summary = summarize(trace);
  (void)summary_to_table(summary);
  return 0;
}
