#include "rank_processes.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ddpsim::runtime::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr && *base ? base : "/tmp") + "/ddp-train-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

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

namespace {

// In the child, between fork and exec: only async-signal-safe calls and setenv.
[[noreturn]] void exec_rank(const std::string& program, const std::vector<std::string>& args,
                            int rank, int world_size, int master_port, const std::string& out,
                            const std::string& err) {
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(world_size).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(world_size).c_str(), 1);
  if (master_port > 0) {
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("MASTER_PORT", std::to_string(master_port).c_str(), 1);
  }
  const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out_fd < 0 || err_fd < 0) _exit(127);
  dup2(out_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(program.c_str(), argv.data());
  _exit(127);
}

}  // namespace

std::vector<RankResult> run_ranks(const std::string& program, const std::vector<std::string>& args,
                                  int world_size, int master_port, const std::string& scratch_dir,
                                  std::chrono::seconds deadline) {
  std::vector<pid_t> pids;
  std::vector<RankResult> results(static_cast<std::size_t>(world_size));
  const auto out_path = [&](int r) { return scratch_dir + "/rank-" + std::to_string(r) + ".out"; };
  const auto err_path = [&](int r) { return scratch_dir + "/rank-" + std::to_string(r) + ".err"; };
  for (int rank = 0; rank < world_size; ++rank) {
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) exec_rank(program, args, rank, world_size, master_port, out_path(rank), err_path(rank));
    pids.push_back(pid);
  }
  const auto give_up_at = std::chrono::steady_clock::now() + deadline;
  std::size_t running = pids.size();
  while (running > 0) {
    for (std::size_t r = 0; r < pids.size(); ++r) {
      if (pids[r] == 0) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        results[r].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        pids[r] = 0;
        --running;
      }
    }
    if (running == 0) break;
    if (std::chrono::steady_clock::now() > give_up_at) {
      for (pid_t& pid : pids) {
        if (pid == 0) continue;
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        pid = 0;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int r = 0; r < world_size; ++r) {
    results[static_cast<std::size_t>(r)].out = read_text(out_path(r));
    results[static_cast<std::size_t>(r)].err = read_text(err_path(r));
  }
  return results;
}

}  // namespace ddpsim::runtime::testing
