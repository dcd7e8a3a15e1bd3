// Transfers that share one rate and progress as it changes (paced_transfers.hpp).
#include "engine/paced_transfers.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <limits>
#include <mutex>
#include <utility>

#include "engine/collectives.hpp"

namespace sg4 = simgrid::s4u;

namespace ddpsim::sim {

namespace {
// Work below this is done: the rounding of banking progress at a rate over a time.
constexpr double kDoneS = 1e-12;
}  // namespace

PacedTransfers::PacedTransfers(std::function<double(int)> aggregate_rate)
    : aggregate_rate_(std::move(aggregate_rate)), mutex_(sg4::Mutex::create()), changed_(sg4::ConditionVariable::create()) {}

void PacedTransfers::bank() {
  const double now = sg4::Engine::get_clock();
  const double progress = (now - since_s_) * each_rate_;
  for (auto& [key, transfer] : in_flight_) {
    (void)key;
    transfer->left_s = std::max(0.0, transfer->left_s - progress);
  }
  since_s_ = now;
}

void PacedTransfers::reprice() {
  const int n = in_flight();
  each_rate_ = n > 0 ? aggregate_rate_(n) / n : 0;
  changed_->notify_all();
}

void PacedTransfers::rate_changed() {
  bank();
  reprice();
}

void PacedTransfers::run(std::int64_t key, double work_s, double deadline_s) {
  if (!(work_s > 0)) return;
  std::unique_lock<sg4::Mutex> lock(*mutex_);
  std::shared_ptr<Transfer> transfer;
  if (auto found = in_flight_.find(key); found != in_flight_.end()) {
    transfer = found->second;
  } else {
    bank();
    transfer = std::make_shared<Transfer>();
    transfer->left_s = work_s;
    in_flight_.emplace(key, transfer);
    reprice();
  }
  while (!transfer->done) {
    const double now = sg4::Engine::get_clock();
    double wait_s = each_rate_ > 0 ? transfer->left_s / each_rate_ - (now - since_s_)
                                   : std::numeric_limits<double>::infinity();
    if (deadline_s >= 0) {
      if (now >= deadline_s) throw CollectiveTimeout("the all-reduce did not finish in time");
      wait_s = std::min(wait_s, deadline_s - now);
    }
    if (wait_s > 0) {
      (void)changed_->wait_for(lock, wait_s);
      if (transfer->done) break;
    }
    bank();
    if (transfer->left_s <= kDoneS) {
      transfer->done = true;
      in_flight_.erase(key);
      reprice();
    }
  }
}

}  // namespace ddpsim::sim
