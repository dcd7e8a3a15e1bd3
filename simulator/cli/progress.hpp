// A one-line progress bar on stderr for long commands (Monte Carlo runs, timeout curves,
// sweeps): shown only when stderr is a terminal and only once the work has taken 2 s, so
// short runs and logs stay clean.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace ddpsim::cli {

class Progress {
 public:
  Progress(std::string what, long total)
      : what_(std::move(what)), total_(total), enabled_(::isatty(STDERR_FILENO) == 1) {}
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\n");
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void step() {
    ++done_;
    if (!enabled_) return;
    const double elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed_s < 2.0) return;
    shown_ = true;
    constexpr int kWidth = 30;
    const int filled = total_ > 0 ? static_cast<int>(kWidth * done_ / total_) : 0;
    const double left_s = done_ > 0 ? elapsed_s * static_cast<double>(total_ - done_) / static_cast<double>(done_) : 0;
    std::fprintf(stderr, "\r%s [%s%s] %ld/%ld, %.0f s left ", what_.c_str(), std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, ' ').c_str(), done_, total_, left_s);
    std::fflush(stderr);
  }

 private:
  std::string what_;
  long total_;
  long done_ = 0;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace ddpsim::cli
