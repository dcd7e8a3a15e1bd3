// Writes a small, plausible 2-rank DDP trace through TraceWriter: an MLP on Fashion-MNIST
// shapes, 6 iterations, the bucket layout rebuilt after iteration 0 as DDP does, per-parameter
// gradient-ready times, and all-reduces that run one after another in bucket order.
//
// The timings come from a toy model (fixed compute times with a little seeded jitter, an
// all-reduce cost of latency + bytes / bandwidth that starts only once every rank is ready),
// so the output is the same on every run and can be committed as traces/examples/sample.
// It stands in until a trace recorded by ddp-train replaces it.
//
// Usage: ddp-trace-generate-sample OUT_DIR
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "ddpsim/trace/io.hpp"

namespace {

using namespace ddpsim::trace;

constexpr int kWorldSize = 2;
constexpr int kIterations = 6;
constexpr double kLatencyNs = 60'000;        // per all-reduce
constexpr double kBytesPerNs = 1.1;          // ~1.1 GB/s, Gloo over loopback
constexpr std::int64_t kStartNs = 5'000'000'000;

// A fixed-seed generator so that the sample is reproducible byte for byte.
class Jitter {
 public:
  explicit Jitter(std::uint64_t seed) : state_(seed) {}
  // A factor in [1 - spread, 1 + spread].
  double factor(double spread) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    const double unit = static_cast<double>(state_ >> 11) / static_cast<double>(1ULL << 53);
    return 1.0 + spread * (2.0 * unit - 1.0);
  }

 private:
  std::uint64_t state_;
};

RunMeta sample_meta(int rank) {
  RunMeta meta;
  meta.source = "measured";
  meta.tool = {"generate_sample", "0.1.0", "sample"};
  meta.start_time_utc = "2026-11-22T04:00:00Z";
  meta.host = "sample-host";
  meta.rank = rank;
  meta.local_rank = rank;
  meta.world_size = kWorldSize;
  meta.backend = "gloo";
  meta.workload_name = "mlp";
  meta.workload = {{"batch_size", "64"}, {"hidden", "256,128"}, {"optimizer", "sgd"},
                   {"threads", "1"}};
  meta.parameters = {{0, "fc1.weight", 784 * 256, "float32"}, {1, "fc1.bias", 256, "float32"},
                     {2, "fc2.weight", 256 * 128, "float32"}, {3, "fc2.bias", 128, "float32"},
                     {4, "fc3.weight", 128 * 10, "float32"},  {5, "fc3.bias", 10, "float32"}};
  meta.bucket_cap_bytes = 512 * 1024;
  meta.first_bucket_cap_bytes = 1024 * 1024;
  // DDP's first layout follows reverse registration order.
  meta.bucket_assignments = {{0, {{5, 4, 3, 2, 1}, {0}}}};
  meta.timeout_s = 1800;
  meta.settings = {{"comm_hook", "allreduce"}};
  return meta;
}

// The layout DDP rebuilds after iteration 0 from the order gradients became ready.
const std::vector<std::vector<int>> kRebuiltLayout = {{5, 4, 3}, {2, 1}, {0}};
// Gradient order (backward runs from the last layer) and when each is ready after
// backward_begin, in ns.
const int kGradOrder[] = {5, 4, 3, 2, 1, 0};
const double kGradReadyNs[] = {90'000, 140'000, 420'000, 560'000, 1'150'000, 1'620'000};

struct RankState {
  std::unique_ptr<TraceWriter> writer;
  Jitter jitter{0};
  std::int64_t now = kStartNs;
};

Event event_of(EventType type, std::int64_t iteration, std::int64_t t_ns) {
  Event event;
  event.type = type;
  event.iteration = iteration;
  event.t_ns = t_ns;
  return event;
}

void run_iteration(std::vector<RankState>& ranks, std::int64_t iteration) {
  const RunMeta& meta = ranks.front().writer->meta();
  const BucketAssignment& layout = *meta.assignment_for(iteration);
  const auto num_buckets = layout.buckets.size();
  // Per rank: when each bucket's last gradient is ready, and when backward began.
  std::vector<std::vector<std::int64_t>> bucket_ready(ranks.size(),
                                                      std::vector<std::int64_t>(num_buckets, 0));
  std::vector<std::int64_t> backward_begin(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankState& rank = ranks[r];
    TraceWriter& w = *rank.writer;
    const double slower = r == 1 ? 1.06 : 1.0;  // rank 1 sits on a busier core
    w.record(EventType::IterationBegin, iteration, rank.now);
    w.record(EventType::ForwardBegin, iteration, rank.now + 2'000);
    const auto forward_end =
        rank.now + 2'000 + static_cast<std::int64_t>(1'250'000 * slower * rank.jitter.factor(0.05));
    w.record(EventType::ForwardEnd, iteration, forward_end);
    backward_begin[r] = forward_end + 3'000;
    w.record(EventType::BackwardBegin, iteration, backward_begin[r]);
    for (int k = 0; k < 6; ++k) {
      Event grad = event_of(EventType::GradReady, iteration,
                            backward_begin[r] + static_cast<std::int64_t>(
                                                    kGradReadyNs[k] * slower * rank.jitter.factor(0.04)));
      grad.param = kGradOrder[k];
      w.record(grad);
      for (std::size_t b = 0; b < num_buckets; ++b) {
        const auto& params = layout.buckets[b];
        if (std::find(params.begin(), params.end(), grad.param) != params.end()) {
          bucket_ready[r][b] = std::max(bucket_ready[r][b], grad.t_ns);
        }
      }
    }
  }
  // All-reduces: bucket b starts on a rank once it is ready there and bucket b-1 is done; it
  // completes once the slowest rank has joined, plus the transfer time.
  std::vector<std::int64_t> comm_free(ranks.size(), 0);
  for (std::size_t b = 0; b < num_buckets; ++b) {
    const std::int64_t bytes = meta.bucket_bytes(layout, static_cast<int>(b));
    std::int64_t everyone_started = 0;
    std::vector<std::int64_t> start(ranks.size());
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      Event ready = event_of(EventType::BucketReady, iteration, bucket_ready[r][b] + 1'000);
      ready.bucket = static_cast<int>(b);
      ready.bytes = bytes;
      ranks[r].writer->record(ready);
      start[r] = std::max(ready.t_ns + 4'000, comm_free[r]);
      everyone_started = std::max(everyone_started, start[r]);
    }
    const auto transfer = static_cast<std::int64_t>(
        (kLatencyNs + static_cast<double>(bytes) / kBytesPerNs) * ranks[0].jitter.factor(0.08));
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      Event begin = event_of(EventType::AllreduceBegin, iteration, start[r]);
      begin.bucket = static_cast<int>(b);
      begin.bytes = bytes;
      ranks[r].writer->record(begin);
      Event end = begin;
      end.type = EventType::AllreduceEnd;
      end.t_ns = everyone_started + transfer + static_cast<std::int64_t>(r) * 7'000;
      ranks[r].writer->record(end);
      comm_free[r] = end.t_ns;
    }
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankState& rank = ranks[r];
    TraceWriter& w = *rank.writer;
    const std::int64_t last_grad = backward_begin[r] + static_cast<std::int64_t>(kGradReadyNs[5] * 1.1);
    const std::int64_t backward_end = std::max(comm_free[r], last_grad) + 15'000;
    w.record(EventType::BackwardEnd, iteration, backward_end);
    w.record(EventType::OptimizerBegin, iteration, backward_end + 2'000);
    const auto optimizer_end =
        backward_end + 2'000 + static_cast<std::int64_t>(310'000 * rank.jitter.factor(0.05));
    w.record(EventType::OptimizerEnd, iteration, optimizer_end);
    w.record(EventType::IterationEnd, iteration, optimizer_end + 1'000);
    rank.now = optimizer_end + 40'000;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " OUT_DIR\n";
    return 2;
  }
  try {
    std::vector<RankState> ranks(kWorldSize);
    for (int r = 0; r < kWorldSize; ++r) {
      ranks[r].writer = std::make_unique<TraceWriter>(argv[1], sample_meta(r));
      ranks[r].jitter = Jitter(1000 + static_cast<std::uint64_t>(r));
      ranks[r].now = kStartNs + r * 35'000;  // processes do not start in lockstep
    }
    for (std::int64_t i = 0; i < kIterations; ++i) {
      run_iteration(ranks, i);
      if (i == 0) {
        for (RankState& rank : ranks) rank.writer->set_bucket_assignment(1, kRebuiltLayout);
      }
    }
  } catch (const TraceError& error) {
    std::cerr << error.what() << "\n";
    return 2;
  }
  return 0;
}
