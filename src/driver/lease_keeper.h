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
// Each renewal also measures how far this process's wall clock is from the
// store's (clock_offset.h). The first time that offset surely exceeds
// `skew.max`, `skew.on_exceeded` is called once, on the keeper's thread; the
// keeper goes on renewing (what to do is the caller's decision).
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
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "chime/clock.h"
#include "chime/store.h"
#include "src/driver/clock_offset.h"

namespace chime::driver {

// What LeaseKeeper does with its clock offset measurements.
struct SkewCheck {
  absl::Duration max = absl::InfiniteDuration();  // infinite: no check
  std::function<void(const ClockOffset&)> on_exceeded;
  // Measured when the lease was granted (Recovered::clock_offset), and the
  // store's time in that grant (Recovered::store_time).
  std::optional<ClockOffset> at_grant;
  absl::Time grant_store_time = absl::InfinitePast();
};

class LeaseKeeper {
 public:
  // `granted_at`: the monotonic time at which the grant was requested (its
  // deadline counts from there).
  // REQUIRES: ttl finite and positive.
  LeaseKeeper(Store& store, Clock& clock, Fence fence, absl::Duration ttl,
              MonoTime granted_at,
              std::function<void(const absl::Status&)> on_lost,
              SkewCheck skew = {});
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
  // The offset measured by the last renewal (or the grant); nothing before
  // a measurement.
  std::optional<ClockOffset> clock_offset() const {
    std::lock_guard<std::mutex> lock(mu_);
    return offset_;
  }
  // The latest the store's clock can read at `now` (this monotonic clock),
  // by its last answer: a renewal sent at s that said the store's time was
  // t proves the store's clock reads at most t + (now - s). InfiniteFuture
  // before any answer that said the store's time.
  absl::Time StoreTimeBound(MonoTime now) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (reading_time_ == absl::InfinitePast()) return absl::InfiniteFuture();
    return reading_time_ + (now - reading_sent_);
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
  // Keeps a renewal's answer (sent at `sent`) and what it measured; calls
  // skew_.on_exceeded the first time the offset exceeds the bound.
  void Measured(const LeaseGrant& grant, MonoTime sent,
                const std::optional<ClockOffset>& offset);

  Store& store_;
  Clock& clock_;
  const Fence fence_;
  const absl::Duration ttl_;
  const absl::Duration margin_;
  const std::function<void(const absl::Status&)> on_lost_;
  const SkewCheck skew_;
  std::atomic<int64_t> valid_until_ns_;
  // The deadline of the renewal in flight (0: none), for Watch.
  std::atomic<int64_t> renewal_deadline_ns_{0};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  bool lost_ = false;  // guarded by mu_: no renewal makes it valid again
  std::optional<ClockOffset> offset_;  // guarded by mu_
  // The last answer that said the store's time, and when it was sent.
  absl::Time reading_time_ = absl::InfinitePast();  // guarded by mu_
  MonoTime reading_sent_;                           // guarded by mu_
  bool skew_reported_ = false;                      // keeper thread only
  std::thread thread_;
  std::thread watchdog_;
};

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_LEASE_KEEPER_H_
