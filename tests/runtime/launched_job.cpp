#include "launched_job.hpp"

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ddpsim/trace/io.hpp"

namespace ddpsim::runtime::testing {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

JobResult launch(const std::string& worker, const TempDir& dir, int nproc,
                 const std::string& tag) {
  const std::string log = dir / (tag + ".log");
  const std::string command = shell_quote(DDP_LAUNCH_PATH) + " --nproc-per-node " +
                              std::to_string(nproc) + " --master-port 0 --grace-period 5 -- " +
                              worker + " > " + shell_quote(log) + " 2>&1";
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  JobResult result;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.output = read_text(log);
  return result;
}

std::string train_command(const TempDir& dir, const std::string& tag,
                          const std::vector<std::string>& extra) {
  std::vector<std::string> args = {DDP_TRAIN_PATH,  "--model",        "mlp",  "--width",
                                   "32",            "--depth",        "2",    "--batch-size",
                                   "8",             "--dataset-size", "1000", "--quiet",
                                   "--trace-dir",   dir / tag,        "--init",
                                   "file://" + (dir / (tag + ".store"))};
  args.insert(args.end(), extra.begin(), extra.end());
  std::string command;
  for (const auto& a : args) command += (command.empty() ? "" : " ") + shell_quote(a);
  return command;
}

trace::RankTrace read_rank(const TempDir& dir, const std::string& tag, int rank) {
  return trace::read_rank(dir / (tag + "/" + trace::meta_file_name(rank)),
                          dir / (tag + "/" + trace::events_file_name(rank)));
}

std::vector<const trace::Event*> events_of(const trace::RankTrace& t, trace::EventType type) {
  std::vector<const trace::Event*> found;
  for (const auto& e : t.events) {
    if (e.type == type) found.push_back(&e);
  }
  return found;
}

}  // namespace ddpsim::runtime::testing
