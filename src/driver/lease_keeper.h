// LeaseKeeper: keeps a scheduler's store lease alive, and knows, on its own
// monotonic clock, until when the lease is surely still held.
//
// A lease granted with ttl T expires T after the store granted or renewed it
// (by the store's clock: the database's, for PostgresStore). The keeper
// renews it every T/3. A renewal sent at monotonic time s and answered OK
// proves the lease held until at least s + T by the store's clock, so the
// keeper takes s + T - margin as its local deadline: the latest instant at
// which this scheduler may still start an attempt. The margin (T/5 by
// default) covers the two clocks running at different rates for a while.
// When the deadline passes without a successful renewal -- the store is
// unreachable, or answers that another holder has the lease -- the lease is
// lost: Valid() is false from then on, and `on_lost` is called once, on one
// of the keeper's threads. A second thread watches the deadline on the clock
// alone, so that the loss is reported on time even while a renewal hangs in
// the store (a network that drops packets holds libpq's cancel request for as
// long as it lasts; tests/chaos found a node that never left).
//
//   LeaseKeeper keeper(store, clock, fence, absl::Seconds(5), on_lost);
//   keeper.Start();              // renews on its own thread
//   if (keeper.Valid(clock.MonoNow())) StartTheAttempt();
//   keeper.Stop();               // before releasing the lease
//
// Thread-safety: Valid() may be called from any thread; Start and Stop from
// one.
#ifndef CHIME_SRC_DRIVER_LEASE_KEEPER_H_
#define CHIME_SRC_DRIVER_LEASE_KEEPER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "chime/clock.h"
#include "chime/store.h"

namespace chime::driver {

class LeaseKeeper {
 public:
  // `granted_at`: the monotonic time at which the grant was requested (its
  // deadline counts from there).
  // REQUIRES: ttl finite and positive.
  LeaseKeeper(Store& store, Clock& clock, Fence fence, absl::Duration ttl,
              MonoTime granted_at,
              std::function<void(const absl::Status&)> on_lost);
  ~LeaseKeeper() { Stop(); }
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  void Start();
  // Stops renewing (the lease then expires unless released). Idempotent.
  void Stop();

  // Whether the lease is surely held at `now` (see the file comment).
  bool Valid(MonoTime now) const {
    return now.SinceOrigin() <
           absl::Nanoseconds(valid_until_ns_.load(std::memory_order_acquire));
  }
  // From now on Valid() is false (a write was refused as fenced).
  void Invalidate() {
    SetValidUntil(MonoTime::FromSinceOrigin(absl::ZeroDuration()));
  }
  // The local deadline (for logs and tests).
  MonoTime valid_until() const {
    return MonoTime::FromSinceOrigin(
        absl::Nanoseconds(valid_until_ns_.load(std::memory_order_acquire)));
  }

 private:
  void Run();
  // Reports the loss at the deadline, whatever the renewals are doing.
  void Watch();
  // Invalidates the lease and calls on_lost_, the first time only.
  void ReportLost(const absl::Status& why);
  void SetValidUntil(MonoTime t);

  Store& store_;
  Clock& clock_;
  const Fence fence_;
  const absl::Duration ttl_;
  const absl::Duration margin_;
  const std::function<void(const absl::Status&)> on_lost_;
  std::atomic<int64_t> valid_until_ns_;
  // The deadline of the renewal in flight (0: none), for Watch.
  std::atomic<int64_t> renewal_deadline_ns_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  bool lost_ = false;  // guarded by mu_: no renewal makes it valid again
  std::thread thread_;
  std::thread watchdog_;
};

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_LEASE_KEEPER_H_
