#include "rank_processes.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "ddpsim/process/spawn.hpp"
#include "ddpsim/process/wait.hpp"

namespace ddpsim::runtime::testing {

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error("bind to a free port failed");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<RankResult> run_ranks(const std::string& program, const std::vector<std::string>& args,
                                  int world_size, int master_port, const std::string& scratch_dir,
                                  std::chrono::seconds deadline) {
  const auto out_path = [&](int r) { return scratch_dir + "/rank-" + std::to_string(r) + ".out"; };
  const auto err_path = [&](int r) { return scratch_dir + "/rank-" + std::to_string(r) + ".err"; };
  std::vector<pid_t> pids;
  for (int rank = 0; rank < world_size; ++rank) {
    process::Command command;
    command.argv.push_back(program);
    command.argv.insert(command.argv.end(), args.begin(), args.end());
    command.env = {{"RANK", std::to_string(rank)},
                   {"LOCAL_RANK", std::to_string(rank)},
                   {"WORLD_SIZE", std::to_string(world_size)},
                   {"LOCAL_WORLD_SIZE", std::to_string(world_size)}};
    if (master_port > 0) {
      command.env["MASTER_ADDR"] = "127.0.0.1";
      command.env["MASTER_PORT"] = std::to_string(master_port);
    }
    std::filesystem::remove(out_path(rank));  // each run's output alone, not appended to the last
    std::filesystem::remove(err_path(rank));
    command.out = process::Output::append_to(out_path(rank));
    command.err = process::Output::append_to(err_path(rank));
    command.own_process_group = true;  // so the deadline stops what a rank started, too
    pids.push_back(process::spawn(command).pid);
  }
  const auto give_up_at = std::chrono::steady_clock::now() + deadline;
  std::vector<RankResult> results(static_cast<std::size_t>(world_size));
  for (std::size_t r = 0; r < pids.size(); ++r) {
    const process::Waited waited = process::wait_until(pids[r], give_up_at);
    if (waited.how == process::Waited::How::kExited && WIFEXITED(waited.wait_status)) {
      results[r].exit_code = WEXITSTATUS(waited.wait_status);
    }
    results[r].out = read_text(out_path(static_cast<int>(r)));
    results[r].err = read_text(err_path(static_cast<int>(r)));
  }
  return results;
}

}  // namespace ddpsim::runtime::testing
