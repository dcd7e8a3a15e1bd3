// How long each bucket's all-reduce took on the network, as opposed to how long each rank sat
// in it: the one definition the summary (algbw, busbw) and the simulator's calibration share.
#pragma once

#include <cstdint>
#include <vector>

#include "ddpsim/trace/model.hpp"
#include "ddpsim/trace/timeline.hpp"

namespace ddpsim::trace {

// One bucket's all-reduce of one iteration as the whole group saw it.
//
// Each rank's own begin → end also counts the time it waited for peers that were not ready
// yet (on Gloo a rank that launches early blocks in the first exchange until its neighbours
// arrive), so it measures the compute skew between ranks as much as the network: on the
// demo's convnet the rank that finishes backward first waits ~10 ms in every all-reduce and
// its peer ~1 ms. The collective can only progress once every rank has started it, so the
// duration seen by the rank that started last is the cleanest measure of the transfer (as
// nccl-tests times a collective that every rank enters together). A rank's start is the later
// of its allreduce_begin and the end of its previous all-reduce: a rank has one communication
// stream, and a collective launched while the previous one runs waits in the queue.
//
// Gloo runs two collectives at once (ProcessGroupGloo's 2 worker threads): a bucket launched
// while another is in flight shares the link with it, and the split between neighbours is then
// arbitrary (equal buckets take from well under to well over their mean); their sum over an
// iteration holds. Calibration therefore falls back to bytes over busy time
// when the per-size fit fails (calibrate.hpp).
struct CollectiveTransfer {
  std::int64_t iteration = 0;
  int bucket = 0;
  std::int64_t bytes = 0;
  double transfer_s = 0;  // end − start on the rank that started last
};

// One per (iteration, bucket) completed on every rank, over the complete iterations ≥ 1
// (iteration 0 when it is the only one), by iteration then bucket. Buckets of 0 bytes (a
// recording without sizes) are left out.
std::vector<CollectiveTransfer> collective_transfers(const Trace& trace);
// The same from every rank's timelines already built (timelines[r]: rank r's), as the summary has.
std::vector<CollectiveTransfer> collective_transfers(const Trace& trace, const std::vector<Timelines>& timelines);

}  // namespace ddpsim::trace
