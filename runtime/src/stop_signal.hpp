// SIGTERM as a request, not a death: how a rank learns that the launcher is ending the job.
//
// ddp-launch (like torchrun) sends SIGTERM to every other worker when one fails. A rank that is
// sleeping an injected delay at that moment would otherwise die without a word in its trace. With
// the handler installed, an injected sleep ends early instead; the rank then runs into the dead
// peer the way a real straggler would (its next collective fails with "Connection closed by
// peer") and records that failure. The training loop checks stop_requested() between iterations,
// so a job whose peers are all alive still stops within one iteration.
#pragma once

#include <cstdint>

namespace ddpsim::runtime {

// Installs the SIGTERM handler (idempotent). Async-signal-safe: it only sets a flag.
void install_stop_signal_handler();

// True once SIGTERM arrived.
bool stop_requested();

// Sleeps `duration_ns`, returning early when SIGTERM arrives. Returns the nanoseconds slept.
std::int64_t sleep_unless_stopped(std::int64_t duration_ns);

}  // namespace ddpsim::runtime
