#pragma once
// A TCP port that is free right now, found by binding port 0 and asking which port the kernel
// chose (as torchrun does for --master-port 0 / --standalone). Another process may take it
// before the rendezvous binds it; on one machine that window is milliseconds.
namespace ddpsim::launch {

// Throws std::runtime_error when no socket can be bound.
int pick_free_port();

}  // namespace ddpsim::launch
