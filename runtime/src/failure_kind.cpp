#include "ddpsim/runtime/failure_kind.hpp"

#include <algorithm>
#include <initializer_list>
#include <cctype>

namespace ddpsim::runtime {
namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool contains_any(const std::string& haystack, std::initializer_list<const char*> needles) {
  return std::any_of(needles.begin(), needles.end(), [&](const char* needle) {
    return haystack.find(needle) != std::string::npos;
  });
}

}  // namespace

const char* to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::Timeout:
      return "timeout";
    case FailureKind::PeerClosed:
      return "peer_closed";
    case FailureKind::Error:
      return "error";
  }
  return "error";
}

FailureKind classify_failure(const std::string& message) {
  const std::string text = lowercase(message);
  // Seen here: Gloo "Timed out waiting 5000ms for recv operation", TCPStore "Socket Timeout",
  // NCCL watchdog "Watchdog caught collective operation timeout".
  const auto timeout_words = {"timed out", "timeout", "deadline exceeded"};
  // Seen here: Gloo "Connection closed by peer"; a reset or a broken pipe when the peer died
  // mid-send; NCCL "remote process exited".
  const auto closed_words = {
      "closed by peer", "connection reset", "broken pipe", "remote process exited",
      "connection refused", "end of file"};
  // A closed connection is checked first: "closed by peer" messages never mention timeouts,
  // while some timeout messages quote a connection state.
  if (contains_any(text, closed_words)) return FailureKind::PeerClosed;
  if (contains_any(text, timeout_words)) return FailureKind::Timeout;
  return FailureKind::Error;
}

std::string first_line(const std::string& message) {
  std::string line = message.substr(0, message.find('\n'));
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  line.erase(line.begin(), std::find_if(line.begin(), line.end(), not_space));
  line.erase(std::find_if(line.rbegin(), line.rend(), not_space).base(), line.end());
  return line;
}

}  // namespace ddpsim::runtime
