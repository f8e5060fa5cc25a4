// ConcurrencyGate: at most N callers inside at once; the others wait, and
// enter in the order they arrived (first come, first served).
//
// For work that is CPU-bound and short, done on threads of a pool larger than
// the machine's cores (the HTTP listener's): without a gate, 32 listings at
// once share 2 cores by time slices and each takes 16 times as long, the
// unlucky ones longer; through a gate sized to the cores, each runs to its end
// once it enters, and the wait is a queue in arrival order.
//
//   ConcurrencyGate gate(2);
//   {
//     ConcurrencyGate::Pass pass = gate.Enter();  // may wait
//     ...                                         // at most 2 threads here
//   }
//
// Thread-safety: Enter may be called from any thread; a Pass is released on
// destruction, on any thread. The gate must outlive its passes.
#ifndef CHIME_SRC_BASE_CONCURRENCY_GATE_H_
#define CHIME_SRC_BASE_CONCURRENCY_GATE_H_

#include <cstdint>
#include <utility>

#include "absl/synchronization/mutex.h"

namespace chime {

class ConcurrencyGate {
 public:
  // REQUIRES: limit >= 1.
  explicit ConcurrencyGate(int limit) : limit_(limit < 1 ? 1 : limit) {}
  ConcurrencyGate(const ConcurrencyGate&) = delete;
  ConcurrencyGate& operator=(const ConcurrencyGate&) = delete;

  class Pass {
   public:
    Pass(Pass&& other) noexcept : gate_(std::exchange(other.gate_, nullptr)) {}
    Pass& operator=(Pass&&) = delete;
    ~Pass() {
      if (gate_ != nullptr) gate_->Leave();
    }

   private:
    friend class ConcurrencyGate;
    explicit Pass(ConcurrencyGate* gate) : gate_(gate) {}
    ConcurrencyGate* gate_;
  };

  // Waits until fewer than `limit` passes are out and every caller that
  // arrived earlier has entered.
  Pass Enter() {
    absl::MutexLock lock(&mu_);
    // Ticket t enters once t - left_ < limit_: tickets enter in order.
    const int64_t ticket = next_ticket_++;
    const auto may_enter = [&] { return ticket - left_ < limit_; };
    mu_.Await(absl::Condition(&may_enter));
    return Pass(this);
  }

  // Callers inside Enter, waiting their turn (for tests and metrics).
  int64_t waiting() const {
    absl::MutexLock lock(&mu_);
    const int64_t out = next_ticket_ - left_;
    return out > limit_ ? out - limit_ : 0;
  }

 private:
  void Leave() {
    absl::MutexLock lock(&mu_);
    ++left_;
  }

  const int limit_;
  mutable absl::Mutex mu_;
  int64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t left_ ABSL_GUARDED_BY(mu_) = 0;  // passes released so far
};

}  // namespace chime

#endif  // CHIME_SRC_BASE_CONCURRENCY_GATE_H_
