// Naming why a collective failed, from the text the backend put in its exception.
//
// Gloo and NCCL report failures as exception messages, not as types (LibTorch 1.13 throws
// gloo::IoException or c10::Error; 2.x may throw c10::DistBackendError), so the message is the
// only portable evidence. The trace's `failure` event records the kind.
#pragma once

#include <string>

namespace ddpsim::runtime {

enum class FailureKind {
  Timeout,     // a peer did not answer within the process-group timeout
  PeerClosed,  // a peer's connection went away (it crashed or exited)
  Error,       // anything else
};

// "timeout", "peer_closed", "error": the trace format's `kind` values.
const char* to_string(FailureKind kind);

// Classifies an exception message.
FailureKind classify_failure(const std::string& message);

// The first line of a message, trimmed: backend messages carry C++ backtraces after it.
std::string first_line(const std::string& message);

}  // namespace ddpsim::runtime
