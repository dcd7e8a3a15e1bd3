#include "progress.hpp"

#include <cstdio>

namespace ddpsim::experiment {
namespace {

std::string elapsed_text(std::chrono::steady_clock::duration elapsed) {
  const long seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%ldm%02lds", seconds / 60, seconds % 60);
  return buffer;
}

}  // namespace

Progress::Progress(std::ostream& out, size_t total, bool terminal)
    : out_(out), total_(total), terminal_(terminal) {}

void Progress::draw(const std::string& label) {
  constexpr size_t width = 30;
  const size_t filled = total_ ? completed_ * width / total_ : width;
  const auto elapsed = std::chrono::steady_clock::now() - start_;
  out_ << "\r\033[K[" << std::string(filled, '#') << std::string(width - filled, '.') << "] "
       << completed_ << '/' << total_ << ' ' << elapsed_text(elapsed);
  if (completed_ > 0 && completed_ < total_) {
    // Runs take alike long (same workload), so the mean so far predicts the rest.
    out_ << ", ~" << elapsed_text(elapsed / completed_ * (total_ - completed_)) << " left";
  }
  out_ << ' ' << label << std::flush;
}

void Progress::starting(const std::string& run) {
  if (terminal_) draw(run);
}

void Progress::finished(const std::string& run, const std::string& result) {
  ++completed_;
  if (terminal_) {
    out_ << "\r\033[K" << run << ": " << result << '\n';
    draw("");
  } else {
    out_ << "ddp-experiment: [" << completed_ << '/' << total_ << "] " << run << ": " << result
         << std::endl;
  }
}

void Progress::note(const std::string& what, const std::string& result) {
  if (terminal_) {
    out_ << "\r\033[K" << what << ": " << result << '\n';
    draw("");
  } else {
    out_ << "ddp-experiment: " << what << ": " << result << std::endl;
  }
}

void Progress::done() {
  if (terminal_) out_ << '\n' << std::flush;
}

}  // namespace ddpsim::experiment
